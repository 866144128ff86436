"""Each remediation action's next configuration, from the spec, the attempt and the diagnosis.

A function returns the changes for the next attempt, or raises ``Refused`` saying why there is no
next configuration (the fallback list is exhausted, the memory is at its largest...). They read
the hosting spec through ``overrides.configured`` so that a second step starts where the first
one left off. Field figures are in workflows/diagnosis/actions.py (MEANING) and docs/failures.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workflows.contracts import DeployOverrides, Diagnosis, PipelineState
from workflows.hosting.image_choice import image_for
from workflows.images.table import HF_INFERENCE, image_cuda
from workflows.preflight.containers import Ami, amis, minimum_ami
from workflows.preflight.instances import instance
from workflows.preflight.quotas import endpoint_quota, has_quota, values_of
from workflows.remediation.overrides import configured
from workflows.remediation.records import AttemptChange
from workflows.remediation.requirements import requirements_for

# ServerlessConfig.MemorySizeInMB accepts only these (F14: 1137 MB of ONNX failed at 2048, worked at 6144).
SERVERLESS_MEMORY_MB = (1024, 2048, 3072, 4096, 5120, 6144)
# F10: ml.g5.xlarge (16 GB) refused 6144 and 2048, accepted 1024: halve, never below 1024.
IC_MEMORY_FLOOR_MB = 1024


class Refused(Exception):
    """No next configuration for this action; the message says why."""


@dataclass
class Step:
    """The next attempt's configuration."""

    instance_type_index: int
    overrides: DeployOverrides
    region_index: int = 0
    changes: list[AttemptChange] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    """Listed configurations passed over, and why (a fallback with no quota, F39)."""

    def set(self, override: str, before: Any, after: Any) -> None:
        self.overrides = self.overrides.model_copy(update={override: after})
        self.changes.append(AttemptChange(setting=override, before=before, after=after))


def _instance_types(state: PipelineState) -> list[str]:
    types = getattr(state.spec.hosting, "instance_type_fallbacks", None)
    if not types:
        raise Refused(f"hosting mode {state.spec.hosting.mode} has no instance types to fall back on")
    return list(types)


def _start(state: PipelineState) -> Step:
    return Step(state.attempt.instance_type_index, state.attempt.overrides, state.attempt.region_index)


def _move_to(state: PipelineState, index: int) -> Step:
    types = _instance_types(state)
    step = _start(state)
    step.changes.append(
        AttemptChange(
            setting="instance_type", before=types[state.attempt.instance_type_index], after=types[index]
        )
    )
    step.instance_type_index = index
    return step


