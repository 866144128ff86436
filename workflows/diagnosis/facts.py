"""Named facts the rules refer to: structured signals computed from the evidence.

A fact is ``True``, ``False``, a string (``phase``), or ``None`` when the evidence cannot tell
(a log file given on the command line says nothing about the hosting mode). Rules name facts
in ``rules.yaml``; the loader refuses a name that is not in ``FACTS``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from workflows.clock import as_datetime
from workflows.diagnosis.dismissals import logs_unseen
from workflows.diagnosis.driver_needs import (
    driver_below_image,
    image_beyond_driver,
    stated_cuda_beyond_defaults,
    triton_release_unknown,
)
from workflows.diagnosis.endpoint_kind import (
    co_hosted,
    endpoint_variants,
    first_call_engine_spoken_of,
    serverless,
)
from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import asserted
from workflows.diagnosis.model_files import (
    model_file_misnamed,
    model_file_name_open,
    quantized_file_not_named,
)
from workflows.diagnosis.outputs import (
    label_counts_collapsed,
    predictions_collapsed,
    resolved_architecture,
    served_model_mismatch,
)
from workflows.diagnosis.placement import counts_said, gpu_cap_shown, own_copies_fit, shortfall
from workflows.diagnosis.polls import creating_for, stalled
from workflows.diagnosis.report_facts import (
    answered_after_timeout,
    cold_first_call,
    cold_tail,
    compressed_slowly,
    list_one_by_one,
    optimizer_unfinished,
    report_details,
    scaled_in_slowly,
    short_samples_hide,
)
from workflows.diagnosis.requirements_listed import listing, requirements_list_module
from workflows.diagnosis.shapes import fields, objects
from workflows.hosting.polling import stalled_for
from workflows.hosting.pools import pool_counts, served_types
from workflows.hosting.scale_to_zero import DIMENSION as COPIES_DIMENSION
from workflows.images.accelerators import instance_table
from workflows.spec.pipeline import is_gpu_instance

FactValue = bool | str | None

# Text markers of an engine, anywhere in the evidence (log lines name their server).
_ENGINE_MARKERS = {
    # ... or onnxruntime's TensorRT provider as people shorten it ("TRT EP", "trt-ep").
    "tensorrt": re.compile(r"tensorrt|trtexec|\btrt_engine|\bmodel\.plan\b|\bTRT[ _-]?EP\b", re.IGNORECASE),
    # ... DJL Serving's own lines too: its Python engine's process ("PyProcess"), its start-up ("Initialize BOTH server").
    "lmi": re.compile(
        r"\bdjl(?:_python)?\b|ai\.djl|djl-inference|djl[ _-]serving|\bLMI\b|\bPyProcess\b|Initialize BOTH server"
    ),
    # ... or its own start-up lines and flags: "non-default args: {}", "Resolved architecture: ...", --max-model-len.
    "vllm": re.compile(
        r"\bvllm\b|\bnon-default args:|--max-model-len\b|\bResolved architecture:|\bInitializing an LLM engine\b",
        re.IGNORECASE,
    ),
    "triton": re.compile(r"tritonserver|triton inference server", re.IGNORECASE),
}
# The same engines named by a hosting mode or an image repository.
_ENGINE_NAMES = {
    "tensorrt": ("tensorrt", "trt"),
    "lmi": ("lmi", "djl"),
    "vllm": ("vllm",),
    "triton": ("triton",),
}
_COMPONENT_MARK = re.compile(r"\binference ?component|InferenceComponentName", re.IGNORECASE)


def _number(value: Any) -> float:
    """A field's number, or 0 when a pasted record holds none there."""
    try:
        return float(value or 0)
    except (TypeError, ValueError):
        return 0.0


@lru_cache(maxsize=1)
def _gpu_named() -> re.Pattern[str]:
    """A GPU the paste names in passing: the instance table's NVIDIA models ("L40S", "A10G"), CUDA's provider, the
    NVIDIA tool that reports the device, the GPU's utilisation metric."""
    families = instance_table()["families"].values()
    models = {
        str(accelerator["name"]).removeprefix("NVIDIA ")
        for family in families
        if (accelerator := family.get("accelerator") or {}).get("kind") == "gpu"
        and "(" not in accelerator["name"]
    }
    names = "|".join(re.escape(model) for model in sorted(models, key=len, reverse=True))
    # ... or the GPU's own metric, which CloudWatch publishes for GPU instances only: "GPUUtilization", "GPU util".
    gpu_metric = r"\bGPU\s?(?:Memory\s?)?(?i:util(?:ization)?)\b|GPU\s*(?:메모리\s*)?사용률"
    return re.compile(rf"\b(?:{names})\b|\bCUDAExecutionProvider\b|\bnvidia-smi\b|{gpu_metric}")


