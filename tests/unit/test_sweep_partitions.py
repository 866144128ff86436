"""A sweep that compares whole GPUs with their partitions: its two arms as planned runs, the requests
each arm's deploy sends (checked against botocore's sagemaker model), and the refusals when the sweep
is loaded, in preflight's words."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import botocore.session
import pytest

from tests.conftest import ROOT
from tests.support.shapes import shape_problems
from workflows.errors import SpecInvalid
from workflows.hosting.components import STRATEGY, specification
from workflows.preflight.partitions import check_partitions
from workflows.reports.venue import LOCAL_PARTITIONS, measured_on
from workflows.sweeps.partition_arms import PARTITIONED, WHOLE, arm_of
from workflows.sweeps.plan import PlanRequest, plan_sweep
from workflows.sweeps.spec import load_sweep, parse_sweep

P4D, P5 = "ml.p4d.24xlarge", "ml.p5.48xlarge"
SWEEP: dict[str, Any] = {
    "name": "mig",
    "base": {"model": {"task": "embedding"}, "benchmark": {"batch_sizes": [1, 8], "concurrency": [1, 8]}},
    "partitions": {"instance_type": P4D, "gpu_partition": "mig-1g.5gb"},
}
SAGEMAKER = botocore.session.get_session().get_service_model("sagemaker")


def sweep(**partitions: Any) -> dict[str, Any]:
    return {**SWEEP, "partitions": {**SWEEP["partitions"], **partitions}}


def input_shape(operation: str) -> Any:
    return SAGEMAKER.operation_model(operation).input_shape


def test_the_plan_holds_one_run_per_arm_on_the_same_type() -> None:
    # Given a comparison of whole A100s with seven 1g.5gb partitions each
    plan = plan_sweep(
        PlanRequest(sweep=parse_sweep(SWEEP), execution_name="e1"), now=datetime(2026, 12, 6, tzinfo=UTC)
    )
    # Then the sweep plans two runs: whole GPUs (one copy per GPU), then partitions (one copy per partition)
    whole, parts = (item.pipeline.spec.hosting for item in plan.items)
    assert [arm_of(whole), arm_of(parts)] == [WHOLE, PARTITIONED]
    assert (whole.mode, whole.instance_type_fallbacks, whole.accelerator_devices) == (
        "inference-component",
        [P4D],
        1,
    )
    assert (whole.copies, whole.gpu_partition) == (8, None)
    assert (parts.copies, parts.gpu_partition, parts.partitions_per_gpu) == (56, "mig-1g.5gb", 7)
    # And their keys differ only by the layout, so a later sweep compares each with its own
    assert plan.items[1].key == plan.items[0].key.replace(" · b=", " · 7 x mig-1g.5gb per GPU · b=")
    assert [item.pipeline.run_id[-2:] for item in plan.items] == ["-0", "-1"]


def test_each_arm_sends_requests_botocore_takes() -> None:
    whole, parts = (item.pipeline.spec.hosting for item in plan_sweep(
        PlanRequest(sweep=parse_sweep(sweep(instance_type=P5, gpu_partition="mig-1g.10gb", partitions_per_gpu=3)),
                    execution_name="e2"),
    ).items)  # fmt: skip
    requests = {}
    for name, hosting in (("whole", whole), ("partitions", parts)):
        variant = STRATEGY.variant(hosting, instance_type=P5, models=[])
        config = {
            "EndpointConfigName": f"db-{name}",
            "ProductionVariants": [variant],
            "ExecutionRoleArn": "arn:aws:iam::123456789012:role/sm",
        }
        component = {
            "InferenceComponentName": f"db-{name}-ic0",
            "EndpointName": f"db-{name}",
            "VariantName": variant["VariantName"],
            "Specification": specification(hosting, f"db-{name}-model"),
            "RuntimeConfig": {"CopyCount": hosting.copies},
        }
        # Then every request fits botocore's model
        assert shape_problems(config, input_shape("CreateEndpointConfig")) == []
        assert shape_problems(component, input_shape("CreateInferenceComponent")) == []
        requests[name] = (variant, component)
    # And the whole-GPU arm takes one whole device per copy, with no layout
    variant, component = requests["whole"]
    assert "AcceleratorPartitionLayouts" not in variant
    assert (
        component["Specification"]["ComputeResourceRequirements"]["NumberOfAcceleratorDevicesRequired"] == 1
    )
    assert "AcceleratorPartitionType" not in component["Specification"]["ComputeResourceRequirements"]
    assert component["RuntimeConfig"] == {"CopyCount": 8}
    # And the partitioned arm carves 3 x mig-1g.10gb on each GPU, one copy on each partition
    variant, component = requests["partitions"]
    assert variant["AcceleratorPartitionLayouts"] == [{"AcceleratorPartitionTypes": ["mig-1g.10gb"] * 3}]
    requirements = component["Specification"]["ComputeResourceRequirements"]
    assert (requirements["AcceleratorPartitionType"], requirements["NumberOfAcceleratorDevicesRequired"]) == (
        "mig-1g.10gb",
        1,
    )
    assert component["RuntimeConfig"] == {"CopyCount": 24}


@pytest.mark.parametrize(
    ("partitions", "instance_type", "partition_type", "per_gpu"),
    [
        # A GPU without MIG
        ({"instance_type": "ml.g5.12xlarge"}, "ml.g5.12xlarge", "mig-1g.5gb", None),
        # A type the family does not offer (1g.5gb is an A100 40GB profile, not an H100's)
        ({"instance_type": P5}, P5, "mig-1g.5gb", None),
        # A layout that does not fit one GPU
        ({"gpu_partition": "mig-3g.20gb", "partitions_per_gpu": 3}, P4D, "mig-3g.20gb", 3),
    ],
)
def test_a_comparison_preflight_would_refuse_is_refused_in_its_words(
    partitions: dict[str, Any], instance_type: str, partition_type: str, per_gpu: int | None
) -> None:
    # When the sweep is loaded
    with pytest.raises(SpecInvalid) as refused:
        parse_sweep(sweep(**partitions))
    # Then the error is preflight's finding, naming the sweep's fields and the valid choices
    (finding,) = check_partitions(
        instance_type=instance_type,
        partition_type=partition_type,
        per_gpu=per_gpu,
        instance_count=1,
        copies=1,
        fields="partitions",
    )
    assert refused.value.message == f"partitions: {finding.message}"
    assert refused.value.fix == finding.fix
    assert "partitions." in finding.fix and "hosting." not in finding.message + finding.fix


def test_a_non_mig_type_is_refused_naming_the_types_that_have_partitions() -> None:
    with pytest.raises(SpecInvalid) as refused:
        parse_sweep(sweep(instance_type="ml.g5.12xlarge"))
    assert "ml.g5.12xlarge (NVIDIA A10G) offers no GPU partitions" in refused.value.message
    assert "ml.p4d.* (NVIDIA A100 40GB): mig-1g.5gb" in refused.value.message
    assert "choose a MIG-capable instance type" in (refused.value.fix or "")


def test_the_arms_are_the_hosting_axis_so_the_matrix_may_not_set_one() -> None:
    with pytest.raises(SpecInvalid) as refused:
        parse_sweep({**SWEEP, "matrix": {"instance_types": ["ml.g5.xlarge"]}})
    assert "matrix.hosting and matrix.instance_types cannot be set beside it" in refused.value.message
    assert "base.hosting" in (refused.value.fix or "")


def test_the_judged_batch_size_must_be_measured() -> None:
    with pytest.raises(SpecInvalid) as refused:
        parse_sweep(sweep(batch_size=4))
    assert "partitions.batch_size 4 is not measured by any run" in refused.value.message


def test_the_example_sweep_loads_with_both_arms() -> None:
    loaded = load_sweep(Path(ROOT) / "examples" / "sweep-partitions.yaml")
    assert loaded.partitions is not None
    assert loaded.partitions.instance_type == P4D


def test_a_local_result_with_partitions_says_they_are_copies_on_the_cpu() -> None:
    cpu = {"model": "test CPU", "logical_cpus": 2}
    local = measured_on(
        instance_type=P4D, endpoint_url="http://127.0.0.1:9000", cpu=cpu, gpu_partition="mig-1g.5gb"
    )
    assert local["partitions"] == LOCAL_PARTITIONS
    assert local["label"].endswith(f"({LOCAL_PARTITIONS}: mig-1g.5gb)")
    # On AWS the partitions are real, and nothing is added; locally without partitions, neither
    aws = measured_on(
        instance_type=P4D,
        endpoint_url="https://runtime.sagemaker.us-east-1.amazonaws.com",
        gpu_partition="mig-1g.5gb",
    )
    assert "partitions" not in aws and LOCAL_PARTITIONS not in aws["label"]
    assert "partitions" not in measured_on(instance_type=P4D, endpoint_url="http://127.0.0.1:9000", cpu=cpu)
