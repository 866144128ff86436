"""Whether a component's own copies fit the instance it asked for: what decides between F09 and F10.

A component InService with fewer copies than it asked for came short of GPUs (F09) or of memory (F10). Where its
own copies need more devices than the instance has (3 copies of 1 GPU on a 1-GPU ml.g5.xlarge), the GPUs are the
limit. Where they fit (3 of 1 GPU on a 4-GPU ml.g5.12xlarge), what else the instance holds took the rest:
other components' devices or memory, which the paste may not show, so F09 is in doubt and F10 is as likely.
"""

from __future__ import annotations

from typing import Any

from workflows.diagnosis.evidence import Evidence
from workflows.preflight.instances import instance


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def own_copies_fit(evidence: Evidence) -> bool | None:
    """True where a short component's copies fit the instance's GPUs and memory by themselves, False where
    they do not; None where no short component or no instance type is shown."""
    row = instance(evidence.instance_type) if evidence.instance_type else None
    if row is None or not row.gpus:
        return None
    for component in evidence.inference_components:
        runtime = component.get("RuntimeConfig") or {}
        desired, current = runtime.get("DesiredCopyCount"), runtime.get("CurrentCopyCount")
        if not (isinstance(desired, int) and isinstance(current, int) and 0 < current < desired):
            continue
        needs = (component.get("Specification") or {}).get("ComputeResourceRequirements") or {}
        devices = _number(needs.get("NumberOfAcceleratorDevicesRequired")) or 1.0
        memory = _number(needs.get("MinMemoryRequiredInMb"))
        return desired * devices <= row.gpus and desired * memory <= row.memory_mb
    return None
