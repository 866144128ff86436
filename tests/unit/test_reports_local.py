"""Local results say they are local (header, plots, result.json, cost), with the CPU they ran on;
plots tell percentiles and series apart without colour and compare cost per shape and instance."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure
from PIL import Image

from tests.support.result_docs import measurement, result
from workflows.benchmark.host import cpu_summary, describe_cpu
from workflows.reports.files import write_report
from workflows.reports.plots import PERCENTILES, cost_per_million, latency_vs_batch, throughput_vs_concurrency
from workflows.reports.venue import LOCAL, is_local_url, measured_on

LOCAL_URL = "http://127.0.0.1:40123"
AWS_URL = "https://runtime.sagemaker.us-east-1.amazonaws.com"
CPUINFO = """processor	: 0
model name	: Intel(R) Xeon(R) Platinum 8488C
flags		: fpu sse2 avx avx2 avx512f avx512_vnni avx512_bf16 amx_tile amx_int8
"""


def local_result(run_id: str, instance_type: str = "ml.c6i.2xlarge", **extra: Any) -> dict[str, Any]:
    cpu = cpu_summary(CPUINFO)
    return result(
        run_id,
        [measurement(10.0), measurement(14.0, batch=8), measurement(7.0, concurrency=4)],
        client={"runner": "lambda", "endpoint_url": LOCAL_URL},
        hosting={"mode": "realtime", "instance_type": instance_type, "instance_count": 1},
        measured_on=measured_on(instance_type=instance_type, endpoint_url=LOCAL_URL, cpu=cpu),
        **extra,
    )


def drawn_figures(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """The figures the plots save, to read back what they drew."""
    drawn: list[Figure] = []
    original = Figure.savefig

    def keep(self: Figure, *args: Any, **kwargs: Any) -> None:
        drawn.append(self)
        original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    return drawn


def test_the_cpu_summary_names_model_cores_and_the_extensions_that_matter() -> None:
    cpu = cpu_summary(CPUINFO)
    assert cpu["model"] == "Intel(R) Xeon(R) Platinum 8488C"
    assert cpu["extensions"] == ["avx2", "avx512", "vnni", "bf16", "amx"]
    assert cpu["logical_cpus"] >= 1
    assert describe_cpu(cpu).startswith("Intel(R) Xeon(R) Platinum 8488C, ")
    assert describe_cpu(cpu).endswith("avx2/avx512/vnni/bf16/amx")


def test_an_endpoint_on_this_machine_is_local_and_one_on_aws_is_not() -> None:
    assert is_local_url(LOCAL_URL) and is_local_url("http://localhost:8080/x")
    assert not is_local_url(AWS_URL) and not is_local_url(None)
    # A failed run has no benchmark URL, but its SageMaker calls went to the local SageMaker
    assert (
        measured_on(instance_type="ml.c6i.xlarge", endpoint_url=None, sagemaker_url=LOCAL_URL)["where"]
        == LOCAL
    )
    aws = measured_on(instance_type="ml.c6i.xlarge", endpoint_url=AWS_URL)
    assert aws["where"] == "aws" and "cpu" not in aws


def test_a_local_report_says_local_in_its_header_cost_and_result(tmp_path: Path) -> None:
    # Given a result measured against the local SageMaker for ml.c6i.2xlarge
    data = local_result("loc-1")
    # When its report is written
    write_report([data], tmp_path, with_result=True)
    report = (tmp_path / "report.md").read_text()
    saved = json.loads((tmp_path / "result.json").read_text())
    # Then the first line and the summary say local, name the CPU, and deny measuring the instance type
    first, _, measured = report.splitlines()[:3]
    assert first == "# deploybench run loc-1: LOCAL, not measured on ml.c6i.2xlarge"
    assert "LOCAL run on this host (Intel(R) Xeon(R) Platinum 8488C" in measured
    assert "not a measurement of ml.c6i.2xlarge" in measured
    assert "- hosting: realtime for ml.c6i.2xlarge (served by a local process, not that instance)" in report
    # And it describes the host: its cores, shared by client and server, against the named type's vCPUs
    assert saved["measured_on"]["host"]["named_vcpus"] == 8
    assert "ran both the load generator and the endpoint" in report
    assert "ml.c6i.2xlarge would have had 8 vCPUs for the endpoint alone." in report
    # And result.json carries where it was measured, with the CPU
    assert saved["measured_on"]["where"] == LOCAL
    assert saved["measured_on"]["cpu"]["extensions"][-1] == "amx"
    # And the cost is an estimate for the named instance, not a bill
    assert saved["cost"]["basis"] == "local estimate"
    assert "## Cost: estimate for the named instance, not a measured bill" in report
    assert "nothing was billed" in report


def test_an_aws_report_is_not_labelled_local(tmp_path: Path) -> None:
    data = result("aws-1", [measurement(10.0)], client={"runner": "lambda", "endpoint_url": AWS_URL})
    write_report([data], tmp_path, with_result=True)
    report = (tmp_path / "report.md").read_text()
    assert report.splitlines()[0] == "# deploybench run aws-1"
    assert "- measured: **measured on AWS, on ml.c6i.xlarge**" in report
    assert "LOCAL" not in report and data["cost"]["basis"] == "AWS prices"


def test_every_plot_of_a_local_result_carries_the_local_label(tmp_path: Path) -> None:
    data = local_result("loc-2")
    written = write_report([data], tmp_path)
    plots = [p for p in written if p.suffix == ".png"]
    assert len(plots) == 3
    for path in plots:
        description = Image.open(path).text["Description"]  # type: ignore[attr-defined]
        assert description.startswith("LOCAL run on Intel(R) Xeon(R) Platinum 8488C"), path.name
        assert "not a measurement of ml.c6i.2xlarge" in description


def test_percentiles_differ_by_line_style_and_marker_not_only_colour(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    styles = {(style, marker) for _, style, marker, _ in PERCENTILES}
    assert len({s for s, _ in styles}) == 3 and len({m for _, m in styles}) == 3
    # And the drawn lines really carry them
    drawn = drawn_figures(monkeypatch)
    latency_vs_batch([local_result("loc-3")], tmp_path / "l.png")
    lines = drawn[0].axes[0].lines
    assert {(line.get_linestyle(), line.get_marker()) for line in lines} == {
        ("-", "o"),
        ("--", "s"),
        (":", "^"),
    }


def test_throughput_is_drawn_only_with_more_than_one_concurrency(tmp_path: Path) -> None:
    one = result("one", [measurement(10.0), measurement(12.0, batch=8)])
    two = result("two", [measurement(10.0), measurement(7.0, concurrency=4)])
    assert throughput_vs_concurrency([one], tmp_path / "one.png") is None
    assert throughput_vs_concurrency([two], tmp_path / "two.png") is not None


def test_cost_per_million_has_a_bar_per_shape_and_instance_type(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given two results on different instance types, two shapes each
    small = result("s", [measurement(10.0), measurement(20.0, batch=8)])
    large = result(
        "l",
        [measurement(8.0), measurement(12.0, batch=8)],
        hosting={"mode": "realtime", "instance_type": "ml.c6i.2xlarge", "instance_count": 1},
    )
    drawn = drawn_figures(monkeypatch)
    assert cost_per_million([small, large], tmp_path / "c.png") is not None
    axis = drawn[0].axes[0]
    bars = axis.patches
    # Then each shape has one bar per instance type, told apart by hatch
    assert len(bars) == 4
    assert {b.get_hatch() or "" for b in bars} == {"", "//"}
    assert [t.get_text() for t in axis.get_xticklabels()] == ["b1/natural c1", "b8/natural c1"]
    legend = [t.get_text() for t in axis.get_legend().get_texts()]
    assert legend == ["[0] ml.c6i.xlarge realtime", "[1] ml.c6i.2xlarge realtime"]
    heights = {round(b.get_height(), 4) for b in bars}
    expected = {r["cost_per_million"] for d in (small, large) for r in d["cost"]["per_million_inferences"]}
    assert heights == expected


def test_the_handlers_settings_know_when_sagemaker_is_the_local_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from workflows.settings import Settings

    monkeypatch.setenv("DEPLOYBENCH_BUCKET", "b")
    monkeypatch.setenv("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", "arn:aws:iam::123456789012:role/r")
    monkeypatch.setenv("AWS_ENDPOINT_URL_SAGEMAKER", LOCAL_URL)
    assert is_local_url(Settings.from_env().sagemaker_endpoint_url)
    monkeypatch.delenv("AWS_ENDPOINT_URL_SAGEMAKER")
    assert Settings.from_env().sagemaker_endpoint_url is None
