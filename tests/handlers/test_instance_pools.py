"""Instance pools (F06's first line): the request shapes against botocore's model, the modes that
pool and those that do not, the preflight's refusals, the wait telling a pool still provisioning
from pools exhausted, the diagnosis of the pooled-exhausted case, and figures per served type."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ParamValidationError
from botocore.validate import ParamValidator

from tests.support.hosting import SETTINGS, client, describe_request, request, stubbed
from workflows import clock
from workflows.contracts import Diagnosis, PackResult, PipelineState
from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.verdict import diagnose
from workflows.errors import CapacityStall, EndpointFailed, PreflightBlocked
from workflows.hosting import pools
from workflows.hosting.modes import run_checks
from workflows.preflight.context import PreflightContext
from workflows.remediation.changes import next_instance_type
from workflows.reports.cost import run_cost
from workflows.steps.deploy_endpoint import deploy
from workflows.steps.describe_endpoint import describe

GPU_TYPES = ["ml.g6.xlarge", "ml.g5.xlarge"]
ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"
MODEL, CONFIG = "db-run-1-a1-m0", "db-run-1-a1"


def create_endpoint_config_input() -> Any:
    return client("sagemaker").meta.service_model.operation_model("CreateEndpointConfig").input_shape


def validate(variant: dict[str, Any]) -> None:
    """botocore's own validation of CreateEndpointConfig (raises ParamValidationError)."""
    params = {"EndpointConfigName": CONFIG, "ProductionVariants": [variant]}
    report = ParamValidator().validate(params, create_endpoint_config_input())
    if report.has_errors():
        raise ParamValidationError(report=report.generate_report())


def deployed_variant(
    hosting: dict[str, Any],
    *,
    pack: PackResult | None = None,
    created: list[dict[str, Any]] | None = None,
    stubbed_models: int | None = None,
    **kwargs: Any,
) -> tuple[dict[str, Any], Any]:
    """The one ProductionVariant the deploy step sends (through a Stubber, which validates it).

    Args:
        pack: the packed artifacts deployed (the shared builders' one artifact when None).
        created: receives each CreateModel's parameters.
        stubbed_models: the CreateModel calls expected (default: the mode's, plus one per device artifact).
    """
    req = request(hosting, **kwargs)
    if pack is not None:
        req = req.model_copy(update={"pack": pack})
    sent: dict[str, Any] = {}
    models = len(hosting.get("models") or []) + 1 if hosting.get("mode") != "multi-container" else 1
    with stubbed("sagemaker") as (sagemaker, stub):
        expected = models + len(pack.device_artifacts if pack else [])
        for _ in range(expected if stubbed_models is None else stubbed_models):
            stub.add_response("create_model", {"ModelArn": ARN}, None)
        stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN}, None)
        stub.add_response("create_endpoint", {"EndpointArn": ARN}, None)
        if created is not None:
            sagemaker.meta.events.register(
                "provide-client-params.sagemaker.CreateModel", lambda params, **_: created.append(params)
            )
        sagemaker.meta.events.register(
            "provide-client-params.sagemaker.CreateEndpointConfig",
            lambda params, **_: sent.update(params["ProductionVariants"][0]),
        )
        result = deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    return sent, result


def test_the_fallbacks_go_out_as_instance_pools_in_order_with_a_timeout_from_the_wait() -> None:
    # Given a real-time spec with a GPU type and its fallback, the default capacity: pools
    variant, result = deployed_variant(
        {"instance_type_fallbacks": GPU_TYPES}, wait={"stall_threshold_min": 6, "timeout_min": 60}
    )
    # Then one endpoint config carries both as pools by priority, and no InstanceType
    assert "InstanceType" not in variant
    assert variant["InstancePools"] == [
        {"InstanceType": "ml.g6.xlarge", "Priority": 1},
        {"InstanceType": "ml.g5.xlarge", "Priority": 2},
    ]
    # And each pool gets the stall threshold's time: 2 x 6 min
    assert variant["VariantInstanceProvisionTimeoutInSeconds"] == 720
    assert (result.instance_type, result.instance_pools, result.provision_timeout_s) == (
        "ml.g6.xlarge",
        GPU_TYPES,
        720,
    )
    # And the request validates against botocore's model (the Stubber checked it; so does the validator)
    validate(variant)


