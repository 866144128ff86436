"""The deploy pipeline: check the spec -> convert -> pack -> preflight -> deploy -> wait -> warm up -> benchmark
-> tear down.

Every Task's failure is caught into ``$.error`` and goes through DiagnoseFailure and
PlanRemediation: a bounded fix loops back (redeploy, repack, warm again, retry), anything else
goes through TeardownAfterFailure before the execution fails, so every path that may have
created a resource reaches a teardown. Polling is Wait + describe + Choice (no ``.sync``): it runs the
same on Step Functions and on the local engine, and a Wait costs nothing while it waits.
"""

from __future__ import annotations

from typing import Any

from state_machines.error_names import retryable_names
from state_machines.steps import resource
from workflows.errors import ResourceBusy

LAMBDA_TRANSIENT = [
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
]

STEP_REQUEST = {"run_id.$": "$.run_id", "spec.$": "$.spec"}


def when(variable: str, value: str, next_state: str) -> dict[str, Any]:
    """A Choice rule: go to ``next_state`` when the string at ``variable`` is ``value``."""
    return {"Variable": variable, "StringEquals": value, "Next": next_state}


def retry_policy() -> list[dict[str, Any]]:
    return [
        {
            "ErrorEquals": LAMBDA_TRANSIENT,
            "IntervalSeconds": 2,
            "MaxAttempts": 6,
            "BackoffRate": 2.0,
            "JitterStrategy": "FULL",
        },
        {
            "ErrorEquals": [n for n in retryable_names() if n != ResourceBusy.__name__],
            "IntervalSeconds": 5,
            "MaxAttempts": 5,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 60,
            "JitterStrategy": "FULL",
        },
    ]


def catch_to(next_state: str, result_path: str | None = "$.error") -> list[dict[str, Any]]:
    """Every error to one target: a named Catch beside ``States.ALL`` with the same target and path
    would change nothing (the diagnosis reads the error's name from ``$.error``)."""
    return [{"ErrorEquals": ["States.ALL"], "ResultPath": result_path, "Next": next_state}]


def task(
    step: str,
    *,
    next_state: str,
    result_path: str,
    parameters: dict[str, Any] | None = None,
    comment: str,
    catch: str = "DiagnoseFailure",
    retry: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "Type": "Task",
        "Comment": comment,
        "Resource": resource(step),
        "ResultPath": result_path,
        "Next": next_state,
        "Retry": retry if retry is not None else retry_policy(),
        "Catch": catch_to(catch),
    }
    if parameters is not None:
        state["Parameters"] = parameters
    return state


def teardown_retry() -> list[dict[str, Any]]:
    # A stalled endpoint cannot be deleted until it leaves Creating (F06: ~50 min): retry for about
    # an hour (60 s doubling, capped at 10 min) before the janitor has to take over.
    return [
        *retry_policy(),
        {
            "ErrorEquals": [ResourceBusy.__name__],
            "IntervalSeconds": 60,
            "MaxAttempts": 9,
            "BackoffRate": 2.0,
            "MaxDelaySeconds": 600,
        },
    ]


def benchmark_states(*, next_state: str) -> dict[str, Any]:
    """Measure in a Lambda (short CPU runs) or in a SageMaker processing job (GPU or long runs).

    The job is started by a Lambda and followed with Wait + describe + Choice: ``.sync``
    integrations do not run on the local engine. Every failure on the job path stops the job
    before the run is diagnosed and torn down.
    """
    job_request = {
        **STEP_REQUEST,
        "deploy.$": "$.deploy",
        "plan.$": "$.benchmark_plan",
        "job.$": "$.benchmark_job",
        "router.$": "$.router",
    }
    return {
        "PlanBenchmark": task(
            "PlanBenchmark",
            parameters={
                **STEP_REQUEST,
                "deploy.$": "$.deploy",
                "warmup.$": "$.warmup",
                "attempt.$": "$.attempt",
            },
            result_path="$.benchmark_plan",
            next_state="ChooseBenchmarkRunner",
            comment="Lambda for short CPU runs; a processing job for GPU, long runs or unfinished warmup.",
        ),
        "ChooseBenchmarkRunner": {
            "Type": "Choice",
            "Choices": [when("$.benchmark_plan.runner", "processing-job", "StartBenchmarkJob")],
            "Default": "RunBenchmark",
        },
        "RunBenchmark": task(
            "RunBenchmark",
            parameters={**STEP_REQUEST, "deploy.$": "$.deploy", "router.$": "$.router"},
            result_path="$.benchmark",
            next_state=next_state,
            comment="Measure every shape until stable, with duration and count floors.",
        ),
        "StartBenchmarkJob": task(
            "StartBenchmarkJob",
            parameters=job_request,
            result_path="$.benchmark_job",
            next_state="WaitForBenchmarkJob",
            comment="Upload the engine and its config; create the benchmark processing job.",
            catch="StopBenchmarkJob",
        ),
        "WaitForBenchmarkJob": {
            "Type": "Wait",
            "SecondsPath": "$.benchmark_job.next_wait_s",
            "Next": "DescribeBenchmarkJob",
        },
        "DescribeBenchmarkJob": task(
            "DescribeBenchmarkJob",
            parameters=job_request,
            result_path="$.benchmark_job",
            next_state="IsBenchmarkJobDone",
            comment="One poll; raises when the job Failed, Stopped or ran past its time.",
            catch="StopBenchmarkJob",
        ),
        "IsBenchmarkJobDone": {
            "Type": "Choice",
            "Choices": [when("$.benchmark_job.status", "Completed", "CollectBenchmarkResults")],
            "Default": "WaitForBenchmarkJob",
        },
        "CollectBenchmarkResults": task(
            "CollectBenchmarkResults",
            parameters=job_request,
            result_path="$.benchmark",
            next_state=next_state,
            comment="Read the job's figures into the execution state.",
            catch="StopBenchmarkJob",
        ),
        "StopBenchmarkJob": {
            "Type": "Task",
            "Comment": "Stop the benchmark job if it still runs, then diagnose the failure.",
            "Resource": resource("StopBenchmarkJob"),
            "Parameters": job_request,
            "ResultPath": "$.benchmark_job",
            "Next": "DiagnoseFailure",
            "Retry": retry_policy(),
            "Catch": catch_to("DiagnoseFailure", result_path=None),
        },
    }


