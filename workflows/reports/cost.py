"""What a run cost and what 1M inferences cost at the measured throughput, from the price table.

Instance-based modes pay per instance-second from provisioning to deletion, idle or not: the
run's endpoint line covers Creating, warmup, measurement and teardown, not only the measured
seconds. Scale to zero keeps billing ~26 min after traffic stops (F13); that tail is a line of
its own. Serverless pays memory × processing time. Prices missing from the table are reported
as missing, never guessed.
"""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from importlib.resources import files
from typing import Any

import yaml

from workflows.reports.remediation import earlier_attempt_cost_lines, remediation_transitions
from workflows.reports.venue import LOCAL, of_result

INSTANCE_MODES = {
    "realtime",
    "multi-container",
    "inference-component",
    "scale-to-zero",
    "triton",
    "lmi",
    "vllm",
}
# Tasks whose Lambda time the state does not record run about a second each.
SHORT_TASK_S = 1.0


@lru_cache(maxsize=1)
def price_table() -> dict[str, Any]:
    return dict(yaml.safe_load((files("workflows") / "data" / "prices.yaml").read_text(encoding="utf-8")))


def _seconds(start: str | None, end: str | None) -> float | None:
    if not start or not end:
        return None
    return (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()


def _line(item: str, quantity: float, unit: str, unit_price: float | None, note: str = "") -> dict[str, Any]:
    return {
        "item": item,
        "quantity": round(quantity, 6),
        "unit": unit,
        "unit_price": unit_price,
        "cost": None if unit_price is None else round(quantity * unit_price, 6),
        "note": note if unit_price is not None else (note + "; " if note else "") + "no price in the table",
    }


def _endpoint_lines(result: dict[str, Any], prices: dict[str, Any]) -> list[dict[str, Any]]:
    hosting = result.get("hosting") or {}
    mode = hosting.get("mode", "realtime")
    sagemaker = prices["sagemaker"]
    lines: list[dict[str, Any]] = []
    if mode == "serverless":
        return _serverless_lines(result, hosting, sagemaker)
    lifetime = result.get("endpoint_lifetime") or {}
    seconds = _seconds(lifetime.get("start"), lifetime.get("end"))
    instance_type = hosting.get("instance_type")
    if seconds is None or not instance_type:
        return lines
    count = int(hosting.get("instance_count") or 1)
    # A pooled endpoint pays each type's own price for the instances it held.
    served = hosting.get("served_instance_types") or {instance_type: count}
    for name, held in served.items():
        lines.append(
            _line(
                f"endpoint {name} × {held}",
                seconds / 3600 * held,
                "instance-hour",
                sagemaker["inference_instance_hour"].get(name),
                lifetime.get("note", "") + ("; instance pool" if hosting.get("instance_pools") else ""),
            )
        )
    if mode == "scale-to-zero":
        lag = prices["scale_to_zero"]["scale_in_lag_minutes"]
        lines.append(
            _line(
                "scale-in tail after traffic stops (F13)",
                lag / 60 * count,
                "instance-hour",
                sagemaker["inference_instance_hour"].get(instance_type),
                f"copies reach 0 ~13 min and instances ~13 min later: {lag} min billed per burst of traffic",
            )
        )
    return lines


def provisioned_share(hosting: dict[str, Any], concurrency: int) -> float:
    """The share of a measurement's requests that provisioned concurrency serves: all of them up to
    ``provisioned_concurrency`` clients, that many of ``concurrency`` beyond it (the rest on demand)."""
    provisioned = int(hosting.get("provisioned_concurrency") or 0)
    return min(1.0, provisioned / max(1, concurrency))


def _serverless_lines(
    result: dict[str, Any], hosting: dict[str, Any], sagemaker: dict[str, Any]
) -> list[dict[str, Any]]:
    """Compute per GB-second of every measured request (on demand, or at the provisioned rate for the
    requests provisioned concurrency serves), and the provisioned concurrency held for the endpoint's life."""
    memory_mb = hosting.get("memory_size_mb") or hosting.get("memory_mb")
    if not memory_mb:
        return []
    gb = float(memory_mb) / 1024
    on_demand_s = provisioned_s = 0.0
    for m in result.get("measurements") or []:
        busy = (m.get("mean_ms") or 0.0) / 1000 * (m.get("requests") or 0)
        share = provisioned_share(hosting, int(m.get("concurrency") or 1))
        provisioned_s += busy * share
        on_demand_s += busy * (1 - share)
    upper = "memory × client-side latency of every measured request (an upper bound)"
    lines = []
    if on_demand_s or not provisioned_s:
        lines.append(
            _line(
                "serverless compute", gb * on_demand_s, "GB-second", sagemaker["serverless_gb_second"], upper
            )
        )
    provisioned = int(hosting.get("provisioned_concurrency") or 0)
    if not provisioned:
        return lines
    lines.append(
        _line(
            "serverless compute, served by provisioned concurrency",
            gb * provisioned_s,
            "GB-second",
            sagemaker.get("serverless_provisioned_inference_gb_second"),
            upper,
        )
    )
    lifetime = result.get("endpoint_lifetime") or {}
    seconds = _seconds(lifetime.get("start"), lifetime.get("end"))
    if seconds is not None:
        lines.append(
            _line(
                f"provisioned concurrency {provisioned} × {memory_mb} MB",
                provisioned * gb * seconds,
                "GB-second",
                sagemaker.get("serverless_provisioned_concurrency_gb_second"),
                "held from creation to deletion, idle or not",
            )
        )
    return lines


def _job_lines(result: dict[str, Any], prices: dict[str, Any]) -> list[dict[str, Any]]:
    job = result.get("benchmark_job") or {}
    plan = result.get("benchmark_plan") or {}
    seconds = _seconds(job.get("started_at"), job.get("ended_at"))
    if seconds is None or plan.get("runner") != "processing-job":
        return []
    instance_type = plan.get("job_instance_type", "")
    return [
        _line(
            f"benchmark processing job {instance_type}",
            seconds / 3600,
            "instance-hour",
            prices["sagemaker"]["processing_instance_hour"].get(instance_type),
        )
    ]


def _orchestration_lines(result: dict[str, Any], prices: dict[str, Any]) -> list[dict[str, Any]]:
    if result.get("kind") != "pipeline":
        return []
    from state_machines import FUNCTIONS

    memory = {f.placeholder: f.memory_mb for f in FUNCTIONS}
    timed = {
        "convert": "ConvertToOnnxFunctionArn",
        "pack": "PackArtifactFunctionArn",
        "warmup": "WarmUpShapesFunctionArn",
        "benchmark": "RunBenchmarkFunctionArn",
    }
    gb_s, invocations = 0.0, 0
    for key, placeholder in timed.items():
        seconds = (result.get(key) or {}).get("seconds")
        if seconds is not None and not (key == "benchmark" and result[key].get("runner") != "lambda"):
            gb_s += seconds * memory[placeholder] / 1024
            invocations += 1
    endpoint_polls = (result.get("endpoint") or {}).get("polls", 0)
    job_polls = (result.get("benchmark_job") or {}).get("polls", 0)
    short_tasks = 6 + endpoint_polls + job_polls
    gb_s += short_tasks * SHORT_TASK_S * 0.5
    invocations += short_tasks
    # Each poll is three transitions (describe, choice, wait); the straight path has about twelve.
    transitions = 12 + 3 * endpoint_polls + 3 * job_polls + (4 if result.get("error") else 0)
    transitions += remediation_transitions(result)
    lam, sfn = prices["lambda"], prices["step_functions"]
    return [
        _line(
            "Step Functions state transitions",
            transitions,
            "transition",
            sfn["standard_state_transition"],
            "estimated from the run's polls",
        ),
        _line(
            "Lambda compute",
            gb_s,
            "GB-second",
            lam["gb_second"],
            f"short tasks counted at {SHORT_TASK_S:.0f} s",
        ),
        _line("Lambda requests", invocations, "request", lam["request"]),
    ]


def per_million(result: dict[str, Any], prices: dict[str, Any]) -> list[dict[str, Any]]:
    """Cost of 1M inferences (samples) at each measurement's throughput, serving only."""
    hosting = result.get("hosting") or {}
    mode = hosting.get("mode", "realtime")
    sagemaker = prices["sagemaker"]
    rows = []
    for m in result.get("measurements") or []:
        row = {k: m[k] for k in ("batch_size", "sequence_length", "concurrency", "samples_per_s")}
        if mode == "serverless":
            cost, basis = _serverless_per_million(hosting, m, sagemaker)
        else:
            table = sagemaker["inference_instance_hour"]
            count = int(hosting.get("instance_count") or 1)
            served = hosting.get("served_instance_types") or {hosting.get("instance_type", ""): count}
            hourly_each = [table.get(name) for name in served]
            hourly = (
                None
                if None in hourly_each
                else sum(p * served[n] for p, n in zip(hourly_each, served, strict=True))
            )
            throughput = m.get("samples_per_s") or 0.0
            cost = None if hourly is None or throughput <= 0 else hourly / (throughput * 3600) * 1e6
            basis = "instance-hours at the measured samples/s, fully busy"
            if hosting.get("mixed_fleet"):
                basis += "; mixed fleet (each type at its own price): no one type's cost"
        row["cost_per_million"] = None if cost is None else round(cost, 4)
        row["basis"] = basis
        rows.append(row)
    return rows


def _serverless_per_million(
    hosting: dict[str, Any], m: dict[str, Any], sagemaker: dict[str, Any]
) -> tuple[float | None, str]:
    """1M samples on serverless: memory × latency per sample at the rate of whoever serves them, plus,
    with provisioned concurrency, the concurrency held while the 1M are served at the measured rate."""
    memory_mb = hosting.get("memory_size_mb") or hosting.get("memory_mb")
    if not memory_mb:
        return None, "memory × latency per sample"
    gb = float(memory_mb) / 1024
    busy_gb_s = gb * (m.get("mean_ms") or 0.0) / 1000 / m["batch_size"] * 1e6
    provisioned = int(hosting.get("provisioned_concurrency") or 0)
    if not provisioned:
        return busy_gb_s * sagemaker["serverless_gb_second"], "memory × latency per sample"
    share = provisioned_share(hosting, int(m.get("concurrency") or 1))
    rates = (
        sagemaker["serverless_gb_second"],
        sagemaker.get("serverless_provisioned_inference_gb_second"),
        sagemaker.get("serverless_provisioned_concurrency_gb_second"),
    )
    throughput = m.get("samples_per_s") or 0.0
    basis = (
        f"memory × latency per sample ({share:.0%} served by the provisioned concurrency), plus "
        f"{provisioned} provisioned × {memory_mb} MB held for the 1M at the measured samples/s"
    )
    if None in rates or throughput <= 0:
        return None, basis
    on_demand, served, held = (float(r) for r in rates)  # type: ignore[arg-type]
    cost = busy_gb_s * ((1 - share) * on_demand + share * served) + provisioned * gb * 1e6 / throughput * held
    return cost, basis


def run_cost(result: dict[str, Any], prices: dict[str, Any] | None = None) -> dict[str, Any]:
    """Cost lines of the run, their total, and the cost per 1M inferences per measurement."""
    prices = prices or price_table()
    lines = (
        _endpoint_lines(result, prices)
        + earlier_attempt_cost_lines(result, prices, _line)
        + _job_lines(result, prices)
        + _orchestration_lines(result, prices)
    )
    priced = [line["cost"] for line in lines if line["cost"] is not None]
    venue = of_result(result)
    local = venue["where"] == LOCAL
    named = venue.get("instance_type") or (result.get("hosting") or {}).get("mode", "the named hosting")
    return {
        "basis": "local estimate" if local else "AWS prices",
        "note": (
            f"an estimate for {named} at {prices['region']} prices, from this local run's timings and "
            "throughput on this host's CPU: no AWS resource ran and nothing was billed"
            if local
            else "the run's timings at the price table's rates; the AWS bill is the reference"
        ),
        "currency": prices["currency"],
        "region": prices["region"],
        "prices_taken": str(prices["taken"]),
        "lines": lines,
        "total": round(sum(priced), 6),
        "complete": all(line["cost"] is not None for line in lines),
        "per_million_inferences": per_million(result, prices),
    }
