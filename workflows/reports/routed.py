"""The report's section on a run across Regions: its router, who served the routed requests and why, and
what the router adds to a direct call.

``result.json`` carries the router as CreateInferenceRouter left it (``router``: name, Region, routing
target, destinations) and the routed shape's figures (``benchmark.routed``, ``workflows.benchmark.routed``):
each way's n, p50 and p99 with their distribution-free 95% intervals, the added latency with its
conservative interval, and each destination's share with the reasons the router gave. A run in one Region
has neither, and its report no such section.
"""

from __future__ import annotations

from typing import Any

from workflows.reports.tables import fmt, percentile_cell, table


def _router_lines(router: dict[str, Any]) -> list[str]:
    lines = [
        f"Router **{router['name']}** in {router['region']} (`{router['arn']}`), routing target "
        f"`{router['routing_target']}`, local Region first, over:",
        "",
    ]
    lines += table(
        ["#", "Region", "endpoint", "status when routed", "ARN"],
        [
            [index, d["region"], d["endpoint_name"], d["status"], f"`{d['arn']}`"]
            for index, d in enumerate(router.get("destinations") or [], start=1)
        ],
    )
    return lines


def _added(routed: dict[str, Any], name: str) -> str:
    """The router's added latency at ``name`` with its conservative interval, as a percentile cell."""
    return percentile_cell(
        {f"{name}_ms": routed.get(f"added_{name}_ms"), f"{name}_ci_ms": routed.get(f"added_{name}_ci_ms")},
        name,
    )


def _figures_lines(routed: dict[str, Any]) -> list[str]:
    direct, through = routed["direct"], routed["routed"]
    lines = [
        "",
        f"Shape {routed.get('shape') or '-'}, one call each way per round, the order alternating: direct "
        f"InvokeEndpoint to {routed['direct_endpoint']}, and InvokeInferenceRouter. The added latency is the "
        "routed percentile minus the direct one; its interval is conservative (routed low minus direct high, "
        "routed high minus direct low).",
        "",
    ]
    lines += table(
        ["way", "n", "p50 ms (95% CI)", "p99 ms (95% CI)"],
        [
            ["direct (InvokeEndpoint)", direct["n"], percentile_cell(direct, "p50"), percentile_cell(direct, "p99")],
            ["routed (InvokeInferenceRouter)", through["n"], percentile_cell(through, "p50"),
             percentile_cell(through, "p99")],
            ["**added by the router**", "-", _added(routed, "p50"), _added(routed, "p99")],
        ],
    )  # fmt: skip
    shares = routed.get("shares") or []
    lines += ["", "Routed requests by destination:", ""]
    lines += table(
        ["destination", "Region", "requests", "share", "reasons"],
        [
            [
                f"`{s['destination']}`",
                s.get("region") or "-",
                s["requests"],
                f"{s['share'] * 100:.1f}%",
                ", ".join(f"{reason} {count}" for reason, count in s["reasons"].items()) or "-",
            ]
            for s in shares
        ]
        or [["-", "-", 0, "-", "no routed request was answered"]],
    )
    return lines


def routed_lines(result: dict[str, Any]) -> list[str]:
    """The section: the router and its destinations, then the routed shape's figures where measured."""
    router = result.get("router")
    routed = (result.get("benchmark") or {}).get("routed")
    if not router and not routed:
        return []
    lines = ["", "## Routed across Regions", ""]
    if router:
        lines += _router_lines(router)
    elif routed:
        lines += [f"Router `{routed['router']}` over {', '.join(f'`{d}`' for d in routed['destinations'])}."]
    if routed:
        lines += _figures_lines(routed)
    else:
        lines += ["", "The routed shape was not measured (the run ended before its benchmark)."]
    warmed = (result.get("warmup") or {}).get("routed")
    if warmed:
        lines += [
            "",
            f"Warm-up through the router (batch {warmed['batch_size']}, sequence {warmed['sequence_length']}): "
            f"{warmed['requests']} requests, {warmed.get('successes', 0)} answered, last {fmt(warmed.get('last_ms'))} ms"
            f"{', stable' if warmed.get('stable') else ', not stable'}.",
        ]
    return lines
