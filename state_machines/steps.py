"""The step table: one row per Lambda-backed step (its state, handler, logic, request and result models),
and every function deployed. The definitions name a Task by its state (``resource``); CDK creates one
function per row; the docs' step index (docs/concepts/index.md) is generated from it."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class LambdaFunction:
    """One step: its state, and the handler, logic and models that state's name leads to.

    The handler module and the function placeholder are derived from the state's name, so a reader
    who knows one of them can name the others: ``WarmUpShapes`` -> ``lambdas/warm_up_shapes.py``,
    ``${WarmUpShapesFunctionArn}``, logic in ``workflows/steps/warm_up_shapes.py`` (domain steps such as
    DiagnoseFailure name their module in ``logic``). ``request`` and ``result`` are the pydantic models
    the handler parses and returns, as ``module:Class``.
    """

    state: str
    logic: str
    request: str
    result: str
    description: str
    container: bool = False
    memory_mb: int = 512
    timeout_s: int = 60
    also: tuple[str, ...] = ()
    """Other states of the definitions that run the same function (TeardownAfterFailure, ...)."""

    @property
    def placeholder(self) -> str:
        return f"{self.state}FunctionArn"

    @property
    def module(self) -> str:
        """``WarmUpShapes`` -> ``warm_up_shapes``."""
        return re.sub(r"(?<!^)(?=[A-Z])", "_", self.state).lower()

    @property
    def handler(self) -> str:
        return f"lambdas.{self.module}.handler"


_C = "workflows.contracts:"
_M = "workflows.benchmark.results:"
FUNCTIONS: tuple[LambdaFunction, ...] = (
    LambdaFunction(
        "CheckSpec",
        "workflows.steps.check_spec:check_spec",
        f"{_C}StepRequest",
        f"{_C}PreflightResult",
        "Checks on the spec before any work",
    ),
    # Convert and pack need torch + transformers (~1 GB): a container-image function (10 GB limit).
    LambdaFunction(
        "ConvertToOnnx",
        "workflows.steps.convert_to_onnx:convert",
        f"{_C}StepRequest",
        f"{_C}ConvertResult",
        "Export and verify ONNX",
        container=True,
        memory_mb=10240,
        timeout_s=900,
    ),
    LambdaFunction(
        "PackArtifact",
        "workflows.steps.pack_artifact:pack",
        f"{_C}PackRequest",
        f"{_C}PackResult",
        "Verify and pack model.tar.gz",
        container=True,
        memory_mb=4096,
        timeout_s=900,
    ),
    # Preflight loads the staged ONNX graph (F22) with onnxruntime, whose wheels need glibc 2.28: the
    # zip runtime cannot import it, so it runs in the convert image, like Pack.
    LambdaFunction(
        "RunPreflight",
        "workflows.steps.run_preflight:preflight",
        f"{_C}PreflightRequest",
        f"{_C}PreflightResult",
        "Static checks before deploy",
        container=True,
        memory_mb=4096,
        timeout_s=300,
    ),
    # LMI and Triton deploys copy the run's whole model folder into their staging prefix (server-side
    # S3 copies, multipart above 64 MB): a multi-GB folder is minutes, not seconds, and its size has no
    # bound below the model's, so the function gets Lambda's maximum (900 s), like ReadUploadedSpec.
    LambdaFunction(
        "DeployEndpoint",
        "workflows.steps.deploy_endpoint:deploy",
        f"{_C}DeployRequest",
        f"{_C}DeployResult",
        "Create SageMaker resources",
        timeout_s=900,
    ),
    # A vLLM poll ends with one served-model probe on the runtime client (lambdas/clients.py: 300 s
    # read + 10 s connect, no retry, F15) after its Describe calls: 310 s worst case, plus 50 s margin.
    LambdaFunction(
        "DescribeEndpoint",
        "workflows.steps.describe_endpoint:describe",
        f"{_C}DescribeRequest",
        f"{_C}EndpointStatus",
        "Poll endpoint status",
        timeout_s=360,
    ),
    LambdaFunction(
        "PlaceInferenceComponents",
        "workflows.steps.place_inference_components:place_inference_components",
        f"{_C}DescribeRequest",
        f"{_C}EndpointStatus",
        "Place inference components and their scaling",
    ),
    LambdaFunction(
        "CreateInferenceRouter",
        "workflows.steps.create_inference_router:create_router",
        f"{_C}RouterRequest",
        "workflows.hosting.router_state:RouterResult",
        "Route across Regions: the run's router",
        timeout_s=900,
    ),
    LambdaFunction(
        "WarmUpShapes",
        "workflows.steps.warm_up_shapes:warmup",
        f"{_C}WarmupRequest",
        f"{_M}WarmupResult",
        "Warm every shape",
        memory_mb=1024,
        timeout_s=900,
    ),
    LambdaFunction(
        "PlanBenchmark",
        "workflows.steps.plan_benchmark:plan",
        f"{_C}BenchmarkPlanRequest",
        f"{_C}BenchmarkPlan",
        "Choose the benchmark runner",
    ),
    LambdaFunction(
        "RunBenchmark",
        "workflows.steps.run_benchmark:benchmark",
        f"{_C}BenchmarkRequest",
        f"{_M}BenchmarkResult",
        "Measure every shape",
        memory_mb=1769,
        timeout_s=900,
    ),
    LambdaFunction(
        "StartBenchmarkJob",
        "workflows.steps.start_benchmark_job:start",
        f"{_C}BenchmarkJobRequest",
        f"{_C}BenchmarkJobStatus",
        "Start the benchmark processing job",
        timeout_s=120,
    ),
    LambdaFunction(
        "DescribeBenchmarkJob",
        "workflows.steps.describe_benchmark_job:describe",
        f"{_C}BenchmarkJobRequest",
        f"{_C}BenchmarkJobStatus",
        "Poll the benchmark job",
    ),
    LambdaFunction(
        "CollectBenchmarkResults",
        "workflows.steps.collect_benchmark_results:collect",
        f"{_C}BenchmarkJobRequest",
        f"{_M}BenchmarkResult",
        "Read the benchmark job's figures",
        memory_mb=1024,
        timeout_s=120,
    ),
    LambdaFunction(
        "StopBenchmarkJob",
        "workflows.steps.stop_benchmark_job:stop",
        f"{_C}BenchmarkJobRequest",
        f"{_C}BenchmarkJobStatus",
        "Stop the benchmark job on failure",
    ),
    LambdaFunction(
        "TeardownEndpoint",
        "workflows.steps.teardown_endpoint:teardown",
        f"{_C}PipelineState",
        f"{_C}TeardownResult",
        "Delete run resources",
        timeout_s=300,
        also=("TeardownAfterFailure",),
    ),
    LambdaFunction(
        "DiagnoseFailure",
        "workflows.diagnosis.collect:diagnose_failure",
        f"{_C}PipelineState",
        f"{_C}Diagnosis",
        "Diagnose a failure",
    ),
    LambdaFunction(
        "PlanRemediation",
        "workflows.remediation.plan:plan_remediation",
        f"{_C}PipelineState",
        f"{_C}PipelineState",
        "Bound and plan a remediation",
    ),
    LambdaFunction(
        "RemoveFailedAttempt",
        "workflows.remediation.removal:remove_failed_attempt",
        f"{_C}AttemptRequest",
        f"{_C}DeployAttempt",
        "Delete a failed deploy attempt",
        also=("RemoveFailedAttemptBeforeRepack",),
    ),
    LambdaFunction(
        "WriteReport",
        "workflows.reports.pipeline:report",
        f"{_C}ReportRequest",
        f"{_C}ReportResult",
        "Write result and report",
        memory_mb=1024,
        timeout_s=120,
        also=("WriteFailureReport",),
    ),
    # Benchmark sweep and redeploy pipeline steps.
    LambdaFunction(
        "PlanSweep",
        "workflows.sweeps.plan:plan_sweep",
        "workflows.sweeps.plan:PlanRequest",
        "workflows.sweeps.plan:SweepPlan",
        "Expand a sweep matrix into runs",
    ),
    # The bootstrap takes ~0.46 s per shape on one full vCPU (5,000 samples a side, 2,000
    # resamples); 1,769 MB is where Lambda gives one, and 900 s covers ~1,900 shapes (50 runs x 38).
    LambdaFunction(
        "CompareWithBaseline",
        "workflows.sweeps.report:compare_sweep",
        "workflows.sweeps.report:CompareRequest",
        "workflows.sweeps.report:SweepComparison",
        "Compare a sweep with its baseline",
        memory_mb=1769,
        timeout_s=900,
    ),
    # Server-side copies of a model folder: a 1 GB folder copies in well under a minute; 15 min bounds it.
    LambdaFunction(
        "ReadUploadedSpec",
        "workflows.redeploy.prepare:prepare_redeploy",
        "workflows.redeploy.prepare:PrepareRequest",
        "workflows.redeploy.prepare:RedeployPlan",
        "Read an uploaded spec, snapshot its model",
        timeout_s=900,
    ),
    LambdaFunction(
        "CheckRedeployQueue",
        "workflows.redeploy.prepare:check_queue",
        "workflows.redeploy.prepare:QueueRequest",
        "workflows.redeploy.prepare:QueueDecision",
        "Order redeploys of a model",
    ),
    # Started by triggers, not by a state machine: no definition uses their placeholders.
    LambdaFunction(
        "StartRedeploy",
        "workflows.redeploy.triggers:start_redeploy",
        "workflows.redeploy.triggers:RedeployTrigger",
        "workflows.redeploy.triggers:StartOutcome",
        "Start a redeploy for an S3 upload",
        timeout_s=30,
    ),
    # An aborted or timed-out execution's run, torn down at once (EventBridge; pipeline IAM profile).
    LambdaFunction(
        "TeardownStoppedExecution",
        "workflows.stops.teardown:teardown_stopped",
        "workflows.stops.teardown:ExecutionStatusChange",
        "workflows.stops.teardown:StoppedTeardown",
        "Tear down a stopped execution's run",
        timeout_s=900,
    ),
    LambdaFunction(
        "Janitor",
        "workflows.janitor.cleanup:run_janitor",
        "lambdas.janitor:JanitorRequest",
        "workflows.janitor.leaks:JanitorReport",
        "Delete expired deploybench resources",
        timeout_s=300,
    ),
)
STEPS: dict[str, LambdaFunction] = {row.state: row for row in FUNCTIONS}
"""Every step by its state name."""


def resource(state: str) -> str:
    """The Task ``Resource`` of the step named ``state``: its function's ``${...FunctionArn}`` placeholder.

    Raises:
        KeyError: ``state`` is no row of ``FUNCTIONS`` (a definition may only run a listed step).
    """
    if state not in STEPS:
        raise KeyError(f"no step {state!r} in state_machines.FUNCTIONS; steps: {sorted(STEPS)}")
    return f"${{{STEPS[state].placeholder}}}"
