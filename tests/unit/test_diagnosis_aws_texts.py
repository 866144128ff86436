"""Diagnosis from AWS's own texts: quota, capacity, polled series, and no name without its context."""

from __future__ import annotations

import pytest

from workflows.diagnosis.matcher import MIN_CONFIDENCE
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.verdict import diagnose

QUOTA = (
    "An error occurred (ResourceLimitExceeded) when calling the CreateEndpoint operation: The account-level "
    "service limit 'ml.g5.xlarge for endpoint usage' is 0 Instances, with current utilization of 0 Instances "
    "and a request delta of 1 Instances. Please use AWS Service Quotas to request an increase for this quota."
)
CONTAINER_TIMEOUT = (
    "botocore.errorfactory.ModelError: An error occurred (ModelError) when calling the InvokeEndpoint operation: "
    'Received server error (0) from primary with message "Your invocation timed out while waiting for a response '
    "from container primary. Review the latency metrics for each container in Amazon CloudWatch, resolve the "
    'issue, and try again."'
)


def named(text: str, mode: str | None = None):  # type: ignore[no-untyped-def]
    return diagnose(evidence_from_paste(text, origin="pasted", hosting_mode=mode))


def test_a_zero_endpoint_quota_is_its_own_entry_with_the_increase_command_and_the_next_type() -> None:
    # Given CreateEndpoint's ResourceLimitExceeded on a new account
    diagnosis = named(QUOTA)
    # Then it is F39, the quota and type named, the run moving to the next fallback type
    assert (diagnosis.id, diagnosis.action) == ("F39", "next_instance_type")
    assert diagnosis.details["quota"] == "ml.g5.xlarge for endpoint usage"
    assert (diagnosis.details["instance_type"], diagnosis.details["limit"]) == ("ml.g5.xlarge", "0")
    assert (
        "aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code"
        in " ".join(diagnosis.fix.split())
    )
    # And a processing job's quota is the same entry, serverless concurrency too (no type to move to)
    job = named(
        QUOTA.replace("CreateEndpoint", "CreateProcessingJob").replace(
            "endpoint usage", "processing job usage"
        )
    )
    assert (job.id, job.details["usage"]) == ("F39", "processing job")
    serverless = named(
        "ResourceLimitExceeded: The account-level service limit 'Maximum total concurrency that can be allocated "
        "across all serverless endpoints' is 10 Concurrency, with current utilization of 10 Concurrency"
    )
    assert (serverless.id, serverless.action) == ("F39", "fail")


@pytest.mark.parametrize(
    "reason",
    [
        "Unable to provision requested ML compute capacity. Please retry using a different ML instance type.",
        "Unable to provision requested ML compute capacity due to InsufficientInstanceCapacity error.",
        "CapacityError: Unable to provision requested ML compute capacity. Please retry using a different ML instance type.",
        "Unable to provision requested ML compute capacity for the instance types of InstancePools (ml.g6.xlarge, "
        "ml.g5.xlarge). Please retry using different ML instance types in InstancePools or after some time.",
    ],
)
def test_aws_capacity_failure_reason_is_the_capacity_stall_with_its_remedy(reason: str) -> None:
    # Given a failed endpoint's DescribeEndpoint with AWS's capacity FailureReason
    text = f'{{"EndpointName": "nli", "EndpointStatus": "Failed", "FailureReason": "{reason}"}}'
    # Then F06, moving to the next instance type, however AWS phrased it
    diagnosis = named(text)
    assert (diagnosis.id, diagnosis.action) == ("F06", "next_instance_type")
    assert diagnosis.confidence >= 0.9


def test_a_slow_but_healthy_poll_series_is_not_a_stall_and_a_long_frozen_one_is() -> None:
    # Given two polls 4 min apart, Creating with LastModifiedTime frozen, then the same 25 min apart
    def series(minutes: int) -> str:
        poll = (
            '{{"EndpointName": "e", "EndpointStatus": "Creating", "CreationTime": "2026-11-10T09:00:00+00:00", '
            '"LastModifiedTime": "2026-11-10T09:00:01+00:00"}}'
        )
        return f"09:01  {poll.format()}\n09:{1 + minutes:02d}  {poll.format()}\n"

    # Then the short series names nothing and the long one is F06 from the series' own times
    assert named(series(4)).id == "unknown"
    stalled = named(series(25))
    assert (stalled.id, stalled.action) == ("F06", "next_instance_type")
    assert stalled.details["creating_min"] == "26"  # from CreationTime 09:00 to the last poll, 09:26


def test_a_waiter_that_cannot_see_variants_needs_a_longer_creating_before_it_names_a_stall() -> None:
    # Given Terraform still creating after 15 min (no variants shown), and after 40 min
    def waiter(minutes: int) -> str:
        return f"aws_sagemaker_endpoint.nli: Still creating... [{minutes}m0s elapsed]\n"

    # Then 15 min is no stall (a slow start looks the same), 40 min is
    assert named(waiter(15)).id == "unknown"
    assert named(waiter(40)).id == "F06"


