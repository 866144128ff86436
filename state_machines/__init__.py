"""State machine definitions (Amazon States Language), one per state machine.

Each definition is built here once and consumed unchanged by CDK (``definition_substitutions``)
and by the local engine: Lambda ARNs are ``${...FunctionArn}`` placeholders. ``FUNCTIONS`` is
the one table of which handler serves which placeholder, and of every Lambda function deployed
(CDK creates one per row; a row no definition uses is started by a trigger instead).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from state_machines.placeholders import AWS_START_EXECUTION_SYNC as AWS_START_EXECUTION_SYNC
from state_machines.placeholders import START_EXECUTION_SYNC as START_EXECUTION_SYNC
from state_machines.placeholders import state_machine_placeholder as state_machine_placeholder


@dataclass(frozen=True)
class LambdaFunction:
    placeholder: str
    handler: str
    description: str
    container: bool = False
    memory_mb: int = 512
    timeout_s: int = 60


FUNCTIONS: tuple[LambdaFunction, ...] = (
    LambdaFunction(
        "CheckSpecFunctionArn", "lambdas.check_spec.handler", "Checks on the spec before any work"
    ),
    # Convert and pack need torch + transformers (~1 GB): a container-image function (10 GB limit).
    LambdaFunction(
        "ConvertFunctionArn", "lambdas.convert.handler", "Export and verify ONNX", True, 10240, 900
    ),
    LambdaFunction(
        "PackFunctionArn", "lambdas.pack.handler", "Verify and pack model.tar.gz", True, 4096, 900
    ),
    # Preflight loads the staged ONNX graph (F22) with onnxruntime, whose wheels need glibc 2.28: the
    # zip runtime cannot import it, so it runs in the convert image, like Pack.
    LambdaFunction(
        "PreflightFunctionArn", "lambdas.preflight.handler", "Static checks before deploy", True, 4096, 300
    ),
    # LMI and Triton deploys copy the run's whole model folder into their staging prefix (server-side
    # S3 copies, multipart above 64 MB): a multi-GB folder is minutes, not seconds, and its size has no
    # bound below the model's, so the function gets Lambda's maximum (900 s), like PrepareRedeploy.
    LambdaFunction(
        "DeployFunctionArn", "lambdas.deploy.handler", "Create SageMaker resources", timeout_s=900
    ),
    # A vLLM poll ends with one served-model probe on the runtime client (lambdas/clients.py: 300 s
    # read + 10 s connect, no retry, F15) after its Describe calls: 310 s worst case, plus 50 s margin.
    LambdaFunction(
        "DescribeEndpointFunctionArn",
        "lambdas.describe_endpoint.handler",
        "Poll endpoint status",
        timeout_s=360,
    ),
    LambdaFunction(
        "WarmupFunctionArn", "lambdas.warmup.handler", "Warm every shape", memory_mb=1024, timeout_s=900
    ),
    LambdaFunction(
        "BenchmarkFunctionArn",
        "lambdas.benchmark.handler",
        "Measure every shape",
        memory_mb=1769,
        timeout_s=900,
    ),
    LambdaFunction(
        "PlanBenchmarkFunctionArn", "lambdas.plan_benchmark.handler", "Choose the benchmark runner"
    ),
    LambdaFunction(
        "StartBenchmarkJobFunctionArn",
        "lambdas.start_benchmark_job.handler",
        "Start the benchmark processing job",
        timeout_s=120,
    ),
    LambdaFunction(
        "DescribeBenchmarkJobFunctionArn", "lambdas.describe_benchmark_job.handler", "Poll the benchmark job"
    ),
    LambdaFunction(
        "CollectBenchmarkResultsFunctionArn",
        "lambdas.collect_benchmark_results.handler",
        "Read the benchmark job's figures",
        memory_mb=1024,
        timeout_s=120,
    ),
    LambdaFunction(
        "StopBenchmarkJobFunctionArn",
        "lambdas.stop_benchmark_job.handler",
        "Stop the benchmark job on failure",
    ),
    LambdaFunction("TeardownFunctionArn", "lambdas.teardown.handler", "Delete run resources", timeout_s=300),
    LambdaFunction("DiagnoseFunctionArn", "lambdas.diagnose.handler", "Diagnose a failure"),
    LambdaFunction(
        "PlanRemediationFunctionArn", "lambdas.plan_remediation.handler", "Bound and plan a remediation"
    ),
    LambdaFunction(
        "RemoveFailedAttemptFunctionArn",
        "lambdas.remove_failed_attempt.handler",
        "Delete a failed deploy attempt",
    ),
    LambdaFunction(
        "ReportFunctionArn",
        "lambdas.report.handler",
        "Write result and report",
        memory_mb=1024,
        timeout_s=120,
    ),
    # Benchmark sweep and redeploy pipeline steps.
    LambdaFunction("PlanSweepFunctionArn", "lambdas.plan_sweep.handler", "Expand a sweep matrix into runs"),
    # The bootstrap takes ~0.46 s per shape on one full vCPU (5,000 samples a side, 2,000
    # resamples); 1,769 MB is where Lambda gives one, and 900 s covers ~1,900 shapes (50 runs x 38).
    LambdaFunction(
        "CompareSweepFunctionArn",
        "lambdas.compare_sweep.handler",
        "Compare a sweep with its baseline",
        memory_mb=1769,
        timeout_s=900,
    ),
    # Server-side copies of a model folder: a 1 GB folder copies in well under a minute; 15 min bounds it.
    LambdaFunction(
        "PrepareRedeployFunctionArn",
        "lambdas.prepare_redeploy.handler",
        "Read an uploaded spec, snapshot its model",
        timeout_s=900,
    ),
    LambdaFunction(
        "CheckRedeployQueueFunctionArn", "lambdas.check_redeploy_queue.handler", "Order redeploys of a model"
    ),
    # Started by triggers, not by a state machine: no definition uses their placeholders.
    LambdaFunction(
        "StartRedeployFunctionArn",
        "lambdas.start_redeploy.handler",
        "Start a redeploy for an S3 upload",
        timeout_s=30,
    ),
    LambdaFunction(
        "JanitorFunctionArn", "lambdas.janitor.handler", "Delete expired deploybench resources", timeout_s=300
    ),
)

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9]+)\}")


def _builders() -> dict[str, Callable[[], dict[str, Any]]]:
    from state_machines import benchmark_sweep, deploy_pipeline, redeploy_pipeline

    return {
        "deploy_pipeline": deploy_pipeline.definition,
        "benchmark_sweep": benchmark_sweep.definition,
        "redeploy_pipeline": redeploy_pipeline.definition,
    }


def all_placeholders() -> set[str]:
    """Every placeholder a definition may use: functions, state machines, the child-execution resource."""
    return (
        {f.placeholder for f in FUNCTIONS}
        | {state_machine_placeholder(n) for n in names()}
        | {START_EXECUTION_SYNC}
    )


def children(name: str) -> list[str]:
    """State machines that ``name`` starts (their ARN placeholders appear in its definition)."""
    used = placeholders(definition_json(name))
    return [other for other in names() if state_machine_placeholder(other) in used]


def creation_order() -> list[str]:
    """Every state machine after the ones it starts (their ARNs are substituted into it)."""
    ordered: list[str] = []

    def visit(name: str, path: tuple[str, ...]) -> None:
        if name in path:
            raise ValueError(f"state machines start each other in a cycle: {' -> '.join((*path, name))}")
        if name not in ordered:
            for child in children(name):
                visit(child, (*path, name))
            ordered.append(name)

    for name in names():
        visit(name, ())
    return ordered


def names() -> list[str]:
    return sorted(_builders())


def definition(name: str) -> dict[str, Any]:
    """The ASL document of state machine ``name``, with placeholders."""
    return _builders()[name]()


def definition_json(name: str) -> str:
    return json.dumps(definition(name), indent=2)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def render(name: str, substitutions: Mapping[str, str]) -> str:
    """The definition with every placeholder replaced; a missing one is an error, not a silent gap."""
    text = definition_json(name)
    missing = placeholders(text) - set(substitutions)
    if missing:
        raise KeyError(f"no substitution for {sorted(missing)} in {name}")
    return _PLACEHOLDER.sub(lambda m: substitutions[m.group(1)], text)
