"""Instance pools: SageMaker's own capacity fallback (F06), the first line before deploybench's own.

A ProductionVariant with ``InstancePools`` instead of ``InstanceType`` lists up to five types by
priority; on an insufficient-capacity error SageMaker moves to the next pool, until the instances
are provisioned, the pools are exhausted or ``VariantInstanceProvisionTimeoutInSeconds`` passes
(SageMaker developer guide, "Deploy to multiple instance types with instance pools"). AWS documents
pools for real-time and asynchronous endpoints, single-model and inference components; a mode
says whether it uses them (``HostingMode.supports_pools``). Serverless has no instances;
multi-container and scale-to-zero endpoints are not documented with pools and keep one type per
endpoint.

deploybench's own fallback (tear down, recreate on the next type) stays the second line: for a
spec with ``capacity: recreate``, a mode without pools, and pools that were exhausted or timed out
(the next attempt pools the types after the one that led).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workflows.aws.clients import aws_errors
from workflows.contracts import Finding
from workflows.hosting.pool_devices import fallback_findings, model_overrides, run_devices
from workflows.hosting.spec_bases import MAX_INSTANCE_POOLS as MAX_INSTANCE_POOLS
from workflows.images.accelerators import device_of
from workflows.preflight.context import PreflightContext
from workflows.preflight.registry import Check
from workflows.spec.pipeline import RunSpec, WaitSpec

# botocore's VariantInstanceProvisionTimeoutInSeconds and InstancePoolPriority ranges.
PROVISION_TIMEOUT_RANGE = (300, 3600)
PRIORITY_RANGE = (1, MAX_INSTANCE_POOLS)
MIXED_DEVICES_FIX = (
    "use hosting.mode: realtime (one model per device, ModelNameOverride), set hosting.capacity: recreate "
    "(one type per endpoint, deploybench recreates on the next type after a stall), or list types of one "
    "device only (all CPU or all GPU)"
)


def pool_types(hosting: Any, index: int, *, supported: bool) -> list[str]:
    """The types an attempt pools, in priority order: up to five from the attempt's, or none.

    None when the spec says ``capacity: recreate``, the mode has no pools, or only one type is left
    (a single pool adds nothing to ``InstanceType``).
    """
    types = [str(name) for name in getattr(hosting, "instance_type_fallbacks", None) or []]
    if not supported or getattr(hosting, "capacity", "recreate") != "pools":
        return []
    chosen = types[index : index + MAX_INSTANCE_POOLS]
    return chosen if len(chosen) > 1 else []


def provision_timeout_s(wait: WaitSpec, *, pools: int, startup_timeout_s: int) -> int:
    """VariantInstanceProvisionTimeoutInSeconds from the spec's wait budget.

    Each pool gets as long as deploybench's own stall rule gives one type (``stall_threshold_min``),
    within what the wait leaves once the containers' start-up is paid for (the timeout covers
    capacity only, not model download or container start), clamped to SageMaker's 300-3600 s.
    """
    low, high = PROVISION_TIMEOUT_RANGE
    budget = wait.timeout_min * 60 - startup_timeout_s
    wanted = wait.stall_threshold_min * 60 * pools
    return max(low, min(high, budget, wanted))


def pooled_variant(
    variant: dict[str, Any],
    types: Sequence[str],
    *,
    timeout_s: int,
    model_overrides: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``variant`` with ``InstancePools`` in place of ``InstanceType``, priority 1 first.

    Args:
        model_overrides: a model per instance type, sent as that pool's ``ModelNameOverride``.
    """
    pooled = {key: value for key, value in variant.items() if key != "InstanceType"}
    pools: list[dict[str, Any]] = []
    for priority, name in enumerate(types, start=1):
        pool: dict[str, Any] = {"InstanceType": name, "Priority": priority}
        override = (model_overrides or {}).get(name)
        if override:
            pool["ModelNameOverride"] = override
        pools.append(pool)
    pooled["InstancePools"] = pools
    pooled["VariantInstanceProvisionTimeoutInSeconds"] = timeout_s
    return pooled