def test_botocore_refuses_what_the_preflight_refuses_and_takes_a_model_override() -> None:
    # Given pooled variants built by the pool builder
    base = {"VariantName": "primary", "ModelName": MODEL, "InitialInstanceCount": 1}
    overridden = pools.pooled_variant(
        base, ["ml.g6.xlarge", "ml.c7i.xlarge"], timeout_s=600, model_overrides={"ml.c7i.xlarge": "cpu-model"}
    )
    # Then a per-pool model (ModelNameOverride) is a valid shape, and it lifts the one-device rule
    validate(overridden)
    assert overridden["InstancePools"][1] == {
        "InstanceType": "ml.c7i.xlarge",
        "Priority": 2,
        "ModelNameOverride": "cpu-model",
    }
    assert pools.variant_problems(overridden) == []
    # And the limits the preflight applies are botocore's model's (its client validates only minimums)
    variant_shape = create_endpoint_config_input().members["ProductionVariants"].member
    pool_list = variant_shape.members["InstancePools"]
    timeout = variant_shape.members["VariantInstanceProvisionTimeoutInSeconds"]
    priority = pool_list.member.members["Priority"]
    assert pool_list.metadata["max"] == 5 == pools.MAX_INSTANCE_POOLS
    assert (priority.metadata["min"], priority.metadata["max"]) == pools.PRIORITY_RANGE
    assert (timeout.metadata["min"], timeout.metadata["max"]) == pools.PROVISION_TIMEOUT_RANGE
    assert pool_list.member.required_members == ["InstanceType", "Priority"]
    # And six pools, a priority of 6, a timeout of 299 s are refused by the preflight; botocore
    # itself refuses the one under its minimum
    six = pools.pooled_variant(base, [f"ml.c6i.{s}" for s in ("large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge")], timeout_s=600)  # fmt: skip
    bad_priority = {**overridden, "InstancePools": [{"InstanceType": "ml.g6.xlarge", "Priority": 6}]}
    short = {**overridden, "VariantInstanceProvisionTimeoutInSeconds": 299}
    for variant, problem in [(six, "at most 5"), (bad_priority, "1-5"), (short, "outside 300-3600")]:
        assert any(problem in text for text in pools.variant_problems(variant))
    with pytest.raises(ParamValidationError, match="VariantInstanceProvisionTimeoutInSeconds"):
        validate(short)


def test_recreate_one_type_and_modes_without_pools_keep_instance_type() -> None:
    # Given the opt-out, and a multi-container spec (pools are documented for single models and components)
    recreate, _ = deployed_variant({"instance_type_fallbacks": GPU_TYPES, "capacity": "recreate"})
    co_hosted, result = deployed_variant(
        {
            "mode": "multi-container",
            "models": [{"name": "other"}],
            "instance_type_fallbacks": ["ml.c6i.xlarge", "ml.c6i.2xlarge"],
        }
    )
    # Then each sends one InstanceType and no pools
    for variant, expected in [(recreate, "ml.g6.xlarge"), (co_hosted, "ml.c6i.xlarge")]:
        assert variant["InstanceType"] == expected
        assert "InstancePools" not in variant
    assert result.instance_pools == []


def test_after_the_pools_are_exhausted_the_next_attempt_pools_the_types_after_the_leader() -> None:
    # Given three GPU types and a pooled first attempt that stalled (F06)
    hosting = {"instance_type_fallbacks": [*GPU_TYPES, "ml.g4dn.xlarge"]}
    first = request(hosting)
    state = PipelineState(run_id="run-1", spec=first.spec, attempt=first.attempt)
    step = next_instance_type(state, Diagnosis(id="F06", title="", evidence=[], action="next_instance_type", confidence=1))  # fmt: skip
    # When the remediation's attempt deploys
    variant, result = deployed_variant(hosting, attempt=2, index=step.instance_type_index)
    # Then it pools the types after the first, priority 1 the second type
    assert [p["InstanceType"] for p in variant["InstancePools"]] == ["ml.g5.xlarge", "ml.g4dn.xlarge"]
    # And with one type left, that attempt is one InstanceType (recreate on the last type)
    last, _ = deployed_variant(hosting, attempt=3, index=2)
    assert last["InstanceType"] == "ml.g4dn.xlarge" and "InstancePools" not in last


