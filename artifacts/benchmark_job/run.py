"""Entry of the benchmark processing job: run the benchmark engine next to the endpoint.

SageMaker copies the job's inputs to /opt/ml/processing/input/... before this starts and uploads
/opt/ml/processing/output/... after it ends; this script reads and writes only those files (it
never calls S3). The engine modules ship beside it (``workflows/benchmark/...``): the SAME code the
benchmark Lambda runs. It needs python3, boto3 and numpy, nothing else.

The config's ``region`` is the endpoint's (another Region than the job's after a run moved across
Regions); with ``routed`` (a run across Regions) the job also measures the spec's first shape through the
run's router beside direct InvokeEndpoint, in the router's Region, and writes the samples as ``routed``.

Usage: python3 run.py --config DIR/job.json --output DIR [--message-file /opt/ml/output/message]
Exit status 0 with ``benchmark.json`` in the output folder, or 1 with the reason in the message file
(DescribeProcessingJob shows its first 1 KB as ExitMessage).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path

CODE = Path(__file__).resolve().parent
sys.path.insert(0, str(CODE))

MESSAGE_FILE = "/opt/ml/output/message"
OUTPUT_FILE = "benchmark.json"


def _write_message(path: str, text: str) -> None:
    try:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text[:1024], encoding="utf-8")
    except OSError:
        pass  # the message is a courtesy; the exit status and the log carry the failure


def benchmark(config_path: Path, output_dir: Path) -> Path:
    import boto3

    from workflows.benchmark.client import Invoker
    from workflows.benchmark.engine import EngineConfig, run
    from workflows.benchmark.policy import policy_for
    from workflows.benchmark.routed_calls import RoutedPlan, measure_routed_shape

    settings = json.loads(config_path.read_text(encoding="utf-8"))
    region = settings.pop("region")
    runner = settings.pop("runner", "processing-job")
    routed = settings.pop("routed", None)
    config = EngineConfig.from_dict(settings)
    # The job's role: container credentials, refreshed by botocore before they expire.
    session = boto3.session.Session(region_name=region)
    runtime = session.client("sagemaker-runtime")
    invoker = Invoker.from_client(
        runtime,
        config.endpoint_name,
        policy=policy_for(config.mode),
        target=config.target,
        session=session,
    )
    output = run(invoker, config, runner=runner, progress=lambda line: print(line, flush=True))
    if routed is not None:
        plan = RoutedPlan.from_dict(routed)
        print(f"routed shape: {plan.rounds} calls each way through {plan.router} ({plan.region})", flush=True)
        router_runtime = boto3.session.Session(region_name=plan.region).client(
            "sagemaker-inference-router-runtime"
        )
        output["routed"] = measure_routed_shape(
            plan, runtime=runtime, router_runtime=router_runtime, endpoint_name=config.endpoint_name,
            target=dict(config.target),
        )  # fmt: skip
    output_dir.mkdir(parents=True, exist_ok=True)
    target = output_dir / OUTPUT_FILE
    partial = target.with_suffix(".partial")
    partial.write_text(json.dumps(output), encoding="utf-8")
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--config", required=True, type=Path)
    parser.add_argument("--output", required=True, type=Path)
    parser.add_argument("--message-file", default=MESSAGE_FILE)
    args = parser.parse_args(argv)
    try:
        target = benchmark(args.config, args.output)
    except Exception as error:
        traceback.print_exc()
        _write_message(args.message_file, f"{type(error).__name__}: {error}")
        return 1
    print(f"wrote {target}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
