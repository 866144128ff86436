"""report.md of a run across Regions shows its router, who served the routed requests and why, and what the
router adds to a direct call, each figure with its n and interval; a run in one Region shows none of it."""

from __future__ import annotations

from typing import Any

from tests.support.result_docs import measurement, result
from workflows.benchmark.routed import routed_figures
from workflows.benchmark.routed_calls import RoutedCall
from workflows.hosting.router_state import RouterDestination, RouterResult
from workflows.reports.markdown import render_report
from workflows.reports.tables import percentile_cell

EAST = "arn:aws:sagemaker:us-east-1:123456789012:endpoint/db-r1-a1"
WEST = "arn:aws:sagemaker:us-west-2:123456789012:endpoint/db-r1-a2"
ROUTER = "arn:aws:sagemaker:us-east-1:123456789012:inference-router/db-r1-router"


def _router() -> dict[str, Any]:
    return RouterResult(
        name="db-r1-router",
        arn=ROUTER,
        region="us-east-1",
        routing_target="main",
        destinations=[
            RouterDestination(region="us-east-1", endpoint_name="db-r1-a1", arn=EAST, status="Creating"),
            RouterDestination(region="us-west-2", endpoint_name="db-r1-a2", arn=WEST, status="InService"),
        ],
    ).model_dump(mode="json")


def _routed() -> dict[str, Any]:
    direct = [10 + (i % 300) / 100 for i in range(300)]
    calls = [RoutedCall(ms + 2, WEST, "only-healthy") for ms in direct[:290]]
    calls += [RoutedCall(ms + 3, EAST, "local-preferred") for ms in direct[290:]]
    figures = routed_figures(
        router=ROUTER, destinations=[EAST, WEST], direct_endpoint="db-r1-a2", direct_ms=direct, routed=calls,
        shape="b1/natural",
    )  # fmt: skip
    return figures.model_dump(mode="json")


def _section(report: str) -> list[str]:
    lines = report.splitlines()
    start = lines.index("## Routed across Regions")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return lines[start:end]


def _cells(lines: list[str], first_cell: str) -> list[str]:
    line = next(line for line in lines if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_a_routed_run_shows_its_router_the_shares_and_the_added_latency_with_n_and_intervals() -> None:
    # Given a run's result with its router and the routed shape measured (290 served in the west, 10 in the east)
    routed = _routed()
    doc = result("r1", [measurement(12.0)], router=_router(), benchmark={"routed": routed})
    # When its report is rendered
    section = _section(render_report(doc))
    # Then the router is named with its Region and each destination, in routing order, with its status
    assert section[2].startswith("Router **db-r1-router** in us-east-1")
    assert f"`{ROUTER}`" in section[2] and "routing target `main`" in section[2]
    assert _cells(section, "1")[:4] == ["1", "us-east-1", "db-r1-a1", "Creating"]
    assert _cells(section, "2")[:4] == ["2", "us-west-2", "db-r1-a2", "InService"]
    # And each way's n, p50 and p99 with their intervals, then the router's added latency with its interval
    direct = _cells(section, "direct (InvokeEndpoint)")
    through = _cells(section, "routed (InvokeInferenceRouter)")
    assert direct == [
        "direct (InvokeEndpoint)",
        "300",
        *(percentile_cell(routed["direct"], p) for p in ("p50", "p99")),
    ]
    assert through[1] == "300" and through[2] == percentile_cell(routed["routed"], "p50")
    added = _cells(section, "**added by the router**")
    low, high = routed["added_p50_ci_ms"]
    assert added[2] == f"{routed['added_p50_ms']:.2f} ({low:.2f}–{high:.2f})"
    assert "(" in added[3]  # the p99 difference has its interval too (300 samples bound p99)
    # And each destination's share, most served first, with the reasons the router gave
    assert _cells(section, f"`{WEST}`")[1:] == ["us-west-2", "290", "96.7%", "only-healthy 290"]
    assert _cells(section, f"`{EAST}`")[1:] == ["us-east-1", "10", "3.3%", "local-preferred 10"]
    assert any("Shape b1/natural" in line and "db-r1-a2" in line for line in section)


def test_a_run_in_one_region_has_no_routed_section() -> None:
    report = render_report(result("one-1", [measurement(12.0)]))
    assert "## Routed across Regions" not in report
    assert "InvokeInferenceRouter" not in report


def test_a_routed_run_that_ended_before_its_benchmark_names_its_router_and_says_it_was_not_measured() -> None:
    section = _section(render_report(result("r2", [], router=_router())))
    assert section[2].startswith("Router **db-r1-router** in us-east-1")
    assert "The routed shape was not measured (the run ended before its benchmark)." in section
    assert not any(line.startswith("| direct") for line in section)