def test_cpu_and_gpu_types_in_pools_that_cannot_carry_a_second_model_are_refused() -> None:
    # Given fallbacks that span CPU and GPU in the inference-component mode (its variant names no
    # model, so a pool's ModelNameOverride has nothing to replace)
    hosting = {"mode": "inference-component", "instance_type_fallbacks": ["ml.g6.xlarge", "ml.c7i.xlarge"]}
    req = request(hosting)
    # When the preflight runs, Then the pools block with the fixes: the real-time mode, or recreate
    [finding] = [f for f in run_checks(PreflightContext(req.spec)).findings if f.id == "F06"]
    assert finding.severity == "blocking"
    assert "span devices (gpu, cpu)" in finding.message
    assert "hosting.mode: realtime" in finding.fix and "capacity: recreate" in finding.fix
    # And a real-time deploy without the CPU artifact refuses before any SageMaker call
    realtime = request({"instance_type_fallbacks": ["ml.g6.xlarge", "ml.c7i.xlarge"]})
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("create_model", {"ModelArn": ARN}, None)
        with pytest.raises(PreflightBlocked, match="span devices"):
            deploy(realtime, sagemaker=sagemaker, settings=SETTINGS)
    # And with capacity: recreate the same list passes the pools check
    recreate = request({**hosting, "capacity": "recreate"})
    assert not [f for f in run_checks(PreflightContext(recreate.spec)).findings if f.id == "F06"]


def test_the_provision_timeout_stays_in_sagemaker_range_and_within_the_wait() -> None:
    spec = request({}).spec
    wait = spec.wait.model_copy(update={"stall_threshold_min": 1, "timeout_min": 20})
    assert pools.provision_timeout_s(wait, pools=2, startup_timeout_s=600) == 300
    wait = spec.wait.model_copy(update={"stall_threshold_min": 30, "timeout_min": 120})
    assert pools.provision_timeout_s(wait, pools=5, startup_timeout_s=600) == 3600
    wait = spec.wait.model_copy(update={"stall_threshold_min": 10, "timeout_min": 30})
    assert pools.provision_timeout_s(wait, pools=3, startup_timeout_s=600) == 1200


def pooled_description(created: Any, counts: list[int], status: str = "Creating") -> dict[str, Any]:
    described: dict[str, Any] = {
        "EndpointName": "db-run-1-a1",
        "EndpointArn": ARN,
        "EndpointStatus": status,
        "CreationTime": created,
        "LastModifiedTime": created + timedelta(seconds=1),
        "PendingDeploymentSummary": {
            "EndpointConfigName": CONFIG,
            "ProductionVariants": [
                {
                    "VariantName": "primary",
                    "CurrentInstanceCount": sum(counts),
                    "DesiredInstanceCount": 1,
                    "InstancePools": [
                        {"InstanceType": name, "CurrentInstanceCount": count}
                        for name, count in zip(GPU_TYPES, counts, strict=True)
                    ],
                    "VariantStatus": [{"Status": "Creating", "StartTime": created}],
                }
            ],
        },
    }
    if status != "Creating":
        described.pop("PendingDeploymentSummary")
    return described


def poll(description: dict[str, Any], minutes_ago: float) -> Any:
    _, result = deployed_variant({"instance_type_fallbacks": GPU_TYPES}, wait={"stall_threshold_min": 6})
    result = result.model_copy(update={"created_at": clock.now() - timedelta(minutes=minutes_ago)})
    req = describe_request(
        request({"instance_type_fallbacks": GPU_TYPES}, wait={"stall_threshold_min": 6}), result
    )
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("describe_endpoint", description, {"EndpointName": "db-run-1-a1"})
        return describe(req, sagemaker=sagemaker)


