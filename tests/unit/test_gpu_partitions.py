"""GPU partitions (MIG): the per-family table against botocore's model, and the layout refusals."""

from __future__ import annotations

import re

import botocore.session
import pytest

from workflows.preflight.partitions import (
    PARTITION,
    check_partitions,
    family_types,
    layout_for,
    most_that_fit,
    partition_table,
)

MODEL = botocore.session.get_session().get_service_model("sagemaker")


def test_every_type_in_the_table_is_one_botocore_knows() -> None:
    # Given botocore's MIG profile enum and AcceleratorPartitionType's pattern
    enum = set(MODEL.shape_for("MIGProfileType").enum)
    pattern = re.compile(MODEL.shape_for("AcceleratorPartitionType").metadata["pattern"])
    # Then every type of every family is in both
    listed = {t for row in partition_table()["families"].values() for t in row["types"]}
    assert listed <= enum
    assert all(pattern.fullmatch(t) for t in listed)


@pytest.mark.parametrize(
    ("instance_type", "partition_type", "most"),
    [
        ("ml.p5.48xlarge", "mig-1g.10gb", 7),
        ("ml.p5.48xlarge", "mig-1g.20gb", 4),
        ("ml.p5.48xlarge", "mig-3g.40gb", 2),
        ("ml.p4d.24xlarge", "mig-2g.10gb", 3),
        ("ml.p5e.48xlarge", "mig-7g.141gb", 1),
    ],
)
def test_the_most_that_fit_one_gpu_are_nvidias_instance_counts(
    instance_type: str, partition_type: str, most: int
) -> None:
    assert most_that_fit(instance_type, partition_type) == most
    assert layout_for(instance_type, partition_type, None).types() == [partition_type] * most


def test_a_partitioned_spec_on_a_mig_capable_type_passes() -> None:
    findings = check_partitions(
        instance_type="ml.p5.48xlarge", partition_type="mig-1g.10gb", per_gpu=7, instance_count=1, copies=14
    )
    assert findings == []


def test_a_gpu_without_mig_is_refused_naming_the_families_and_types_that_have_it() -> None:
    (finding,) = check_partitions(
        instance_type="ml.g5.xlarge", partition_type="mig-1g.10gb", per_gpu=None, instance_count=1, copies=1
    )
    assert (finding.id, finding.severity) == (PARTITION, "blocking")
    assert "ml.g5.xlarge (NVIDIA A10G) offers no GPU partitions" in finding.message
    assert "ml.p5.* (NVIDIA H100 80GB): mig-1g.10gb, mig-1g.20gb" in finding.message
    assert "sagemaker-hyperpod-cli" in finding.evidence


def test_a_type_the_family_does_not_offer_is_refused_with_the_familys_valid_types() -> None:
    (finding,) = check_partitions(
        instance_type="ml.p4d.24xlarge",
        partition_type="mig-1g.20gb",
        per_gpu=None,
        instance_count=1,
        copies=1,
    )
    assert "does not offer partition type mig-1g.20gb" in finding.message
    assert ", ".join(family_types("ml.p4d.24xlarge")) in finding.fix
    assert "mig-1g.5gb" in finding.fix


def test_a_layout_that_does_not_fit_one_gpu_is_refused_with_the_most_that_fit() -> None:
    (finding,) = check_partitions(
        instance_type="ml.p5.48xlarge", partition_type="mig-3g.40gb", per_gpu=3, instance_count=1, copies=1
    )
    assert "3 x mig-3g.40gb do not fit one GPU of ml.p5.48xlarge" in finding.message
    assert "9 compute and 12 memory slices of its 7 and 8; at most 2 fit" in finding.message
    assert "partitions_per_gpu to 2 or less" in finding.fix


def test_more_copies_than_partitions_are_refused() -> None:
    (finding,) = check_partitions(
        instance_type="ml.p5.4xlarge", partition_type="mig-3g.40gb", per_gpu=2, instance_count=1, copies=3
    )
    assert "3 component copies need 3 partitions but 1 x ml.p5.4xlarge holds 2" in finding.message
