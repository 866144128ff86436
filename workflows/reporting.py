"""Result JSON (versioned) and a short Markdown report of a pipeline run."""

from __future__ import annotations

import json
import platform
from typing import Any

from workflows import clock
from workflows.contracts import PipelineState, ReportResult
from workflows.naming import results_prefix
from workflows.settings import Settings
from workflows.storage import put_text

RESULT_SCHEMA_VERSION = 1


def build_result(state: PipelineState, status: str) -> dict[str, Any]:
    data = state.model_dump(mode="json")
    return {
        "schema_version": RESULT_SCHEMA_VERSION,
        "status": status,
        "finished_at": clock.now().isoformat(),
        "environment": {"python": platform.python_version(), "platform": platform.platform()},
        **data,
    }


def _fmt(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def render_markdown(result: dict[str, Any]) -> str:
    spec = result["spec"]
    lines = [
        f"# deploybench run {result['run_id']}",
        "",
        f"- status: **{result['status']}**",
        f"- model: {spec['model']['source']} ({spec['model']['task']})",
        f"- hosting: {spec['hosting']['mode']} on {(result.get('deploy') or {}).get('instance_type', '-')}",
    ]
    manifest = (result.get("convert") or {}).get("manifest")
    if manifest:
        parity = manifest["parity"]
        lines.append(
            f"- artifact: {manifest['onnx_file']} ({manifest['architecture']}, {manifest['precision']}, "
            f"{manifest['optimization']}); parity max |diff| {parity['max_abs_diff']:.2e}, min cosine {parity['min_cosine']:.6f}"
        )
    if result.get("error"):
        lines.append(f"- error: `{result['error']['Error']}`: {result['error']['Cause'][:300]}")
    if result.get("diagnosis"):
        d = result["diagnosis"]
        lines.append(f"- diagnosis: {d['id']} {d['title']} (action: {d['action']})")
    warmup = (result.get("warmup") or {}).get("shapes") or []
    if warmup:
        lines += [
            "",
            "## Warmup",
            "",
            "| shape | requests | first ms | last ms | stable |",
            "|---|---|---|---|---|",
        ]
        lines += [
            f"| b{w['batch_size']}/{w['sequence_length']} | {w['requests']} | {_fmt(w['first_ms'])} | {_fmt(w['last_ms'])} | {w['stable']} |"
            for w in warmup
        ]
    shapes = (result.get("benchmark") or {}).get("shapes") or []
    if shapes:
        lines += [
            "",
            "## Benchmark",
            "",
            "| batch | seq | conc | p50 ms | p90 ms | p99 ms | max ms | samples/s | req/s | errors | stable |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {s['batch_size']} | {s['sequence_length']} | {s['concurrency']} | {_fmt(s['p50_ms'])} | {_fmt(s['p90_ms'])} | "
            f"{_fmt(s['p99_ms'])} | {_fmt(s['max_ms'])} | {_fmt(s['samples_per_s'])} | {_fmt(s['requests_per_s'])} | "
            f"{s['errors']} | {s['stable']} |"
            for s in shapes
        ]
    teardown = result.get("teardown")
    if teardown:
        lines += [
            "",
            "## Teardown",
            "",
            f"- deleted: {', '.join(teardown['deleted']) or '-'}",
            f"- kept: {', '.join(teardown['kept']) or '-'}",
        ]
    return "\n".join(lines) + "\n"


def report(state: PipelineState, *, s3: Any, settings: Settings, status: str) -> ReportResult:
    """Write result.json and report.md under the run's results prefix."""
    result = build_result(state, status)
    base = f"s3://{settings.bucket}/{results_prefix(state.run_id)}"
    result_uri = put_text(s3, base + "result.json", json.dumps(result, indent=2), "application/json")
    report_uri = put_text(s3, base + "report.md", render_markdown(result), "text/markdown")
    return ReportResult(
        result_uri=result_uri,
        report_uri=report_uri,
        status="SUCCEEDED" if status == "SUCCEEDED" else "FAILED",
    )