def gpu_instance(evidence: Evidence) -> FactValue:
    """The endpoint runs on a GPU: its instance type says so, or, with none shown, a GPU the paste names."""
    if evidence.instance_type:
        return is_gpu_instance(evidence.instance_type)
    return True if asserted(_gpu_named(), evidence) else None


def _pools(evidence: Evidence) -> list[str]:
    variants = objects((evidence.endpoint_config or {}).get("ProductionVariants")) or [{}]
    pools = sorted(objects(variants[0].get("InstancePools")), key=lambda p: _number(p.get("Priority")))
    return [str(pool.get("InstanceType")) for pool in pools]


def _provision_timeout_s(evidence: Evidence) -> float:
    variants = objects((evidence.endpoint_config or {}).get("ProductionVariants")) or [{}]
    return float(variants[0].get("VariantInstanceProvisionTimeoutInSeconds") or 0)


def pools_provisioning(evidence: Evidence) -> FactValue:
    """A pooled endpoint still within its provision timeout, no pool's instance yet: SageMaker is
    still walking the pools, which is no capacity failure yet (F06 waits for the timeout)."""
    types = _pools(evidence)
    endpoint = evidence.endpoint
    if not types:
        return False if evidence.endpoint_config else None
    if not endpoint or evidence.observed_at is None:
        return None
    if endpoint.get("EndpointStatus") != "Creating" or served_types(pool_counts(endpoint, types)):
        return False
    stalled = stalled_for(endpoint, evidence.observed_at)
    return stalled is not None and stalled < max(_provision_timeout_s(evidence), evidence.stall_threshold_s)


def pools_exhausted(evidence: Evidence) -> FactValue:
    """F06 with instance pools: Failed, or Creating past the provision timeout, and no pool ever
    got an instance (SageMaker's own fallback ran out)."""
    types = _pools(evidence)
    endpoint = evidence.endpoint
    if not types:
        return False if evidence.endpoint_config else None
    if not endpoint:
        return None
    if (
        served_types(pool_counts(endpoint, types))
        or endpoint.get("ProductionVariants")
        and any((v.get("CurrentInstanceCount") or 0) > 0 for v in endpoint["ProductionVariants"])
    ):
        return False
    if endpoint.get("EndpointStatus") == "Failed":
        return True
    return pools_provisioning(evidence) is False and endpoint.get("EndpointStatus") == "Creating"


def stalled_creating(evidence: Evidence) -> FactValue:
    """F06: Creating, no ProductionVariants, LastModifiedTime frozen past the stall threshold (for a
    pooled endpoint, past its provision timeout too)."""
    endpoint = evidence.endpoint
    if not endpoint or evidence.observed_at is None:
        return None
    if pools_provisioning(evidence):
        return False
    stalled = stalled_for(endpoint, evidence.observed_at)
    return stalled is not None and stalled >= evidence.stall_threshold_s


def stalled_in_polls(evidence: Evidence) -> FactValue:
    """F06 over time: pasted polls or a waiter show Creating, no instance, past the stall threshold."""
    return stalled(evidence.polls, evidence.stall_threshold_s)


def failed_without_instance(evidence: Evidence) -> FactValue:
    """F06 seen late: Failed with an empty FailureReason and no instance ever assigned: no ProductionVariants, or
    each one at CurrentInstanceCount 0."""
    endpoint = evidence.endpoint
    if not endpoint:
        return None
    variants = endpoint_variants(evidence)
    unassigned = not endpoint.get("ProductionVariants") or (
        bool(variants)
        and all("CurrentInstanceCount" in v and _number(v["CurrentInstanceCount"]) == 0 for v in variants)
    )
    return (
        endpoint.get("EndpointStatus") == "Failed"
        and not str(endpoint.get("FailureReason") or "").strip()
        and unassigned
    )


