"""Instance pools across devices: one artifact and one Model per device, ``ModelNameOverride`` per pool.

A ProductionVariant names one Model; each of its InstancePools may name another (botocore's
InstancePool.ModelNameOverride: "a different model optimized for the instance type in this pool").
A spec whose pools span CPU and GPU types (``[ml.g5.xlarge, ml.c6i.xlarge]``) gets one artifact per
device from one conversion (the GPU's fp16, the CPU's fp32 or INT8, each parity-checked), one Model
per device, and an override on every pool whose device is not the variant's model's.

Where a pool cannot carry a second model the spec is refused: the real-time mode names its Model in
the variant and takes overrides; an inference-component endpoint's variant names no Model (the
components carry theirs), so a pool's override has nothing to replace; multi-container and
scale-to-zero endpoints do not pool. deploybench converts for CPUs and CUDA GPUs only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workflows.contracts import Finding
from workflows.errors import SpecInvalid
from workflows.gpu.device import artifact_device
from workflows.hosting.image_choice import image_for
from workflows.hosting.spec_bases import MAX_INSTANCE_POOLS
from workflows.images.accelerators import device_of
from workflows.images.table import HF_INFERENCE
from workflows.preflight.context import PreflightContext
from workflows.spec.pipeline import RunSpec

OVERRIDE_MODES = frozenset({"realtime"})
"""Modes whose variant names the Model a pool's ``ModelNameOverride`` replaces."""
CONVERTED_DEVICES = ("cpu", "gpu")
"""The devices deploybench converts an artifact for."""
FIELD = "hosting.instance_type_fallbacks"


def pooled_fallbacks(hosting: Any) -> list[str]:
    """Every fallback type when the spec pools them (``capacity: pools``, two or more), else none."""
    types = [str(name) for name in getattr(hosting, "instance_type_fallbacks", None) or []]
    return types if getattr(hosting, "capacity", "recreate") == "pools" and len(types) > 1 else []


def run_devices(spec: RunSpec) -> list[str]:
    """The devices the run converts for, the first type's first: a real-time spec that pools CPU and
    GPU types gets both; every other spec one (the first type's)."""
    primary = artifact_device(spec.hosting)
    if spec.hosting.mode not in OVERRIDE_MODES:
        return [primary]
    found = dict.fromkeys(device_of(name) for name in pooled_fallbacks(spec.hosting))
    return [primary, *(device for device in found if device != primary and device in CONVERTED_DEVICES)]


def model_overrides(types: Sequence[str], variant_device: str, models: Mapping[str, str]) -> dict[str, str]:
    """``ModelNameOverride`` per pooled type: the device's own model on every pool whose device is not
    the variant's model's (``models``: a model name per further device)."""
    overrides = {}
    for name in types:
        device = device_of(name)
        if device != variant_device and device in models:
            overrides[name] = models[device]
    return overrides


def _blocking(message: str, fix: str, evidence: str = "") -> Finding:
    return Finding(id="F06", severity="blocking", message=message, fix=fix, evidence=evidence)


def fallback_findings(context: PreflightContext, hosting: Any) -> list[Finding]:
    """What the pools of the whole fallback list need before any conversion: at most five pools, a
    device deploybench converts for on every pool, and an image for each pool's device in the run's
    region. (A mode whose pools cannot carry a second model is refused by ``pools.variant_problems``:
    its pools share one model.)"""
    types = pooled_fallbacks(hosting)
    if not types:
        return []
    findings: list[Finding] = []
    listed = ", ".join(types)
    if len(types) > MAX_INSTANCE_POOLS:
        findings.append(
            _blocking(
                f"instance pools: {FIELD} lists {len(types)} types; SageMaker takes at most {MAX_INSTANCE_POOLS} "
                "pools per variant (InstancePoolList max 5).",
                f"list at most {MAX_INSTANCE_POOLS} types in {FIELD}, or set hosting.capacity: recreate",
                listed,
            )
        )
    foreign = [name for name in types if device_of(name) not in CONVERTED_DEVICES]
    if foreign:
        findings.append(
            _blocking(
                f"instance pools: {FIELD} pools {', '.join(foreign)} ({device_of(foreign[0])}), a device "
                "deploybench converts no artifact for (CPU and CUDA GPU only), so no model could serve "
                "that pool.",
                f"remove {', '.join(foreign)} from {FIELD}",
                listed,
            )
        )
    if hosting.mode in OVERRIDE_MODES:
        findings.extend(_image_findings(context, hosting, types))
    return findings


def _image_findings(context: PreflightContext, hosting: Any, types: Sequence[str]) -> list[Finding]:
    """Each pool's device needs its image in the run's region (the real-time mode's HF DLC)."""
    findings = []
    for priority, name in enumerate(types, start=1):
        if device_of(name) not in CONVERTED_DEVICES:
            continue
        try:
            image_for(HF_INFERENCE, hosting, name, context.region)
        except SpecInvalid as error:
            findings.append(
                _blocking(
                    f"instance pools: pool {priority} ({name}, {device_of(name)}) of {FIELD} has no "
                    f"{device_of(name).upper()} image in region {context.region}: {error.message}",
                    error.fix or f"remove {name} from {FIELD}, or deploy in another region",
                    f"region {context.region}",
                )
            )
    return findings