def test_a_pool_still_provisioning_is_no_stall_and_exhausted_pools_are_named() -> None:
    # Given a pooled endpoint (720 s provision timeout) Creating, no pool with an instance, for 7 min:
    # past the 6-minute stall threshold but within the pools' timeout
    created = clock.now() - timedelta(minutes=7)
    status = poll(pooled_description(created, [0, 0]), 7)
    # Then SageMaker is still walking the pools: no stall yet, the counts are in the poll
    assert status.status == "Creating"
    assert status.pools_line == "priority 1 ml.g6.xlarge: 0; priority 2 ml.g5.xlarge: 0"
    # When 13 minutes have passed, Then the pools are exhausted: a CapacityStall naming each pool
    created = clock.now() - timedelta(minutes=13)
    with pytest.raises(CapacityStall, match=r"instance pools exhausted.*priority 2 ml\.g5\.xlarge: 0"):
        poll(pooled_description(created, [0, 0]), 13)
    # And a Failed pooled endpoint with no pool's instance says the same
    with pytest.raises(EndpointFailed, match="instance pools exhausted"):
        poll(pooled_description(created, [0, 0], status="Failed"), 13)


def test_the_poll_shows_the_fallback_to_the_second_pool() -> None:
    # Given the first pool out of capacity and the second with its instance
    created = clock.now() - timedelta(minutes=3)
    status = poll(pooled_description(created, [0, 1]), 3)
    # Then the log line says priority 1 fell back and priority 2 holds the instance
    assert status.pools_line == "priority 1 ml.g6.xlarge: 0, falling back; priority 2 ml.g5.xlarge: 1"
    assert status.instance_pools == {"ml.g6.xlarge": 0, "ml.g5.xlarge": 1}


def evidence_of(description: dict[str, Any], minutes: float) -> Evidence:
    config = {
        "ProductionVariants": [
            pools.pooled_variant(
                {"VariantName": "primary", "ModelName": MODEL, "InitialInstanceCount": 1},
                GPU_TYPES,
                timeout_s=720,
            )
        ]
    }
    return Evidence(
        endpoint=description,
        endpoint_config=config,
        observed_at=description["CreationTime"] + timedelta(minutes=minutes),
        stall_threshold_s=360,
        hosting_mode="realtime",
    )


def test_the_diagnosis_names_pools_exhausted_and_not_a_pool_still_provisioning() -> None:
    created = clock.now()
    # Given a pooled endpoint Creating 7 min (within the 720 s timeout): no F06 from the stall facts
    provisioning = diagnose(evidence_of(pooled_description(created, [0, 0]), 7))
    assert provisioning.id == "unknown"
    # And past the timeout, still Creating with no pool's instance, the pools are exhausted
    late = diagnose(evidence_of(pooled_description(created, [0, 0]), 13))
    assert (late.id, late.title) == (
        "F06",
        "instance pools exhausted, no pool's type had capacity within the provision timeout",
    )
    # When it Failed with no pool's instance, Then F06's pooled-exhausted entry is named
    exhausted = diagnose(evidence_of(pooled_description(created, [0, 0], status="Failed"), 30))
    assert (exhausted.id, exhausted.action) == ("F06", "next_instance_type")
    assert "instance pools exhausted" in exhausted.title
    assert "another region" in exhausted.fix


def test_a_mixed_fleet_is_labelled_and_priced_per_type() -> None:
    # Given a pooled run whose benchmark saw ml.g6.xlarge x1 before and ml.g5.xlarge x1 join after
    fleet = pools.fleet({"ml.g6.xlarge": 1, "ml.g5.xlarge": 0}, {"ml.g6.xlarge": 1, "ml.g5.xlarge": 1})
    assert fleet["served"] == ["ml.g5.xlarge", "ml.g6.xlarge"] and fleet["mixed"]
    start = clock.now()
    result = {
        "hosting": {
            "mode": "realtime",
            "instance_type": "ml.g6.xlarge",
            "instance_count": 1,
            "instance_pools": GPU_TYPES,
            "served_instance_types": {"ml.g6.xlarge": 1, "ml.g5.xlarge": 1},
            "mixed_fleet": True,
        },
        "endpoint_lifetime": {"start": start.isoformat(), "end": (start + timedelta(hours=1)).isoformat()},
        "measured_on": {"where": "aws"},
        "measurements": [
            {"batch_size": 1, "sequence_length": 16, "concurrency": 1, "samples_per_s": 100.0, "mean_ms": 10}
        ],
    }
    cost = run_cost(result)
    # Then each type's instance hours are a line at its own price
    items = [line["item"] for line in cost["lines"]]
    assert "endpoint ml.g6.xlarge × 1" in items and "endpoint ml.g5.xlarge × 1" in items
    # And the cost per 1M sums both types' prices and says it is no one type's
    [row] = cost["per_million_inferences"]
    assert "mixed fleet" in row["basis"]


