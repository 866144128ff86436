"""The report's sections on what was measured: the cold start and warm-up, the benchmark table with
the host's utilisation, and the endpoint's own view from CloudWatch."""

from __future__ import annotations

from typing import Any

from workflows.benchmark.results import CPU_CEILING_PCT, GPU_MEMORY_CEILING_PCT, Utilisation
from workflows.benchmark.stats import samples_for_upper_bound
from workflows.reports.compare import key
from workflows.reports.tables import fmt, percentile_cell, samples_of, stable_cell, table


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


def warmup_lines(result: dict[str, Any]) -> list[str]:
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


def measurement_lines(result: dict[str, Any]) -> list[str]:
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


def cloudwatch_lines(result: dict[str, Any]) -> list[str]:
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


def server_lines(result: dict[str, Any]) -> list[str]:
    """The server's own p50/p99 beside the client's, per measurement, and what the difference is."""
    rows = [m for m in result.get("measurements") or [] if m.get("server")]
    if not rows:
        return []
    lines = ["", "## Server-side latency (the endpoint's own view)", ""]
    if not any(m["server"].get("available") for m in rows):
        # One line, not a table of dashes: why no measurement has the server's figures.
        reasons = sorted({f"{m['server']['source']}: {m['server'].get('reason')}" for m in rows})
        return [*lines, f"Not read for any measurement ({'; '.join(reasons)})."]
    lines += table(
        [
            "shape",
            "conc",
            "client p50 ms",
            "server p50 ms",
            "difference p50 ms",
            "client p99 ms",
            "server p99 ms",
            "difference p99 ms",
            "server requests / client",
            "source",
        ],
        [
            [
                f"b{m['batch_size']}/{m['sequence_length']}",
                m["concurrency"],
                m.get("p50_ms"),
                s.get("p50_ms"),
                s.get("difference_p50_ms"),
                m.get("p99_ms"),
                s.get("p99_ms"),
                s.get("difference_p99_ms"),
                f"{fmt(s.get('requests'))} / {m['requests']}",
                s["source"] if s.get("available") else f"{s['source']}: {s.get('reason')}",
            ]
            for m in rows
            for s in [m["server"]]
        ],
    )
    return [
        *lines,
        "",
        "Difference: the client's figure less the server's, that is the network plus the front end "
        "(SageMaker's, or the local SageMaker's on the local engine). Server figures cover the same kept "
        "windows; from a histogram they are interpolated within a bucket (the light server's are 10% wide).",
    ]
