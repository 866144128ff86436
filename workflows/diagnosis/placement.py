"""Whether a component's own copies fit the instance it asked for: what decides between F09 and F10.

A component InService with fewer copies than it asked for came short of GPUs (F09) or of memory (F10). Where its
own copies need more devices than the instance has (3 copies of 1 GPU on a 1-GPU ml.g5.xlarge), the GPUs are the
limit. Where they fit (3 of 1 GPU on a 4-GPU ml.g5.12xlarge), what else the instance holds took the rest:
other components' devices or memory, which the paste may not show, so F09 is in doubt and F10 is as likely.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.shapes import fields
from workflows.preflight.instances import instance

# Other components on the same endpoint, as a writer says it: "shared with two other components",
# "다른 팀 IC가 이미 몇 개 올라가 있음", "rerank-ic, e5-ic 도 있는데".
_SHARED = re.compile(
    r"\b(?:shared with|alongside|next to) (?:\w+ ){0,2}(?:other )?(?:inference )?components?\b|\bother (?:teams'? )?"
    r"(?:inference components|components|ICs)\b|다른\s*(?:팀\s*)?(?:IC|인퍼런스\s*컴포넌트|컴포넌트)"
    # ... or the component put on another team's endpoint: "다른 팀 엔드포인트에 얹은 거라", "on another team's endpoint".
    r"|\b(?:on|onto|to) (?:another|other|a different) team'?s (?:shared )?endpoint\b|다른\s*팀\s*(?:의\s*)?(?:엔드포인트|endpoint)"
    # ... or the endpoint shared with another team: "endpoint 는 다른 팀이랑 shared", "shared with another team".
    r"|다른\s*팀\s*(?:이랑|랑|과|와|하고)\s*(?:shared|공유)|\bshared with (?:another|other|a different) team\b"
    # ... or components already on it, counted: "이미 IC 두 개 붙어 있음", "already hosts two components".
    r"|(?:IC|컴포넌트)\s*(?:[두세네]|\d+)\s*개\s*(?:가\s*|는\s*)?(?:이미\s*)?(?:붙어|올라가|떠|있)"
    # ... or one more already there: "Another IC (ic-emb) is already on this endpoint", "already hosts another component".
    r"|\banother (?:inference )?(?:IC|component)\b[^.\n]{0,40}?\balready\b"
    r"|\balready (?:hosts?|has|holds) (?:another|other|an?) (?:inference )?(?:IC|component)s?\b"
    r"|\balready (?:hosts|holds|has|runs) (?:two|three|four|\d+|other) (?:other )?(?:inference )?components\b",
    re.IGNORECASE,
)


_PLACED_FEWER = re.compile(r"able to deploy (?P<current>\d+) out of (?P<desired>\d+) requested cop(?:y|ies)")


def shortfall(component: dict[str, Any]) -> tuple[int, int] | None:
    """A component record's (desired, current) copies where it placed fewer than it asked for, else None."""
    runtime = fields(component.get("RuntimeConfig"))
    desired, current = runtime.get("DesiredCopyCount"), runtime.get("CurrentCopyCount")
    if isinstance(desired, int) and isinstance(current, int) and current < desired:
        return desired, current
    return None


# The two counts said in prose, desired before current: "DesiredCopyCount 4 인데 CurrentCopyCount 1".
_COUNTS_SAID = re.compile(
    r"\bDesiredCopyCount\W{0,3}(?P<desired>\d+)\b[^\n]{0,40}?\bCurrentCopyCount\W{0,3}(?P<current>\d+)\b"
)


def counts_said(evidence: Evidence) -> tuple[int, int] | None:
    """A component's (desired, current) copies as a person writes them, where it placed some, and fewer than it
    asked for (none placed yet is a scale-out from zero or a start, not a shortfall)."""
    for item in evidence.items:
        for found in _COUNTS_SAID.finditer(item.text):
            if 0 < int(found["current"]) < int(found["desired"]):
                return int(found["desired"]), int(found["current"])
    return None


def _short(evidence: Evidence) -> bool:
    """A component placed fewer copies than it asked for: its record, or SageMaker's reason saying so."""
    if any(_PLACED_FEWER.search(item.text) for item in evidence.items):
        return True
    return any(shortfall(component) for component in evidence.inference_components)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


