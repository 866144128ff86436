"""The hosting fields that answer catalogue entries: serverless provisioned concurrency (F15, F16),
the model data download timeout (F07), and capacity reservations (F06). Each request goes through a
Stubber, which validates it against botocore's own shapes, and each has its preflight check."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.stub import ANY

from tests.support.hosting import SETTINGS, request, spec_with, stubbed
from workflows.contracts import PackResult
from workflows.errors import SpecInvalid
from workflows.hosting import components
from workflows.hosting.gate import GateClients, gate
from workflows.hosting.specs import InferenceComponentHosting
from workflows.preflight.context import MB
from workflows.preflight.memory import check_download_timeout, download_timeout_for
from workflows.preflight.reservations import check_reservation
from workflows.steps.deploy_endpoint import deploy

ARN = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-run-1-a1"
PLAN = "arn:aws:sagemaker:us-east-1:123456789012:training-plan/endpoints-g5"
CAPACITY = "arn:aws:sagemaker:us-east-1:123456789012:reserved-capacity/rc-0123"


def sent_variant(hosting: dict[str, Any], *, size_bytes: int = 1) -> dict[str, Any]:
    """The ProductionVariant the deploy step sends for ``hosting`` (the Stubber validates the request)."""
    req = request(hosting)
    req = req.model_copy(update={"pack": PackResult(**{**req.pack.model_dump(), "size_bytes": size_bytes})})
    sent: dict[str, Any] = {}
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("create_model", {"ModelArn": ARN}, None)
        stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN}, None)
        stub.add_response(
            "create_endpoint",
            {"EndpointArn": ARN},
            {"EndpointName": ANY, "EndpointConfigName": ANY, "Tags": ANY},
        )
        sagemaker.meta.events.register(
            "provide-client-params.sagemaker.CreateEndpointConfig",
            lambda params, **_: sent.update(params["ProductionVariants"][0]),
        )
        deploy(req, sagemaker=sagemaker, settings=SETTINGS)
    return sent


# Serverless provisioned concurrency


def test_provisioned_concurrency_goes_out_in_the_serverless_config() -> None:
    # Given a serverless spec that keeps two requests warm
    variant = sent_variant({"mode": "serverless", "max_concurrency": 4, "provisioned_concurrency": 2})
    # Then ServerlessConfig carries it beside memory and the maximum (botocore's shape accepted it)
    assert variant["ServerlessConfig"] == {
        "MemorySizeInMB": 3072,
        "MaxConcurrency": 4,
        "ProvisionedConcurrency": 2,
    }


def test_on_demand_serverless_sends_no_provisioned_concurrency() -> None:
    assert "ProvisionedConcurrency" not in sent_variant({"mode": "serverless"})["ServerlessConfig"]


def test_provisioned_concurrency_above_the_maximum_is_refused_with_the_fix() -> None:
    # When a spec provisions more than it allows at once
    with pytest.raises(SpecInvalid) as refused:
        spec_with("bundled", {"mode": "serverless", "max_concurrency": 2, "provisioned_concurrency": 3})
    # Then it is refused naming both numbers and what to change
    assert "provisioned_concurrency 3 is above max_concurrency 2" in str(refused.value)


# The model data download timeout


@pytest.mark.parametrize(
    ("size_mb", "expected"),
    [(1, 600), (20 * 1024, 1229), (90 * 1024, 3600)],
)
def test_the_download_timeout_is_derived_from_the_packed_artifact(size_mb: int, expected: int) -> None:
    # Given a packed artifact of this size and a spec that leaves the timeout empty
    variant = sent_variant({"mode": "realtime"}, size_bytes=size_mb * MB)
    # Then the variant allows three times its download at 50 MB/s, within 600..3600 s
    assert variant["ModelDataDownloadTimeoutInSeconds"] == expected == download_timeout_for(size_mb)


def test_a_download_timeout_in_the_spec_wins_over_the_derived_one() -> None:
    variant = sent_variant(
        {"mode": "realtime", "model_data_download_timeout_s": 120}, size_bytes=10 * 1024 * MB
    )
    assert variant["ModelDataDownloadTimeoutInSeconds"] == 120


def test_inference_components_carry_the_download_timeout_in_their_startup_parameters() -> None:
    # Given component hosting with the timeout derived at deploy
    hosting = InferenceComponentHosting(mode="inference-component", model_data_download_timeout_s=900)
    # Then each component's StartupParameters carry it, and the model-less variant does not
    assert components.specification(hosting, "m0")["StartupParameters"] == {
        "ContainerStartupHealthCheckTimeoutInSeconds": 600,
        "ModelDataDownloadTimeoutInSeconds": 900,
    }
    variant = components.STRATEGY.variant(hosting, instance_type="ml.c6i.xlarge", models=[])
    assert "ModelDataDownloadTimeoutInSeconds" not in variant


def test_preflight_warns_when_the_artifact_would_outlast_the_longest_download_timeout() -> None:
    # Given a 70 GB artifact (about 4,300 s with the margin) and no timeout set
    found = check_download_timeout(artifact_mb=70 * 1024, timeout_s=None)
    # Then a warning says SageMaker's maximum will not do, and how to shrink the artifact
    assert [f.severity for f in found] == ["warning"]
    assert "3600" in found[0].message and "smaller" in found[0].fix
    # And a timeout set below a smaller artifact's need names the value to raise it to
    low = check_download_timeout(artifact_mb=10 * 1024, timeout_s=300)
    assert "model_data_download_timeout_s to 615" in low[0].fix
    assert check_download_timeout(artifact_mb=90, timeout_s=None) == []


# Capacity reservations


def test_a_capacity_reservation_goes_out_as_capacity_reservations_only() -> None:
    variant = sent_variant(
        {"mode": "realtime", "instance_type_fallbacks": ["ml.g5.xlarge"], "capacity_reservation": PLAN}
    )
    assert variant["CapacityReservationConfig"] == {
        "CapacityReservationPreference": "capacity-reservations-only",
        "MlReservationArn": PLAN,
    }
    assert "InstancePools" not in variant


@pytest.mark.parametrize(
    ("hosting", "says"),
    [
        (
            {"instance_type_fallbacks": ["ml.g5.xlarge", "ml.g6.xlarge"], "capacity_reservation": PLAN},
            "list only the reserved type",
        ),
        (
            {"instance_type_fallbacks": ["ml.g5.xlarge"], "capacity_reservation": "plan-1"},
            "not an ML reservation ARN",
        ),
    ],
)
def test_a_reservation_the_spec_cannot_use_is_refused(hosting: dict[str, Any], says: str) -> None:
    with pytest.raises(SpecInvalid) as refused:
        spec_with("bundled", {"mode": "realtime", **hosting})
    assert says in str(refused.value)


def plan_answer(**changes: Any) -> dict[str, Any]:
    answer: dict[str, Any] = {
        "TrainingPlanArn": PLAN,
        "TrainingPlanName": "endpoints-g5",
        "Status": "Active",
        "TotalInstanceCount": 4,
        "AvailableInstanceCount": 2,
        "InUseInstanceCount": 2,
        "TargetResources": ["endpoint"],
        "ReservedCapacitySummaries": [
            {
                "ReservedCapacityArn": CAPACITY,
                "InstanceType": "ml.g5.xlarge",
                "TotalInstanceCount": 4,
                "Status": "Active",
            }
        ],
    }
    answer.update(changes)
    return answer


def reservation_findings(answer: dict[str, Any] | Exception, *, count: int = 1, arn: str = PLAN) -> Any:
    spec = spec_with(
        "bundled",
        {
            "mode": "realtime",
            "instance_type_fallbacks": ["ml.g5.xlarge"],
            "instance_count": count,
            "capacity_reservation": arn,
        },
    )
    params = {"TrainingPlanName": arn}
    with stubbed("sagemaker") as (sagemaker, stub):
        if isinstance(answer, Exception):
            stub.add_client_error("describe_training_plan", str(answer), "refused", expected_params=params)
        else:
            stub.add_response("describe_training_plan", answer, params)
        return check_reservation(spec, sagemaker)


def test_an_active_training_plan_for_endpoints_with_free_instances_passes() -> None:
    checked = reservation_findings(plan_answer(), count=2)
    assert checked.findings == []
    assert checked.checked == [f"F06 capacity reservation {PLAN}: ml.g5.xlarge x 2 against its training-plan"]


@pytest.mark.parametrize(
    ("answer", "count", "says"),
    [
        (plan_answer(TargetResources=["training-job"]), 1, "not for endpoints"),
        (
            plan_answer(
                ReservedCapacitySummaries=[
                    {
                        "ReservedCapacityArn": CAPACITY,
                        "InstanceType": "ml.p5.48xlarge",
                        "TotalInstanceCount": 1,
                        "Status": "Active",
                    }
                ]
            ),
            1,
            "holds ml.p5.48xlarge",
        ),
        (plan_answer(Status="Expired"), 1, "it is Expired"),
        (plan_answer(), 3, "2 of its 4 instances are free and the endpoint needs 3"),
    ],
)
def test_a_reservation_that_would_launch_nothing_blocks_before_any_spend(
    answer: dict[str, Any], count: int, says: str
) -> None:
    findings = reservation_findings(answer, count=count).findings
    assert [(f.id, f.severity) for f in findings] == [("F06", "blocking")]
    assert says in findings[0].message


def test_a_scheduled_plan_warns_and_a_reserved_capacity_arn_is_refused_as_botocore_refuses_it() -> None:
    scheduled = reservation_findings(plan_answer(Status="Scheduled")).findings
    assert [f.severity for f in scheduled] == ["warning"]
    # botocore's MlReservationArn pattern allows resource types of at most 14 characters
    with pytest.raises(SpecInvalid):
        spec_with(
            "bundled",
            {
                "mode": "realtime",
                "instance_type_fallbacks": ["ml.g5.xlarge"],
                "capacity_reservation": CAPACITY,
            },
        )


def test_an_unknown_reservation_blocks_and_a_refused_read_is_reported_unread() -> None:
    missing = reservation_findings(Exception("ResourceNotFound"))
    assert [f.severity for f in missing.findings] == ["blocking"]
    assert "knows no such reservation" in missing.findings[0].message
    denied = reservation_findings(Exception("AccessDeniedException"))
    assert denied.findings == [] and "not read (AccessDeniedException" in denied.skipped[0]


def test_the_gate_reads_the_reservation_on_aws_and_says_why_not_locally() -> None:
    # Given a spec naming a reservation of another type than it deploys
    spec = spec_with(
        "bundled",
        {"mode": "realtime", "instance_type_fallbacks": ["ml.c6i.xlarge"], "capacity_reservation": PLAN},
    )
    with stubbed("sagemaker") as (sagemaker, stub):
        stub.add_response("describe_training_plan", plan_answer(), {"TrainingPlanName": PLAN})
        result = gate(spec, region="us-east-1", local=False, clients=GateClients(sagemaker=sagemaker))
    # Then preflight and run refuse it alike: one blocking F06 from the gate
    assert [(f.id, f.severity) for f in result.findings] == [("F06", "blocking")]
    # And locally the check is reported skipped, with the reason
    local = gate(spec, region="us-east-1", local=True)
    assert "F06 capacity reservation: not read (the local SageMaker holds no reservations)" in local.skipped


# The cost of provisioned concurrency


def serverless_result(provisioned: int | None) -> dict[str, Any]:
    hosting: dict[str, Any] = {"mode": "serverless", "memory_size_mb": 2048, "max_concurrency": 4}
    if provisioned:
        hosting["provisioned_concurrency"] = provisioned
    return {
        "hosting": hosting,
        "endpoint_lifetime": {"start": "2026-12-03T10:00:00+00:00", "end": "2026-12-03T10:10:00+00:00"},
        "measurements": [
            {
                "batch_size": 1,
                "sequence_length": 16,
                "concurrency": 1,
                "samples_per_s": 50.0,
                "mean_ms": 20.0,
                "requests": 1000,
            },
            {
                "batch_size": 1,
                "sequence_length": 16,
                "concurrency": 4,
                "samples_per_s": 100.0,
                "mean_ms": 40.0,
                "requests": 1000,
            },
        ],
    }


def test_provisioned_concurrency_is_priced_by_its_own_rates_and_unpriced_when_the_table_has_none() -> None:
    from workflows.reports.cost import price_table, run_cost

    # Given the price table, which holds no provisioned-concurrency rate (not transcribed)
    table = price_table()
    cost = run_cost(serverless_result(2), table)
    lines = {line["item"]: line for line in cost["lines"]}
    # Then the held concurrency is its own line: 2 x 2 GB x 600 s, with no price rather than a guess
    held = lines["provisioned concurrency 2 × 2048 MB"]
    assert held["quantity"] == 2400.0 and held["cost"] is None and "no price" in held["note"]
    # And the requests beyond it (half of those at 4 clients) are on-demand compute: 2 GB x 40 ms x 1000 / 2
    assert lines["serverless compute"]["quantity"] == pytest.approx(40.0)
    assert lines["serverless compute, served by provisioned concurrency"]["quantity"] == pytest.approx(80.0)
    assert cost["complete"] is False

    # When the rates are filled in
    filled = {
        **table,
        "sagemaker": {
            **table["sagemaker"],
            "serverless_provisioned_concurrency_gb_second": 1e-6,
            "serverless_provisioned_inference_gb_second": 1e-5,
        },
    }
    priced = run_cost(serverless_result(2), filled)
    one = priced["per_million_inferences"][0]
    # Then 1M at 1 client: 2 GB x 20 ms x 1M at the provisioned rate, plus 2 x 2 GB held for 1M / 50 per s
    assert one["cost_per_million"] == pytest.approx(2 * 0.02 * 1e6 * 1e-5 + 2 * 2 * 20_000 * 1e-6, rel=1e-3)
    # And on demand, the same shape costs memory x latency at the on-demand rate only
    plain = run_cost(serverless_result(None), filled)["per_million_inferences"][0]
    assert plain["cost_per_million"] == pytest.approx(
        2 * 0.02 * 1e6 * table["sagemaker"]["serverless_gb_second"], rel=1e-3
    )
