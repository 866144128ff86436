"""WriteReport / WriteFailureReport: the run's result.json, report.md and plots under its results prefix."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from workflows.aws.clients import error_code, error_message
from workflows.aws.storage import get_text, upload_file
from workflows.benchmark.cloudwatch import endpoint_metrics
from workflows.benchmark.figures import DETAIL_FILE
from workflows.benchmark.job import OUTPUT_FILE
from workflows.contracts import PipelineState, ReportResult
from workflows.errors import DeploybenchError
from workflows.hosting.realtime import VARIANT
from workflows.hosting.serverless import INSTANCE_TYPE as SERVERLESS
from workflows.naming import results_prefix
from workflows.reports.files import REPORT_FILE, RESULT_FILE, write_report
from workflows.reports.result import pipeline_result
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_s3 import S3Client


def _detail(state: PipelineState, s3: S3Client, settings: Settings) -> dict[str, Any] | None:
    """The engine's full output (windows, samples). A failed benchmark step returned nothing, but
    its figures may still be where the runners write them: they show what the requests met."""
    base = f"s3://{settings.bucket}/{results_prefix(state.run_id)}"
    candidates = (
        [state.benchmark.detail_uri]
        if state.benchmark and state.benchmark.detail_uri
        else [base + DETAIL_FILE, base + "benchmark-job/" + OUTPUT_FILE]
    )
    for uri in candidates:
        try:
            return dict(json.loads(get_text(s3, uri)))
        except (DeploybenchError, ValueError):
            continue
    return None


def _cloudwatch(
    state: PipelineState, detail: dict[str, Any] | None, cloudwatch: CloudWatchClient
) -> dict[str, Any]:
    benchmark, deploy = state.benchmark, state.deploy
    endpoint_url = (
        benchmark.endpoint_url if benchmark else ((detail or {}).get("environment") or {}).get("endpoint_url")
    )
    if deploy is None or not endpoint_url:
        return {"available": False, "reason": "no measurement was made", "shapes": []}
    if detail and detail.get("measurements"):
        measurements = detail["measurements"]
    else:
        measurements = [s.model_dump(mode="json") for s in benchmark.shapes] if benchmark else []
    try:
        return endpoint_metrics(
            cloudwatch,
            endpoint_url=endpoint_url,
            endpoint_name=deploy.endpoint_name,
            variant_name=VARIANT,
            measurements=measurements,
            instance_type=None if deploy.instance_type == SERVERLESS else deploy.instance_type,
        )
    except ClientError as error:
        return {
            "available": False,
            "reason": f"CloudWatch query failed: {error_code(error)}: {error_message(error)}",
            "shapes": [],
        }


def report(
    state: PipelineState, *, s3: S3Client, settings: Settings, status: str, cloudwatch: CloudWatchClient
) -> ReportResult:
    """Build the result, render it, and upload everything under the run's results prefix."""
    detail = _detail(state, s3, settings)
    result = pipeline_result(
        state,
        status,
        detail=detail,
        cloudwatch=_cloudwatch(state, detail, cloudwatch),
        sagemaker_url=settings.sagemaker_endpoint_url,
    )
    base = f"s3://{settings.bucket}/{results_prefix(state.run_id)}"
    with tempfile.TemporaryDirectory(prefix="deploybench-report-") as scratch:
        for path in write_report([result], Path(scratch), with_result=True):
            upload_file(s3, path, base + path.name)
    return ReportResult(
        result_uri=base + RESULT_FILE,
        report_uri=base + REPORT_FILE,
        status="SUCCEEDED" if status == "SUCCEEDED" else "FAILED",
    )