def copies_short(evidence: Evidence) -> FactValue:
    """F09: an inference component placed fewer copies than it asked for. A component still Creating or
    Updating with no copy placed yet has not come short of anything: None, unless another one shows it."""
    if not evidence.inference_components:
        return True if counts_said(evidence) else None
    pending = False
    for component in evidence.inference_components:
        counts = shortfall(component)
        if counts is None:
            continue
        if counts[1] == 0 and component.get("InferenceComponentStatus") in ("Creating", "Updating"):
            pending = True
            continue
        return True
    return None if pending else False


def _engine(name: str) -> Callable[[Evidence], FactValue]:
    def fact(evidence: Evidence) -> FactValue:
        if name == "tensorrt" and gpu_instance(evidence) is False:
            return False  # TensorRT runs only on a GPU: a CPU endpoint rules it out
        if asserted(_ENGINE_MARKERS[name], evidence):
            return True
        labels = " ".join(filter(None, (evidence.hosting_mode, evidence.image))).lower()
        if any(word in labels for word in _ENGINE_NAMES[name]):
            return True
        return False if labels else None

    fact.__doc__ = f"The {name} engine is involved (text markers, hosting mode or image)."
    return fact


def inference_component(evidence: Evidence) -> FactValue:
    """The endpoint hosts inference components (copy counts and component memory apply)."""
    if evidence.inference_components or asserted(_COMPONENT_MARK, evidence):
        return True
    if evidence.hosting_mode:
        return any(word in evidence.hosting_mode for word in ("component", "zero"))
    return None


def copies_not_scaled(evidence: Evidence) -> FactValue:
    """F11: the scalable targets the paste shows hold none on a component's copies
    (sagemaker:inference-component:DesiredCopyCount), so nothing takes the last copy away. None where no list
    of targets is shown."""
    if evidence.scalable_targets is None:
        return None
    dimensions = {str(t.get("ScalableDimension")) for t in evidence.scalable_targets if isinstance(t, dict)}
    return COPIES_DIMENSION not in dimensions


_MIN_INSTANCES_ZERO = re.compile(
    r"MinInstanceCount\W{0,6}0\b|min(?:imum)? instance count (?:of |= ?|: ?|is |to )?0\b", re.IGNORECASE
)


def min_instances_zero(evidence: Evidence) -> FactValue:
    """A variant allows zero instances (ManagedInstanceScaling MinInstanceCount 0), in a pasted
    record or written down; False where a record shows a higher minimum."""
    variants = endpoint_variants(evidence) + objects(
        (evidence.endpoint_config or {}).get("ProductionVariants")
    )
    minimums = [
        (v.get("ManagedInstanceScaling") or {}).get("MinInstanceCount")
        for v in variants
        if isinstance(v.get("ManagedInstanceScaling"), dict)
    ]
    if any(m is not None and _number(m) == 0 for m in minimums):
        return True
    if asserted(_MIN_INSTANCES_ZERO, evidence):
        return True
    return False if any(m is not None for m in minimums) else None


# A first call after the endpoint sat idle, as people tell it: "first request after idle", "idle since yesterday",
# "한참 안 쓰다가 처음 호출".
_AFTER_IDLE = re.compile(
    r"\bafter (?:being |sitting |a long |an? )?idle\b|\bidle (?:since|for|overnight)\b|\bafter [^.\n]{0,20}\bidle\b"
    r"|유휴|한참\s*(?:안\s*쓰다가|호출\s*(?:이\s*)?없다가)",
    re.IGNORECASE,
)


def cold_start_shown(evidence: Evidence) -> FactValue:
    """The paste shows an endpoint that cold-starts: serverless, or allowed zero instances, or called first after
    it sat idle. False where nothing shows it: an endpoint on instances of its own has no cold start once InService."""
    return bool(serverless(evidence) or min_instances_zero(evidence) or asserted(_AFTER_IDLE, evidence))


def instance_shown(evidence: Evidence) -> FactValue:
    """The paste shows the endpoint's instance type, which tells its GPUs and memory."""
    variants = endpoint_variants(evidence) + objects(
        (evidence.endpoint_config or {}).get("ProductionVariants")
    )
    return bool(evidence.instance_type or any(v.get("InstanceType") for v in variants))


def phase(evidence: Evidence) -> FactValue:
    return evidence.phase


def container_logs_read(evidence: Evidence) -> FactValue:
    """Whether this tool read the endpoint's container logs itself (what they lack counts), not a paste."""
    return bool(evidence.logs_read)


