"""Markdown reports: one result in full, or several side by side with regression verdicts."""

from __future__ import annotations

from typing import Any

from workflows.benchmark.results import CPU_CEILING_PCT, GPU_MEMORY_CEILING_PCT, Utilisation
from workflows.benchmark.stats import samples_for_upper_bound
from workflows.reports.compare import key
from workflows.reports.engines import engine_build_lines
from workflows.reports.plots import label
from workflows.reports.remediation import remediation_lines
from workflows.reports.tables import (
    VERDICT_HEADER,
    fmt,
    percentile_cell,
    samples_of,
    stable_cell,
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
        lines.append(f"- execution provider: **{served['provider']}**{note}")
    canary = (result.get("preflight") or {}).get("canary") or result.get("canary")
    if canary:
        lines.append(canary_line(canary))
    plan = result.get("benchmark_plan")
    if plan:
        lines.append(f"- benchmark runner: {plan['runner']} ({plan['reason']})")
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


def _provisioned_note(result: dict[str, Any]) -> str:
    """What a serverless cold start meant: on demand it started a container; with provisioned
    concurrency requests up to it found one started."""
    hosting = result.get("hosting") or {}
    if hosting.get("mode") != "serverless":
        return ""
    provisioned = hosting.get("provisioned_concurrency")
    if provisioned:
        return (
            f" Provisioned concurrency {provisioned}: up to {provisioned} concurrent requests find a started "
            "container, so this is a warm first request; the concurrency held is priced in the cost section."
        )
    return " On demand: the first request started the container (F15); `hosting.provisioned_concurrency` avoids it."


def _warmup(result: dict[str, Any]) -> list[str]:
    warmup = result.get("warmup") or {}
    lines: list[str] = []
    cold = warmup.get("cold_start")
    if cold:
        lines += [
            "",
            "## Cold start",
            "",
            f"{'First request after deploy' if result.get('kind') == 'pipeline' else 'First request'} "
            f"({cold['shape']}): {fmt(cold['latency_ms'])} ms"
            + (f", error {cold['error']}" if cold.get("error") else "")
            + f", {cold['retries']} retries, first success after {fmt(cold['time_to_first_success_s'])} s."
            " Reported apart from the warm figures below." + _provisioned_note(result),
        ]
    shapes = warmup.get("shapes") or []
    if shapes:
        lines += ["", "## Warmup", ""]
        lines += table(
            [
                "shape",
                "clients",
                "requests",
                "first ms",
                "first error",
                "1st success s",
                "last ms",
                "timeouts",
                "errors",
                "stable",
                "stopped",
            ],
            [
                [
                    f"b{w['batch_size']}/{w['sequence_length']}",
                    w.get("concurrency"),
                    w["requests"],
                    w["first_ms"],
                    w.get("first_error"),
                    w.get("time_to_first_success_s"),
                    w.get("last_ms"),
                    w.get("timeouts", 0),
                    w.get("errors") or {},
                    w["stable"],
                    w.get("stop_reason", ""),
                ]
                for w in shapes
            ],
        )
    return lines


def _warm_checks(result: dict[str, Any]) -> list[str]:
    """The check before measuring each shape (the pipeline warmed them earlier, maybe elsewhere)."""
    checks = result.get("warm_checks") or []
    if result.get("kind") != "pipeline" or not checks:
        return []
    cells = [
        f"b{w['batch_size']}/{w['sequence_length']}: {w['requests']} requests, {w.get('stop_reason') or w['stable']}"
        for w in checks
    ]
    return ["", "Warm check before measuring: " + "; ".join(cells) + "."]


UTILISATION_HEADER = ["CPU %", "mem %", "GPU %", "GPU mem %", "util. source", "ceiling"]


def utilisation_cells(measurement: dict[str, Any]) -> list[Any]:
    """The cells under ``UTILISATION_HEADER`` for one measurement (all '-' where it has none)."""
    raw = measurement.get("utilisation")
    if not raw:
        return [None] * len(UTILISATION_HEADER)
    used = Utilisation.model_validate(raw)
    hit = used.ceilings()
    return [
        *(_percent(v) for v in (used.cpu_pct, used.memory_pct, used.gpu_pct, used.gpu_memory_pct)),
        used.source,
        f"**{'; '.join(hit)}**" if hit else "no",
    ]


def _percent(value: float | None) -> str | None:
    return None if value is None else f"{value:.0f}"


def _utilisation_note(rows: list[dict[str, Any]]) -> list[str]:
    sources: set[str] = {str(m["utilisation"]["source"]) for m in rows if m.get("utilisation")}
    if not sources:
        return []
    words = {
        "cloudwatch": "cloudwatch: the endpoint's instance and container metrics",
        "local": "local: the local serving process group's own /proc figures (CPU of all this "
        "host's cores, memory of its RAM), not the named instance's",
    }
    return [
        "",
        "Utilisation: averages over each shape's kept windows; "
        + "; ".join(words[s] for s in sorted(sources))
        + f". Ceiling: CPU >= {CPU_CEILING_PCT:.0f}% or GPU memory >= {GPU_MEMORY_CEILING_PCT:.0f}%, "
        "where the figures above may be the host's limit rather than the model's.",
    ]


def _measurements(result: dict[str, Any]) -> list[str]:
    rows = result.get("measurements") or []
    if not rows:
        return []
    # Older results and runs that read no utilisation keep the table they always had.
    used = any(m.get("utilisation") for m in rows)
    lines = ["", "## Benchmark (client-side latency)", *_warm_checks(result), ""]
    lines += table(
        [
            "batch",
            "seq",
            "conc",
            "n",
            "p50 ms (95% CI)",
            "p90 ms (95% CI)",
            "p99 ms (95% CI)",
            "max ms",
            "mean ms",
            "std ms",
            "samples/s",
            "req/s",
            *(UTILISATION_HEADER if used else []),
            "errors",
            "retries",
            "stable",
        ],
        [
            [
                m["batch_size"],
                m["sequence_length"],
                m["concurrency"],
                samples_of(m),
                percentile_cell(m, "p50"),
                percentile_cell(m, "p90"),
                percentile_cell(m, "p99"),
                m["max_ms"],
                m["mean_ms"],
                m["std_ms"],
                m["samples_per_s"],
                m["requests_per_s"],
                *(utilisation_cells(m) if used else []),
                m.get("errors_by_kind") or m["errors"],
                m.get("retries", 0),
                stable_cell(m),
            ]
            for m in rows
        ],
    )
    lines += [
        "",
        "n: successful requests in the kept windows, from which the percentiles and their "
        "distribution-free 95% intervals (order statistics) are taken; p99 has no upper bound from "
        f"fewer than {samples_for_upper_bound(0.99)} samples, and from a handful its lower bound can be "
        "the largest sample, above the interpolated figure: the true p99 is then likely above every "
        "sample. Stable: at least min_requests, at least min_duration_s, and the last three windows "
        "agreeing.",
        *_utilisation_note(rows),
    ]
    return lines


def _cloudwatch(result: dict[str, Any]) -> list[str]:
    cloudwatch = result.get("cloudwatch")
    if not cloudwatch:
        return []
    lines = ["", "## Endpoint view (CloudWatch)", ""]
    if not cloudwatch.get("available"):
        return [*lines, f"{cloudwatch.get('reason', 'not available')}."]
    client = {key(m): m for m in result.get("measurements") or []}
    if cloudwatch.get("reason"):
        lines += [cloudwatch["reason"] + ".", ""]
    lines += table(
        [
            "shape",
            "conc",
            "client p50 ms",
            "ModelLatency p50 ms",
            "OverheadLatency p50 ms",
            "ModelLatency p99 ms",
            "invocations / requests",
            "shares minutes",
        ],
        [
            [
                f"b{s['batch_size']}/{s['sequence_length']}",
                s["concurrency"],
                (client.get(key(s)) or {}).get("p50_ms"),
                s.get("ModelLatency_p50_ms"),
                s.get("OverheadLatency_p50_ms"),
                s.get("ModelLatency_p99_ms"),
                f"{fmt(s.get('cloudwatch_invocations'))} / {s['client_requests']}",
                s["shares_minutes_with_other_shapes"],
            ]
            for s in cloudwatch.get("shapes", [])
        ],
    )
    return lines


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
        _warmup(result)
        + engine_build_lines(result)
        + _measurements(result)
        + _cloudwatch(result)
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