def pooled_for(
    spec: RunSpec,
    hosting: Any,
    variant: dict[str, Any],
    types: Sequence[str],
    model_overrides: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``variant`` over ``types`` as instance pools, the provision timeout from the spec's wait, and
    ``model_overrides`` (a model per type) as the pools' ``ModelNameOverride``."""
    timeout = provision_timeout_s(
        spec.wait,
        pools=len(types),
        startup_timeout_s=int(getattr(hosting, "startup_health_check_timeout_s", 0)),
    )
    return pooled_variant(variant, types, timeout_s=timeout, model_overrides=model_overrides)


def devices(types: Sequence[str]) -> list[str]:
    """The distinct devices of ``types`` in their order (cpu, gpu, neuron...)."""
    seen: list[str] = []
    for name in types:
        device = device_of(name)
        if device not in seen:
            seen.append(device)
    return seen


def variant_problems(variant: dict[str, Any]) -> list[str]:
    """What is wrong with a pooled ProductionVariant, before SageMaker says it (preflight and deploy).

    At most five pools, each type once, priorities 1-5 each once, the provision timeout in
    300-3600 s, and one device for the variant's model: a pool on another device needs its own
    model (``ModelNameOverride``), converted for that device.
    """
    pools = list(variant.get("InstancePools") or [])
    if not pools:
        return []
    problems: list[str] = []
    if len(pools) > MAX_INSTANCE_POOLS:
        problems.append(f"{len(pools)} instance pools; SageMaker takes at most {MAX_INSTANCE_POOLS}")
    names = [str(pool.get("InstanceType")) for pool in pools]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        problems.append(f"instance types repeat across pools ({', '.join(repeated)})")
    priorities = [pool.get("Priority") for pool in pools]
    low, high = PRIORITY_RANGE
    if any(not isinstance(p, int) or not low <= p <= high for p in priorities) or len(set(priorities)) < len(
        priorities
    ):
        problems.append(f"pool priorities {priorities} must be distinct integers {low}-{high}")
    timeout = variant.get("VariantInstanceProvisionTimeoutInSeconds")
    low, high = PROVISION_TIMEOUT_RANGE
    if timeout is not None and not (isinstance(timeout, int) and low <= timeout <= high):
        problems.append(f"VariantInstanceProvisionTimeoutInSeconds {timeout} is outside {low}-{high}")
    shared = [str(pool["InstanceType"]) for pool in pools if not pool.get("ModelNameOverride")]
    if len(devices(shared)) > 1:
        problems.append(
            f"pools {', '.join(shared)} span devices ({', '.join(devices(shared))}) but share one model: "
            "the artifact is converted for one device, so a pool on another needs its own model "
            "(ModelNameOverride), which deploybench builds per device in the real-time mode only"
        )
    return problems


def pool_findings(variant: dict[str, Any]) -> list[Finding]:
    """The preflight's findings on a pooled variant: each problem blocks (CreateEndpointConfig would
    refuse it, or the wrong device's pool would fail its health check)."""
    problems = variant_problems(variant)
    if not problems:
        return []
    names = ", ".join(str(pool.get("InstanceType")) for pool in variant.get("InstancePools") or [])
    return [
        Finding(
            id="F06",
            severity="blocking",
            message=f"instance pools: {problem}.",
            fix=MIXED_DEVICES_FIX
            if "span devices" in problem
            else "fix hosting.instance_type_fallbacks, or set hosting.capacity: recreate",
            evidence=f"InstancePools from hosting.instance_type_fallbacks: {names}",
        )
        for problem in problems
    ]


def preflight_pools(context: PreflightContext, hosting: Any) -> list[Finding]:
    """The pools the first attempt would send, checked as CreateEndpointConfig and the devices need,
    with a model per device where the run converts one (declared only by the modes that pool)."""
    types = pool_types(hosting, 0, supported=True)
    if not types:
        return []
    converted = run_devices(context.spec)
    # The names deploy gives them are the run's; the check needs only which pools get one.
    overrides = model_overrides(types, converted[0], {device: f"{device}-model" for device in converted[1:]})
    variant = pooled_for(context.spec, hosting, {"VariantName": "primary"}, types, overrides)
    return fallback_findings(context, hosting) + pool_findings(variant)


POOLS: Check[Any] = Check("instance pools", ("F06",), preflight_pools)
"""Declared by every mode that pools its fallbacks (``supports_pools``)."""


@dataclass(frozen=True)
class PoolCount:
    """One pool as DescribeEndpoint reports it."""

    priority: int
    instance_type: str
    count: int


def pool_counts(description: dict[str, Any], types: Sequence[str]) -> list[PoolCount]:
    """Each pool's ``CurrentInstanceCount`` from DescribeEndpoint, in priority order.

    The pending deployment's summary (while Creating or Updating) wins over the variant's, and a pool
    SageMaker does not report yet counts 0.
    """
    summaries: list[dict[str, Any]] = []
    pending = (description.get("PendingDeploymentSummary") or {}).get("ProductionVariants") or []
    for variants in (pending, description.get("ProductionVariants") or []):
        summaries = list((variants[0] if variants else {}).get("InstancePools") or [])
        if summaries:
            break
    counts = {str(s.get("InstanceType")): int(s.get("CurrentInstanceCount") or 0) for s in summaries}
    return [PoolCount(priority, name, counts.get(name, 0)) for priority, name in enumerate(types, start=1)]


def describe_counts(counts: Sequence[PoolCount], *, devices: bool = False) -> str:
    """One line for the run's log, e.g. 'priority 1 ml.g6.xlarge: 0, falling back; priority 2
    ml.g5.xlarge: 1'; with ``devices`` (pools across devices, a model each) each type's device too,
    'priority 2 ml.c6i.xlarge (cpu): 1'."""
    parts = []
    for position, pool in enumerate(counts):
        later = any(other.count for other in counts[position + 1 :])
        note = ", falling back" if pool.count == 0 and later else ""
        device = f" ({device_of(pool.instance_type)})" if devices else ""
        parts.append(f"priority {pool.priority} {pool.instance_type}{device}: {pool.count}{note}")
    return "; ".join(parts)


def served_types(counts: Sequence[PoolCount]) -> dict[str, int]:
    """The types that hold instances, with their counts (more than one: a mixed fleet)."""
    return {pool.instance_type: pool.count for pool in counts if pool.count > 0}


def fleet(before: dict[str, int], after: dict[str, int]) -> dict[str, Any]:
    """Which types served a measurement: the pools' counts before and after it.

    A type that held instances at either end served part of the traffic; with more than one, the
    figures are a mixture of types (after a scale-out onto a lower-priority pool) and are no one
    type's figures.
    """
    served = sorted({name for counts in (before, after) for name, count in counts.items() if count > 0})
    return {"before": before, "after": after, "served": served, "mixed": len(served) > 1}


def snapshot(sagemaker: Any, endpoint: str, types: Sequence[str]) -> dict[str, int]:
    """CurrentInstanceCount per pooled type now (DescribeEndpoint)."""
    with aws_errors(f"describe endpoint {endpoint}"):
        description = sagemaker.describe_endpoint(EndpointName=endpoint)
    return {pool.instance_type: pool.count for pool in pool_counts(description, types)}
