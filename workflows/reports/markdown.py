"""Markdown reports: one result in full, or several side by side with regression verdicts."""

from __future__ import annotations

from typing import Any

from workflows.reports.compare import key
from workflows.reports.engines import engine_build_lines
from workflows.reports.measured import cloudwatch_lines, measurement_lines, server_lines, warmup_lines
from workflows.reports.plots import label
from workflows.reports.remediation import remediation_lines
from workflows.reports.routed import routed_lines
from workflows.reports.tables import (
    VERDICT_HEADER,
    fmt,
    table,
    verdict_cells,
)
from workflows.reports.venue import LOCAL, host_line, of_result


def _summary(result: dict[str, Any]) -> list[str]:
    spec, hosting = result.get("spec") or {}, result.get("hosting") or {}
    venue = of_result(result)
    lines = [
        f"- measured: **{venue['label']}**",
        *([f"- host: {host}"] if (host := host_line(venue)) else []),
        f"- status: **{result['status']}** ({result.get('kind', 'pipeline')}, schema {result['schema_version']})",
    ]
    model = spec.get("model")
    if model:
        lines.append(f"- model: {model['source']} ({model['task']})")
    where = hosting.get("instance_type") or "-"
    if venue["where"] == LOCAL:
        lines.append(
            f"- hosting: {hosting.get('mode', '?')} for {where} (served by a local process, not that instance)"
        )
    else:
        lines.append(f"- hosting: {hosting.get('mode', '?')} on {where}")
    fleet = result.get("fleet")
    if fleet:
        lines.append(
            f"- instance pools: **{fleet['label']}**"
            if fleet.get("mixed")
            else f"- instance pools: {fleet['label']}"
        )
    manifest = (result.get("convert") or {}).get("manifest")
    if manifest:
        parity = manifest["parity"]
        lines.append(
            f"- artifact: {manifest['onnx_file']} ({manifest['architecture']}, {manifest['precision']}, "
            f"{manifest['optimization']}); parity max |diff| {parity['max_abs_diff']:.2e}, min cosine {parity['min_cosine']:.6f}"
        )
    served = (result.get("warmup") or {}).get("served_by")
    if served:
        note = f" — {served['note']}" if served.get("note") else ""
        computed = f"computing in {served['precision']}" if served.get("precision") else ""
        how = ", ".join(part for part in (served.get("runtime", ""), computed) if part)
        lines.append(f"- execution provider: **{served['provider']}**{f' ({how})' if how else ''}{note}")
    canary = (result.get("preflight") or {}).get("canary") or result.get("canary")
    if canary:
        lines.append(canary_line(canary))
    plan = result.get("benchmark_plan")
    if plan:
        lines.append(f"- benchmark runner: {plan['runner']} ({plan['reason']})")
        lines += [f"- plan: {line}" for line in plan.get("lines") or []]
        for finding in plan.get("findings") or []:
            lines.append(f"- sample count (warning): {finding['message']} Fix: {finding['fix']}.")
    generator = (result.get("environment") or {}).get("load_generator")
    if generator:
        lines.append(
            f"- load generator: {generator['runner']} on {generator['host']} ({generator['client']}, "
            f"python {generator['python']}) → {generator['endpoint_url']}"
        )
    if result.get("error"):
        lines.append(f"- error: `{result['error']['Error']}`: {result['error']['Cause'][:300]}")
    if result.get("diagnosis"):
        d = result["diagnosis"]
        lines.append(f"- diagnosis: {d['id']} {d['title']} (action: {d['action']})")
    return lines


def canary_line(canary: dict[str, Any]) -> str:
    """The pre-spend canary's outcome, time and the versions it ran with (workflows/container/canary.py)."""
    if canary.get("outcome") == "skipped":
        return f"- pre-spend canary: skipped ({canary.get('reason', '')})"
    versions = canary.get("versions") or {}
    named = ", ".join(f"{k} {versions[k]}" for k in ("transformers", "tokenizers", "torch") if k in versions)
    return (
        f"- pre-spend canary: **{canary['outcome']}** in {canary['seconds']:.1f} s ({named}; "
        f"image {canary.get('image') or 'default'})"
    )


def _cost(result: dict[str, Any]) -> list[str]:
    cost = result.get("cost")
    if not cost:
        return []
    estimate = cost.get("basis") == "local estimate" or of_result(result)["where"] == LOCAL
    title = "Cost: estimate for the named instance, not a measured bill" if estimate else "Cost"
    lines = ["", f"## {title} ({cost['currency']}, {cost['region']} prices taken {cost['prices_taken']})", ""]
    if cost.get("note"):
        lines += [f"{'**Local run.** ' if estimate else ''}{cost['note'][0].upper()}{cost['note'][1:]}.", ""]
    lines += table(
        ["item", "quantity", "unit", "unit price", "cost", "note"],
        [[c["item"], c["quantity"], c["unit"], c["unit_price"], c["cost"], c["note"]] for c in cost["lines"]],
    )
    lines += [
        "",
        f"Total: **{cost['total']:.4f} {cost['currency']}**"
        + ("" if cost["complete"] else " (incomplete: some prices missing)"),
    ]
    rows = cost.get("per_million_inferences") or []
    if rows:
        lines += ["", "Per 1M inferences at the measured throughput (serving only):", ""]
        lines += table(
            ["batch", "seq", "conc", "samples/s", "USD per 1M", "basis"],
            [
                [
                    r["batch_size"],
                    r["sequence_length"],
                    r["concurrency"],
                    r["samples_per_s"],
                    r["cost_per_million"],
                    r["basis"],
                ]
                for r in rows
            ],
        )
    return lines