def remediation_states() -> dict[str, Any]:
    """After a diagnosis: plan (bounded), then redeploy, repack, warm again, retry, or fail.

    PlanRemediation rewrites the whole state (``ResultPath: $``): the next attempt, the caught
    error and the failed attempt's results cleared, the decision appended to
    ``attempt.history``. Every loop back passes through it, so every loop is bounded by
    ``spec.remediation`` (a static test checks that no other cycle exists but the polling ones).
    A planning failure keeps the original error and tears down.
    """
    attempt_request = {**STEP_REQUEST, "attempt.$": "$.attempt"}
    return {
        "PlanRemediation": {
            "Type": "Task",
            "Comment": "Check the action's bound (spec.remediation), rewrite the attempt, record it.",
            "Resource": resource("PlanRemediation"),
            "ResultPath": "$",
            "Next": "ChooseRemediation",
            "Retry": retry_policy(),
            "Catch": catch_to("TeardownAfterFailure", result_path=None),
        },
        "ChooseRemediation": {
            "Type": "Choice",
            "Choices": [
                when("$.remediation.route", "redeploy", "RemoveFailedAttempt"),
                when("$.remediation.route", "repack", "RemoveFailedAttemptBeforeRepack"),
                when("$.remediation.route", "warm", "WarmUpShapes"),
                when("$.remediation.route", "retry", "WaitBeforeRetry"),
            ],
            "Default": "TeardownAfterFailure",
        },
        "RemoveFailedAttempt": task(
            "RemoveFailedAttempt",
            parameters=attempt_request,
            result_path="$.attempt",
            next_state="DeployEndpoint",
            comment="Delete the failed attempt's resources; a stalled (Creating) endpoint is left for teardown.",
        ),
        "RemoveFailedAttemptBeforeRepack": task(
            "RemoveFailedAttempt",
            parameters=attempt_request,
            result_path="$.attempt",
            next_state="PackArtifact",
            comment="Delete the failed attempt's resources, then pack with the added requirements.",
        ),
        "WaitBeforeRetry": {
            "Type": "Wait",
            "SecondsPath": "$.remediation.wait_s",
            "Next": "WarmUpShapes",
        },
    }


