"""``deploybench bench`` against an existing endpoint and ``deploybench report`` on result files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from tests.conftest import ROOT
from workflows import clock
from workflows.benchmark.noop_endpoint import NoopEndpoint, Script
from workflows.errors import SpecInvalid
from workflows.execution.endpoint_benchmark import bench_endpoint, describe_hosting
from workflows.spec.pipeline import BenchmarkSpec


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workflows.cli", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
    )


def bench_env(url: str) -> dict[str, str]:
    return {
        "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": url,
        "AWS_ACCESS_KEY_ID": "cli",
        "AWS_SECRET_ACCESS_KEY": "cli",
        "AWS_DEFAULT_REGION": "us-east-1",
    }


BENCH_FLAGS = (
    "--no-describe",
    "--instance-type",
    "ml.c6i.xlarge",
    "--batch-sizes",
    "1,4",
    "--sequence-lengths",
    "natural",
    "--concurrency",
    "1,2",
    "--min-duration-s",
    "0.3",
    "--max-duration-s",
    "1.5",
    "--min-requests",
    "5",
)


def test_bench_measures_an_existing_endpoint_and_writes_a_result_folder(tmp_path: Path) -> None:
    # Given an endpoint that answers in ~2 ms
    with NoopEndpoint(Script(delay_s=0.002)) as endpoint:
        # When it is benchmarked from the command line
        completed = cli(
            "bench",
            "--endpoint",
            "my-endpoint",
            *BENCH_FLAGS,
            "--results-dir",
            str(tmp_path),
            env=bench_env(endpoint.url),
        )
        served = endpoint.script.requests
    # Then a schema-2 result, a report and plots were written, with every shape and concurrency
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [folder] = list(tmp_path.glob("bench-my-endpoint-*"))
    result = json.loads((folder / "result.json").read_text())
    assert (result["schema_version"], result["kind"], result["client"]["runner"]) == (2, "bench", "cli")
    assert [(m["batch_size"], m["concurrency"]) for m in result["measurements"]] == [
        (1, 1),
        (1, 2),
        (4, 1),
        (4, 2),
    ]
    assert all(m["p50_ms"] >= 2 and m["errors"] == 0 for m in result["measurements"])
    assert sum(m["requests"] for m in result["measurements"]) <= served
    assert result["warmup"]["cold_start"]["shape"] == "b1/natural"
    assert result["cloudwatch"]["available"] is False
    assert result["cost"]["lines"][0]["item"] == "endpoint ml.c6i.xlarge × 1"
    assert {p.name for p in folder.iterdir()} >= {
        "report.md",
        "latency_vs_batch.png",
        "throughput_vs_concurrency.png",
    }


def test_bench_refuses_bad_settings_naming_the_field(tmp_path: Path) -> None:
    completed = cli(
        "bench",
        "--endpoint",
        "e",
        "--no-describe",
        "--batch-sizes",
        "0",
        "--results-dir",
        str(tmp_path),
        env=bench_env("http://127.0.0.1:9"),
    )
    assert (completed.returncode, completed.stdout) == (2, "")
    assert "SpecInvalid" in completed.stderr and "batch_sizes" in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_bench_fails_when_every_request_fails(tmp_path: Path) -> None:
    # Given an endpoint that fails every request (a count no run reaches: a fast machine sends more
    # than ten thousand requests in these measurements, so a smaller one let late ones succeed)
    script = Script(
        fail_first=10**9,
        fail_code="ModelError",
        fail_message="No module named 'onnxruntime'",
        fail_status=424,
    )
    with NoopEndpoint(script) as endpoint:
        completed = cli(
            "bench",
            "--endpoint",
            "e",
            *BENCH_FLAGS,
            "--results-dir",
            str(tmp_path),
            "--json",
            env=bench_env(endpoint.url),
        )
    assert completed.returncode == 1
    # --json: stdout is the summary only; the progress lines went to stderr
    summary = json.loads(completed.stdout)
    assert summary["failed_measurements"] == summary["measurements"] == 4
    assert any(path.endswith("result.json") for path in summary["files"])
    [result_path] = list(tmp_path.glob("*/result.json"))
    result = json.loads(result_path.read_text())
    assert result["measurements"][0]["errors_by_kind"] == {
        "ModelError": result["measurements"][0]["requests"]
    }


def test_report_compares_results_and_refuses_unreadable_ones(tmp_path: Path) -> None:
    # Given two results of the same endpoint, measured in this process
    settings = BenchmarkSpec(
        batch_sizes=[1], sequence_lengths=["natural"], min_duration_s=0.3, max_duration_s=1.5, min_requests=5
    )
    hosting = {"mode": "realtime", "instance_type": "ml.c6i.xlarge"}
    with NoopEndpoint(Script(delay_s=0.002)) as endpoint:
        session = boto3.session.Session(
            region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
        )
        runtime = session.client("sagemaker-runtime", endpoint_url=endpoint.url)
        for run in ("a", "b"):
            bench_endpoint(
                "e",
                settings,
                runtime=runtime,
                sagemaker=None,
                cloudwatch=None,
                session=session,
                hosting=hosting,
                results_dir=tmp_path / run,
            )
    results = [str(next((tmp_path / run).glob("*/result.json"))) for run in ("a", "b")]
    # When the command line compares them
    completed = cli("report", *results, "--out", str(tmp_path / "report"))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    report = (tmp_path / "report" / "report.md").read_text()
    assert report.startswith("# deploybench comparison")
    assert "## Verdicts: [1] against the baseline [0]" in report
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    refused = cli("report", str(bad), "--out", str(tmp_path / "nothing"))
    assert refused.returncode == 2 and "ResultInvalid" in refused.stderr and refused.stdout == ""
    # And with --json, stdout lists what was written
    listed = cli("report", *results, "--out", str(tmp_path / "again"), "--json")
    assert listed.returncode == 0, listed.stderr
    assert str(tmp_path / "again" / "report.md") in json.loads(listed.stdout)["files"]
    assert not (tmp_path / "nothing").exists()


def described(
    variant: dict[str, Any], *, status: str = "InService", model_env: dict[str, str] | None = None
) -> dict[str, Any]:
    sagemaker = boto3.client("sagemaker", region_name="us-east-1")
    with Stubber(sagemaker) as stub:
        stub.add_response(
            "describe_endpoint",
            {
                "EndpointName": "e",
                "EndpointArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint/e",
                "EndpointConfigName": "c",
                "EndpointStatus": status,
                "CreationTime": clock.now(),
                "LastModifiedTime": clock.now(),
            },
            {"EndpointName": "e"},
        )
        if status == "InService":
            stub.add_response(
                "describe_endpoint_config",
                {
                    "EndpointConfigName": "c",
                    "EndpointConfigArn": "arn:aws:sagemaker:us-east-1:123456789012:endpoint-config/c",
                    "ProductionVariants": [{"VariantName": "AllTraffic", **variant}],
                    "CreationTime": clock.now(),
                },
                {"EndpointConfigName": "c"},
            )
        if model_env is not None:
            stub.add_response(
                "describe_model",
                {
                    "ModelName": "m",
                    "ModelArn": "arn:aws:sagemaker:us-east-1:123456789012:model/m",
                    "PrimaryContainer": {"Image": "img", "Environment": model_env},
                    "CreationTime": clock.now(),
                    "ExecutionRoleArn": "arn:aws:iam::123456789012:role/r",
                },
                {"ModelName": "m"},
            )
        return describe_hosting(sagemaker, "e")


def test_the_hosting_mode_is_read_from_the_endpoint_config() -> None:
    realtime = described(
        {"ModelName": "m", "InstanceType": "ml.c6i.xlarge", "InitialInstanceCount": 2},
        model_env={"SAGEMAKER_MODEL_SERVER_WORKERS": "4"},
    )
    assert realtime == {
        "variant": "AllTraffic",
        "instance_type": "ml.c6i.xlarge",
        "instance_count": 2,
        "mode": "realtime",
        "workers": 4,
    }
    serverless = described(
        {"ModelName": "m", "ServerlessConfig": {"MemorySizeInMB": 3072, "MaxConcurrency": 5}}
    )
    assert (serverless["mode"], serverless["memory_size_mb"]) == ("serverless", 3072)
    to_zero = described(
        {
            "InstanceType": "ml.g5.xlarge",
            "ManagedInstanceScaling": {"Status": "ENABLED", "MinInstanceCount": 0, "MaxInstanceCount": 1},
        }
    )
    assert to_zero["mode"] == "scale-to-zero"
    components = described({"InstanceType": "ml.g5.xlarge", "InitialInstanceCount": 1})
    assert components["mode"] == "inference-component"


def test_an_endpoint_not_in_service_is_refused() -> None:
    with pytest.raises(SpecInvalid, match="is Creating; a benchmark needs InService"):
        described({}, status="Creating")