def _plots(plots: dict[str, str]) -> list[str]:
    if not plots:
        return []
    titles = {
        "latency": "Latency percentiles vs batch size",
        "throughput": "Throughput vs concurrency",
        "cost": "Cost per 1M inferences",
    }
    lines = ["", "## Plots", ""]
    for name, file in plots.items():
        lines += [f"![{titles[name]}]({file})", ""]
    return lines


def title(result: dict[str, Any]) -> str:
    """The report's first line; a local run says so before anything else."""
    heading = f"# deploybench run {result.get('run_id', '?')}"
    venue = of_result(result)
    if venue["where"] != LOCAL:
        return heading
    return f"{heading}: LOCAL, not measured on {venue.get('instance_type') or 'AWS'}"


def render_report(result: dict[str, Any], plots: dict[str, str] | None = None) -> str:
    """The full report of one result."""
    lines = [title(result), "", *_summary(result)]
    lines += remediation_lines(result)
    lines += (
        warmup_lines(result)
        + engine_build_lines(result)
        + measurement_lines(result)
        + routed_lines(result)
        + server_lines(result)
        + cloudwatch_lines(result)
        + _cost(result)
        + _plots(plots or {})
    )
    lines += _teardown(result)
    return "\n".join(lines) + "\n"


def _teardown(result: dict[str, Any]) -> list[str]:
    """Everything the run deleted: each failed attempt's removal, then every teardown pass."""
    teardown = result.get("teardown")
    if not teardown:
        return []
    passes = int(teardown.get("passes") or 1)
    lines = ["", "## Teardown", ""]
    for record in (result.get("attempt") or {}).get("history") or []:
        if record.get("removed"):
            lines.append(
                f"- removed with failed attempt {record.get('attempt')}: {', '.join(record['removed'])}"
            )
    lines += [
        f"- deleted{f' over {passes} passes (ResourceBusy retries)' if passes > 1 else ''}: "
        f"{', '.join(teardown['deleted']) or '-'}",
        f"- kept: {', '.join(teardown['kept']) or '-'}",
    ]
    return lines


def render_comparison(
    results: list[dict[str, Any]], verdicts: list[list[dict[str, Any]]], plots: dict[str, str] | None = None
) -> str:
    """Several results side by side; each later result is judged against the first (the baseline)."""
    lines = ["# deploybench comparison", "", f"Baseline: {label(results[0])}.", ""]
    local = [f"[{i}]" for i, r in enumerate(results) if of_result(r)["where"] == LOCAL]
    if local:
        lines += [
            f"**Local results** {', '.join(local)}: measured on this host's CPU, not on the instance types "
            "they name; their costs are estimates. Each shared the host's CPUs between its load generator "
            "and its endpoint (and with other runs made at the same time): a difference is stated only "
            "where the samples support it.",
            "",
        ]
    lines += table(
        ["result", "status", "runner", "shapes", "total cost", "source"],
        [
            [
                label(r),
                r["status"],
                (r.get("client") or {}).get("runner"),
                len(r.get("measurements") or []),
                (r.get("cost") or {}).get("total"),
                r.get("source", ""),
            ]
            for r in results
        ],
    )
    lines += ["", "## Figures side by side", ""]
    keys = sorted(
        {key(m) for r in results for m in r.get("measurements") or []}, key=lambda k: (k[1], k[0], k[2])
    )
    indexed = [{key(m): m for m in r.get("measurements") or []} for r in results]
    header = ["batch", "seq", "conc"] + [f"p50 / p99 ms, samples/s [{i}]" for i in range(len(results))]
    rows = []
    for k in keys:
        cells: list[Any] = [k[0], k[1], k[2]]
        for by_key in indexed:
            m = by_key.get(k)
            cells.append(
                f"{fmt(m['p50_ms'])} / {fmt(m['p99_ms'])}, {fmt(m['samples_per_s'], 1)}" if m else "-"
            )
        rows.append(cells)
    lines += table(header, rows)
    lines += ["", "Results: " + "; ".join(f"[{i}] {label(r)}" for i, r in enumerate(results))]
    for index, rows_of in enumerate(verdicts, start=1):
        lines += ["", f"## Verdicts: [{index}] against the baseline [0]", ""]
        lines += table(
            ["batch", "seq", "conc", *VERDICT_HEADER],
            [[v["batch_size"], v["sequence_length"], v["concurrency"], *verdict_cells(v)] for v in rows_of],
        )
    lines += _plots(plots or {})
    return "\n".join(lines) + "\n"