def test_the_result_names_the_type_that_served() -> None:
    from workflows.contracts import EndpointStatus
    from workflows.reports.result import hosting_summary

    # Given a pooled deploy whose wait saw the second pool serve
    _, deployed = deployed_variant({"instance_type_fallbacks": GPU_TYPES})
    spec = request({"instance_type_fallbacks": GPU_TYPES}).spec
    state = PipelineState(
        run_id="run-1",
        spec=spec,
        deploy=deployed,
        endpoint=EndpointStatus(status="InService", instance_pools={"ml.g6.xlarge": 0, "ml.g5.xlarge": 1}),
    )
    # Then the hosting summary names ml.g5.xlarge (what the figures and the cost are of), one type
    summary = hosting_summary(state)
    assert summary["instance_type"] == "ml.g5.xlarge"
    assert (summary["served_instance_types"], summary["mixed_fleet"]) == ({"ml.g5.xlarge": 1}, False)
    assert summary["instance_pools"] == GPU_TYPES


def test_the_run_log_shows_the_pool_fallback_once_when_it_changes() -> None:
    import json

    from workflows.execution.pipeline import Follower

    # Given the history of a wait loop whose polls saw the pools at 0/0, then 0/1 twice
    lines = ["priority 1 ml.g6.xlarge: 0; priority 2 ml.g5.xlarge: 0", *["priority 1 ml.g6.xlarge: 0, falling back; priority 2 ml.g5.xlarge: 1"] * 2]  # fmt: skip
    events = []
    for number, line in enumerate(lines):
        at = clock.now() + timedelta(seconds=number)
        output = json.dumps({"endpoint": {"pools_line": line}})
        events += [
            {"id": 2 * number + 1, "type": "TaskStateEntered", "timestamp": at, "stateEnteredEventDetails": {"name": "DescribeEndpoint"}},
            {"id": 2 * number + 2, "type": "TaskStateExited", "timestamp": at, "stateExitedEventDetails": {"name": "DescribeEndpoint", "output": output}},
        ]  # fmt: skip
    # When the follower turns them into the run's log events
    details = [event.detail for event in Follower().feed(events) if event.kind == "exited"]
    # Then the fallback is shown when the counts change, not on every poll
    assert details == [f"instance pools: {lines[0]}", f"instance pools: {lines[1]}", ""]


def test_the_report_labels_a_mixed_fleet() -> None:
    from workflows.reports.markdown import _summary
    from workflows.reports.result import _fleet_label

    # Given a pooled run's hosting where both types held an instance while it measured
    hosting = {
        "mode": "realtime",
        "instance_type": "ml.g6.xlarge",
        "instance_pools": GPU_TYPES,
        "served_instance_types": {"ml.g6.xlarge": 1, "ml.g5.xlarge": 1},
        "mixed_fleet": True,
    }
    result = {"status": "SUCCEEDED", "schema_version": 1, "hosting": hosting, "fleet": _fleet_label(hosting)}
    result["measured_on"] = {"where": "aws", "instance_type": "ml.g6.xlarge", "label": "measured on AWS"}
    # Then report.md's summary says the figures are a mixture of both types
    [line] = [line for line in _summary(result) if "instance pools" in line]
    assert "MIXED FLEET (ml.g6.xlarge × 1, ml.g5.xlarge × 1)" in line and "not any one type's" in line