def test_a_generic_container_timeout_is_not_blamed_on_an_engine_the_evidence_does_not_show() -> None:
    # Given the generic invocation timeout, alone, on a CPU endpoint, and on an endpoint of unknown engine
    on_cpu = named(CONTAINER_TIMEOUT + "\nendpoint on ml.c6i.xlarge")
    unknown_engine = named(CONTAINER_TIMEOUT)
    # Then TensorRT (F21) and LMI (F18) are not named: below the reporting threshold or ruled out
    assert on_cpu.id == "unknown" and "F21" not in [a.id for a in on_cpu.alternatives]
    assert unknown_engine.id == "unknown"
    assert all(a.confidence < MIN_CONFIDENCE for a in unknown_engine.alternatives)
    # And with the engine in view it is named
    assert named(CONTAINER_TIMEOUT + "\nI1201 03:00:12 tensorrt: building engine for profile 0").id == "F21"


def test_a_constant_prediction_table_names_int8_only_with_quantization_in_view() -> None:
    # Given a prediction table whose second column is one label throughout
    rows = [
        ("a", "entailment"),
        ("b", "contradiction"),
        ("c", "neutral"),
        ("d", "entailment"),
        ("e", "contradiction"),
    ]
    table = "| text | fp32 | {} |\n" + "".join(f"| {t} | {label} | neutral |\n" for t, label in rows)
    # Then with an int8 column it is F29; with another model's column nothing is named
    assert named(table.format("int8")).id == "F29"
    assert named(table.format("model_b")).id == "unknown"


def test_a_serverless_read_timeout_alone_is_unknown_between_a_cold_start_and_a_dying_worker() -> None:
    # Given a serverless endpoint's client read timeout, pasted without the endpoint's log group
    text = 'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/sls/invocations"'
    diagnosis = named(text, "serverless")
    # Then neither is named: a long cold start (F15) and a worker dying for memory (F14) both end so
    assert diagnosis.id == "unknown"
    assert "F15 or its cause F14" in diagnosis.title


def test_a_model_file_cut_short_is_read_from_tritons_onnxruntime_backend_and_from_a_tar_listing() -> None:
    # Given Triton's onnxruntime backend reporting onnxruntime's parse failure, and a listing with a 0-byte model
    triton = (
        "E1201 02:14:56.118773 88 model_lifecycle.cc:654] \"failed to load 'mdeberta' version 1: Internal: onnx "
        'runtime error 7: Load model from /opt/ml/model/mdeberta/1/model.onnx failed:Protobuf parsing failed."'
    )
    listing = "\n".join(
        [
            "$ tar tzvf model.tar.gz",
            "-rw-r--r-- ci/ci       812 2026-12-01 01:58 mdeberta/config.pbtxt",
            "-rw-r--r-- ci/ci         0 2026-12-01 01:58 mdeberta/1/model.onnx",
        ]
    )
    ls_listing = "-rw-r--r-- 1 sagemaker-user users 0 Dec  1 01:58 model.onnx"
    # When each is diagnosed
    # Then each names the truncated artifact; a listing whose model file has a size does not
    assert named(triton).id == "F22"
    assert named(listing).id == "F22"
    assert named(ls_listing).id == "F22"
    assert named(listing.replace("         0 2026", " 448123904 2026")).id == "unknown"


def test_a_pagerduty_incidents_body_is_read_and_a_denied_invocation_is_a_denial() -> None:
    # Given a PagerDuty v3 webhook whose incident body carries the quota error, and a client's denied call
    import json

    webhook = json.dumps(
        {
            "event": {
                "event_type": "incident.triggered",
                "agent": {"type": "service_reference", "summary": "ml-serving-deploys"},
                "data": {
                    "type": "incident",
                    "title": "deploy failed: CreateEndpoint minilm-emb-g5",
                    "body": {"type": "incident_body", "details": QUOTA},
                },
            }
        },
        indent=2,
    )
    denied = (
        "botocore.exceptions.ClientError: An error occurred (AccessDeniedException) when calling the InvokeEndpoint "
        "operation: User: arn:aws:sts::571093842266:assumed-role/batch/Session is not authorized to perform: "
        "sagemaker:InvokeEndpoint on resource: arn:aws:sagemaker:us-east-1:571093842266:endpoint/minilm with an "
        "explicit deny in a permissions boundary"
    )
    # When each is diagnosed
    # Then the body's quota error is named, and the denied InvokeEndpoint is a denial of that action
    assert named(webhook).id == "F39"
    result = named(denied)
    assert (result.id, result.details["action"]) == ("F38", "sagemaker:InvokeEndpoint")