def next_instance_type(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F06, F39: the next type of hosting.instance_type_fallbacks that the account has endpoint quota
    for (as CheckSpec read it; a type whose quota was not read is tried); the failed endpoint is left
    for teardown."""
    types = _instance_types(state)
    quotas = values_of(state.spec_check)
    count = int(getattr(state.spec.hosting, "instance_count", 1) or 1)
    passed = [
        f"{name} ('{endpoint_quota(name)}' is {quotas[endpoint_quota(name)]:g})"
        for name in types[state.attempt.instance_type_index + 1 :]
        if not has_quota(quotas, name, count)
    ]
    index = next(
        (
            i
            for i in range(state.attempt.instance_type_index + 1, len(types))
            if has_quota(quotas, types[i], count)
        ),
        None,
    )
    if index is None:
        without = f" with endpoint quota (no quota: {', '.join(passed)})" if passed else ""
        raise Refused(f"no fallback instance type left{without} in hosting.instance_type_fallbacks {types}")
    step = _move_to(state, index)
    step.skipped = [p for p in passed if types.index(p.split(" ", 1)[0]) < index]
    return step


def next_region(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F06 past the last type: the first type again, in the next Region of ``hosting.regions``.

    The spec opts in by naming Regions after the primary; the same artifact is staged there and a router
    in the primary Region routes over both (``workflows.steps.create_inference_router``).
    """
    try:
        return next_instance_type(state, diagnosis)
    except Refused:
        regions = list(getattr(state.spec.hosting, "regions", None) or [])
        index = state.attempt.region_index + 1
        if index >= len(regions):
            raise
        types = _instance_types(state)
        step = Step(0, state.attempt.overrides, index)
        step.changes.append(AttemptChange(setting="region", before=regions[index - 1], after=regions[index]))
        if state.attempt.instance_type_index:
            before = types[state.attempt.instance_type_index]
            step.changes.append(AttemptChange(setting="instance_type", before=before, after=types[0]))
        return step


def larger_instance(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F07: the next listed type with more memory than the one that failed its health check."""
    types = _instance_types(state)
    current = instance(types[state.attempt.instance_type_index])
    if current is None:
        raise Refused(f"{types[state.attempt.instance_type_index]} is not in the instance table")
    for index in range(state.attempt.instance_type_index + 1, len(types)):
        candidate = instance(types[index])
        if candidate is not None and candidate.memory_gib > current.memory_gib:
            return _move_to(state, index)
    raise Refused(f"no type after {current.name} in hosting.instance_type_fallbacks {types} has more memory")


def next_memory_size(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F14: one step up the serverless memory sizes; past 6144 MB there is none."""
    current = configured(state.spec.hosting, state.attempt.overrides, "serverless_memory_mb")
    if current is None:
        raise Refused(f"hosting mode {state.spec.hosting.mode} has no serverless memory size")
    larger = [size for size in SERVERLESS_MEMORY_MB if size > int(current)]
    if not larger:
        raise Refused(
            f"MemorySizeInMB is {current}, the largest serverless memory size: the model does not fit"
        )
    step = _start(state)
    step.set("serverless_memory_mb", current, larger[0])
    return step


def _image(state: PipelineState, instance_type: str, region: str) -> str:
    return image_for(HF_INFERENCE, state.spec.hosting, instance_type, region)


def newer_ami(state: PipelineState, diagnosis: Diagnosis, *, region: str) -> Step:
    """F20: the minimum AMI for the image's CUDA, or (when that one is in use already, or the CUDA
    is unknown) the next newer AMI than the one in use."""
    types = _instance_types(state)
    image = _image(state, types[state.attempt.instance_type_index], region)
    current = configured(state.spec.hosting, state.attempt.overrides, "inference_ami_version")
    table = amis()
    in_use = next((i for i, ami in enumerate(table) if ami.name == current), -1)
    cuda = image_cuda(image)
    wanted: Ami | None = minimum_ami(cuda) if cuda else None
    if wanted is None or table.index(wanted) <= in_use:
        newer = table[in_use + 1 :]
        if not newer:
            raise Refused(f"{current or 'the default AMI'} is the newest InferenceAmiVersion known")
        wanted = newer[0]
    step = _start(state)
    step.set("inference_ami_version", current, wanted.name)
    return step


def single_worker(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F02: one worker (one model copy) whose ONNX session uses every core."""
    hosting, overrides = state.spec.hosting, state.attempt.overrides
    workers = configured(hosting, overrides, "workers")
    threads = configured(hosting, overrides, "ort_intra_op_threads")
    if workers is None:
        raise Refused(f"hosting mode {hosting.mode} has no model server workers setting")
    if workers == 1 and threads == 0:
        raise Refused("one worker using every core already: the model does not fit the instance's memory")
    step = _start(state)
    if workers != 1:
        step.set("workers", workers, 1)
    if threads != 0:
        step.set("ort_intra_op_threads", threads, 0)
    return step


def lower_ic_memory(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F10: halve MinMemoryRequiredInMb, never below 1024 MB."""
    current = configured(state.spec.hosting, state.attempt.overrides, "ic_min_memory_mb")
    if current is None:
        raise Refused(f"hosting mode {state.spec.hosting.mode} sets no MinMemoryRequiredInMb")
    if int(current) <= IC_MEMORY_FLOOR_MB:
        raise Refused(f"MinMemoryRequiredInMb is {current} MB already, the floor of {IC_MEMORY_FLOOR_MB}")
    step = _start(state)
    step.set("ic_min_memory_mb", current, max(IC_MEMORY_FLOOR_MB, int(current) // 2))
    return step


def add_requirement(state: PipelineState, diagnosis: Diagnosis) -> Step:
    """F01/F17: the missing module's requirement, added to code/requirements.txt by the repack."""
    module = diagnosis.details.get("module")
    if not module:
        raise Refused("the diagnosis does not name the missing module")
    version = state.convert.manifest.onnxruntime_version if state.convert else None
    current = list(state.attempt.overrides.extra_requirements)
    wanted = requirements_for(module, diagnosis_id=diagnosis.id, onnxruntime_version=version)
    added = [line for line in wanted if line not in current]
    if not added:
        raise Refused(f"{', '.join(wanted)} was added already and {module} is still missing")
    step = _start(state)
    step.set("extra_requirements", current, current + added)
    return step