FACTS: dict[str, Callable[[Evidence], FactValue]] = {
    "serverless": serverless,
    "cold_start_shown": cold_start_shown,
    "logs_unseen": logs_unseen,
    "instance_shown": instance_shown,
    "gpu_instance": gpu_instance,
    "stalled_creating": stalled_creating,
    "pools_provisioning": pools_provisioning,
    "pools_exhausted": pools_exhausted,
    "failed_without_instance": failed_without_instance,
    "stalled_in_polls": stalled_in_polls,
    "copies_short": copies_short,
    "own_copies_fit": own_copies_fit,
    "gpu_cap_shown": gpu_cap_shown,
    "predictions_collapsed": predictions_collapsed,
    "label_counts_collapsed": label_counts_collapsed,
    "served_model_mismatch": served_model_mismatch,
    "co_hosted": co_hosted,
    "model_file_misnamed": model_file_misnamed,
    "model_file_name_open": model_file_name_open,
    "quantized_file_not_named": quantized_file_not_named,
    "first_call_engine_spoken_of": first_call_engine_spoken_of,
    "inference_component": inference_component,
    "min_instances_zero": min_instances_zero,
    "copies_not_scaled": copies_not_scaled,
    "phase": phase,
    "container_logs_read": container_logs_read,
    "cold_tail": cold_tail,
    "cold_first_call": cold_first_call,
    "list_one_by_one": list_one_by_one,
    "compressed_slowly": compressed_slowly,
    "optimizer_unfinished": optimizer_unfinished,
    "scaled_in_slowly": scaled_in_slowly,
    "short_samples_hide": short_samples_hide,
    "answered_after_timeout": answered_after_timeout,
    "requirements_list_module": requirements_list_module,
    "image_beyond_driver": image_beyond_driver,
    "triton_release_unknown": triton_release_unknown,
    "stated_cuda_beyond_defaults": stated_cuda_beyond_defaults,
    **{name: _engine(name) for name in _ENGINE_MARKERS},
}


def compute(evidence: Evidence) -> dict[str, FactValue]:
    """Every fact's value for this evidence."""
    return {name: fact(evidence) for name, fact in FACTS.items()}


def fact_details(evidence: Evidence, values: dict[str, FactValue]) -> dict[str, dict[str, str]]:
    """Figures behind a fact, quoted in the diagnosis when the fact decides it."""
    details: dict[str, dict[str, str]] = {}
    endpoint = evidence.endpoint or {}
    if values.get("stalled_creating") or values.get("failed_without_instance"):
        created = as_datetime(endpoint.get("CreationTime"))
        modified = as_datetime(endpoint.get("LastModifiedTime"))
        stall = {"status": str(endpoint.get("EndpointStatus")), "production_variants": "absent"}
        if modified and evidence.observed_at:
            stall["frozen_min"] = f"{(evidence.observed_at - modified).total_seconds() / 60:.1f}"
        if created and modified:
            stall["last_modified_after_creation_s"] = f"{(modified - created).total_seconds():.0f}"
        details["stalled_creating"] = details["failed_without_instance"] = stall
    if values.get("stalled_in_polls"):
        waited = creating_for(evidence.polls) or 0.0
        frozen = {p.last_modified for p in evidence.polls if p.status == "Creating" and p.last_modified}
        details["stalled_in_polls"] = {
            "polls": str(len(evidence.polls)),
            "creating_min": f"{waited / 60:.0f}",
            "last_status": evidence.polls[-1].status,
            "last_modified": "frozen" if len(frozen) == 1 else "not shown",
        }
    if values.get("copies_short"):
        for component in evidence.inference_components:
            runtime = fields(component.get("RuntimeConfig"))
            details["copies_short"] = {
                "component": str(component.get("InferenceComponentName", "")),
                "desired": str(runtime.get("DesiredCopyCount")),
                "current": str(runtime.get("CurrentCopyCount")),
            }
    details.update(report_details(evidence, values))
    if values.get("image_beyond_driver"):
        details["image_beyond_driver"] = {"shown": driver_below_image(evidence)[:200]}
    if values.get("requirements_list_module"):
        details["requirements_list_module"] = {"shown": listing(evidence)[:160]}
    if values.get("served_model_mismatch"):
        details["served_model_mismatch"] = {
            "resolved": str(resolved_architecture(evidence)),
            "expected": str(evidence.expected_architecture),
        }
    return details
