"""State machine definitions (Amazon States Language), one per state machine.

Each definition is built here once and consumed unchanged by CDK (``definition_substitutions``)
and by the local engine: Lambda ARNs are ``${...FunctionArn}`` placeholders. ``FUNCTIONS`` is
the one table of which handler serves which placeholder.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class LambdaFunction:
    placeholder: str
    handler: str
    description: str
    container: bool = False
    memory_mb: int = 512
    timeout_s: int = 60


FUNCTIONS: tuple[LambdaFunction, ...] = (
    # Convert and pack need torch + transformers (~1 GB): a container-image function (10 GB limit).
    LambdaFunction(
        "ConvertFunctionArn", "lambdas.convert.handler", "Export and verify ONNX", True, 10240, 900
    ),
    LambdaFunction(
        "PackFunctionArn", "lambdas.pack.handler", "Verify and pack model.tar.gz", True, 4096, 900
    ),
    LambdaFunction("PreflightFunctionArn", "lambdas.preflight.handler", "Static checks before deploy"),
    LambdaFunction("DeployFunctionArn", "lambdas.deploy.handler", "Create SageMaker resources"),
    LambdaFunction(
        "DescribeEndpointFunctionArn", "lambdas.describe_endpoint.handler", "Poll endpoint status"
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
        "ReportFunctionArn",
        "lambdas.report.handler",
        "Write result and report",
        memory_mb=1024,
        timeout_s=120,
    ),
)

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z0-9]+)\}")


def _builders() -> dict[str, Callable[[], dict[str, Any]]]:
    from state_machines import deploy_pipeline

    return {"deploy_pipeline": deploy_pipeline.definition}


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