_INSTANCE_COUNT = re.compile(
    r"\bml\.[a-z0-9]+\.\w+(?:\s*\([^)\n]{0,24}\))?\s*(?:(?:x|×|\*)\s*(?P<count>\d+)(?!\d)|(?P<dae>\d+)\s*대)"
    r"|\b(?P<before>\d+)\s*(?:x|×|\*)\s*ml\.|InstanceCount\W{0,3}(?P<field>\d+)"
)


def _instances(evidence: Evidence) -> int:
    """How many instances the paste shows the endpoint on ("ml.g5.2xlarge x1", "CurrentInstanceCount: 2"); one where
    it says nothing."""
    for item in evidence.items:
        if found := _INSTANCE_COUNT.search(item.text):
            return max(1, int(next(n for n in found.groups() if n)))
    return 1


def _needs(component: dict[str, Any]) -> tuple[float, float]:
    """A copy's devices (at least one, the minimum SageMaker takes) and memory in MB, from the component's record."""
    needs = fields(fields(component.get("Specification")).get("ComputeResourceRequirements"))
    return _number(needs.get("NumberOfAcceleratorDevicesRequired")) or 1.0, _number(
        needs.get("MinMemoryRequiredInMb")
    )


def own_copies_fit(evidence: Evidence) -> bool | None:
    """True where a short component's copies fit the instance's GPUs and memory by themselves, False where
    they do not; None where no short component or no instance type is shown. With no instance type shown, a
    writer's word that other components share the endpoint leaves the same doubt, and so does a component that
    placed no copy at all: nothing shows the GPUs it was short of, and memory refuses a first copy as well."""
    row = instance(evidence.instance_type) if evidence.instance_type else None
    shared = any(_SHARED.search(item.text) for item in evidence.items if item.prose and not item.whole)
    if row is None or not row.gpus:
        failed = any((shortfall(c) or (0, 1))[1] == 0 for c in evidence.inference_components)
        return True if (shared or (row is None and failed)) and _short(evidence) else None
    for component in evidence.inference_components:
        counts = shortfall(component)
        # On one GPU, a component that placed no copy was refused the only device (the field notes' F09).
        if counts is None or (counts[1] == 0 and row.gpus == 1):
            continue
        desired = counts[0]
        devices, memory = _needs(component)
        # More copies placed than the instances' GPUs hold at a device each: the copies do not take a device each
        # as supposed (the spec is not shown, or other instances serve), so the GPUs are not shown to be the cap.
        if counts[1] * devices > row.gpus * _instances(evidence):
            return True
        return desired * devices <= row.gpus and desired * memory <= row.memory_mb
    # Only SageMaker's reason, no record: each copy needs at least one device. On several GPUs, copies that fit by
    # that count came short of what else the instance holds, devices or memory. On one GPU, whatever else the
    # endpoint holds takes the only device, so the reason stays the GPU cap's, as the field notes found it.
    # A person's counts read the same ("DesiredCopyCount 4 인데 CurrentCopyCount 1"); and a writer who says other
    # components share the endpoint leaves it open which of them holds the devices.
    reasons = [int(found["desired"]) for item in evidence.items if (found := _PLACED_FEWER.search(item.text))]
    if said := counts_said(evidence):
        reasons.append(said[0])
    desired = min(reasons, default=0)
    return (desired <= row.gpus or shared) if desired and row.gpus > 1 else None


def gpu_cap_shown(evidence: Evidence) -> bool:
    """A short component's own copies need more devices than the instances' GPUs while their memory fits: the GPU cap
    is shown by the record, whatever is cut from SageMaker's reason. Where the memory does not fit either, the
    reason alone tells which refused the copies."""
    row = instance(evidence.instance_type) if evidence.instance_type else None
    if row is None or not row.gpus:
        return False
    instances = _instances(evidence)
    for component in evidence.inference_components:
        if (counts := shortfall(component)) is None:
            continue
        devices, memory = _needs(component)
        if counts[0] * devices > row.gpus * instances and counts[0] * memory <= row.memory_mb * instances:
            return True
    return False