def definition() -> dict[str, Any]:
    states: dict[str, Any] = {
        "CheckSpec": task(
            "CheckSpec",
            # The whole input, no Parameters: an input without a spec is refused by the step, by name,
            # instead of failing the execution on a JSONPath.
            result_path="$.spec_check",
            next_state="ConvertToOnnx",
            comment="Checks on the spec alone (model source, instance types, spec-only preflight), before any work.",
        ),
        "ConvertToOnnx": task(
            "ConvertToOnnx",
            parameters=STEP_REQUEST,
            result_path="$.convert",
            next_state="PackArtifact",
            comment="Export the model to ONNX, optimise it and check parity with PyTorch.",
        ),
        "PackArtifact": task(
            "PackArtifact",
            parameters={**STEP_REQUEST, "convert.$": "$.convert", "attempt.$": "$.attempt"},
            result_path="$.pack",
            next_state="RunPreflight",
            comment="Verify every file, pack model.tar.gz atomically and upload it.",
        ),
        "RunPreflight": task(
            "RunPreflight",
            parameters={
                **STEP_REQUEST,
                "convert.$": "$.convert",
                "pack.$": "$.pack",
                "spec_check.$": "$.spec_check",
            },
            result_path="$.preflight",
            next_state="DeployEndpoint",
            comment="Static checks from the failure catalogue, before any SageMaker resource exists.",
        ),
        "DeployEndpoint": task(
            "DeployEndpoint",
            parameters={**STEP_REQUEST, "pack.$": "$.pack", "attempt.$": "$.attempt"},
            result_path="$.deploy",
            next_state="DescribeEndpoint",
            comment="Create the hosting mode's resources.",
        ),
        "DescribeEndpoint": task(
            "DescribeEndpoint",
            parameters={**STEP_REQUEST, "deploy.$": "$.deploy", "poll.$": "$.endpoint"},
            result_path="$.endpoint",
            next_state="IsEndpointInService",
            comment="One status poll, creating nothing; raises on Failed, on a capacity stall and past the wait budget.",
        ),
        "IsEndpointInService": {
            "Type": "Choice",
            "Choices": [
                when("$.endpoint.phase", "ready", "WarmUpShapes"),
                when("$.endpoint.phase", "route", "CreateInferenceRouter"),
                when("$.endpoint.phase", "components", "PlaceInferenceComponents"),
            ],
            "Default": "WaitForEndpoint",
        },
        "WaitForEndpoint": {
            "Type": "Wait",
            "SecondsPath": "$.endpoint.next_wait_s",
            "Next": "DescribeEndpoint",
        },
        "CreateInferenceRouter": task(
            "CreateInferenceRouter",
            parameters={**STEP_REQUEST, "deploy.$": "$.deploy", "attempt.$": "$.attempt"},
            result_path="$.router",
            next_state="WarmUpShapes",
            comment="Served from another Region (F06 past the last type): a router in the primary over both.",
        ),
        "PlaceInferenceComponents": task(
            "PlaceInferenceComponents",
            parameters={**STEP_REQUEST, "deploy.$": "$.deploy", "poll.$": "$.endpoint"},
            result_path="$.endpoint",
            next_state="AreInferenceComponentsPlaced",
            comment="Create the run's inference components on the InService endpoint; one poll of their copies.",
        ),
        "AreInferenceComponentsPlaced": {
            "Type": "Choice",
            "Choices": [when("$.endpoint.phase", "ready", "WarmUpShapes")],
            "Default": "WaitForInferenceComponents",
        },
        "WaitForInferenceComponents": {
            "Type": "Wait",
            "SecondsPath": "$.endpoint.next_wait_s",
            "Next": "PlaceInferenceComponents",
        },
        "WarmUpShapes": task(
            "WarmUpShapes",
            parameters={**STEP_REQUEST, "deploy.$": "$.deploy", "router.$": "$.router"},
            result_path="$.warmup",
            next_state="PlanBenchmark",
            comment="Warm every (batch, sequence) shape until its latency is stable.",
        ),
        **benchmark_states(next_state="TeardownEndpoint"),
        "TeardownEndpoint": task(
            "TeardownEndpoint",
            result_path="$.teardown",
            next_state="WriteReport",
            comment="Delete everything the run created (unless keep_endpoint) and verify.",
            retry=teardown_retry(),
        ),
        "WriteReport": task(
            "WriteReport",
            parameters={"state.$": "$", "status": "SUCCEEDED"},
            result_path="$.report",
            next_state="PipelineSucceeded",
            comment="Write result.json and report.md.",
        ),
        "PipelineSucceeded": {"Type": "Succeed"},
        "DiagnoseFailure": {
            "Type": "Task",
            "Comment": "Match the caught error against the failure catalogue.",
            "Resource": resource("DiagnoseFailure"),
            "ResultPath": "$.diagnosis",
            "Next": "PlanRemediation",
            "Retry": retry_policy(),
            "Catch": catch_to("TeardownAfterFailure", result_path=None),
        },
        **remediation_states(),
        "TeardownAfterFailure": {
            "Type": "Task",
            "Comment": "Delete everything the run created, whatever failed.",
            "Resource": resource("TeardownEndpoint"),
            "ResultPath": "$.teardown",
            "Next": "WriteFailureReport",
            "Retry": teardown_retry(),
            "Catch": catch_to("WriteFailureReport", result_path="$.teardown_error"),
        },
        "WriteFailureReport": {
            "Type": "Task",
            "Comment": "Write result.json and report.md for the failed run.",
            "Resource": resource("WriteReport"),
            "Parameters": {"state.$": "$", "status": "FAILED"},
            "ResultPath": "$.report",
            "Next": "PipelineFailed",
            "Retry": retry_policy(),
            "Catch": catch_to("PipelineFailed", result_path=None),
        },
        "PipelineFailed": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"},
    }
    return {
        "Comment": (
            "deploybench deploy pipeline: check the spec, convert, pack, preflight, deploy, wait, warm up, "
            "benchmark, tear down."
        ),
        "StartAt": "CheckSpec",
        "States": states,
    }
