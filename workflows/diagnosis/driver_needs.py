"""Whether the paste shows a GPU image whose CUDA the instance's driver cannot run.

An image built for a newer CUDA than the instance's driver stops at start with error 803 (F20). Before its log
group exists, that looks like the capacity stall (F06): the endpoint sits in Creating with no log to read. So
where a stall is all the paste shows, the image it names, the instance type and the InferenceAmiVersion (or its
absence, the family's default AMI) decide whether the driver is a cause left open. The CUDA an image needs and
the driver each AMI carries come from the tables preflight checks F20 with (``check_cuda_driver``); a paste
that names no known image or no GPU type tells nothing.
"""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import reading_of
from workflows.images.table import image_cuda
from workflows.preflight.containers import amis, check_cuda_driver
from workflows.preflight.instances import instance

# An image reference with a tag: an ECR URI, or a repository and tag as people write them
# ("sagemaker-tritonserver:26.05-py3").
_IMAGE = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[a-z][a-z0-9._-]{2,}:[\w][\w.-]*")
# ... or written with a space for the colon ("이미지 tritonserver 26.05-py3"): only a version-like tag, and the
# image table keeps only the references it knows.
_IMAGE_SPACED = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[a-z][a-z0-9._-]{2,})[ \t]+(\d+\.\d+[\w.-]*)")
# An instance type, with or without the "ml." that SageMaker's names carry.
_TYPE = re.compile(r"(?<![\w.])(?:ml\.)?([a-z][a-z0-9]*\.\d*xlarge)\b")


def _as_sagemakers(reference: str) -> str:
    """NGC's Triton image ("nvcr.io/nvidia/tritonserver:26.05-py3") as SageMaker's build of the same release,
    whose tags follow NGC's and whose CUDA the image table records."""
    repository, _, tag = reference.rpartition("/")[2].partition(":")
    return f"sagemaker-tritonserver:{tag}" if repository == "tritonserver" else reference


def _ami(text: str) -> str | None:
    """The InferenceAmiVersion the paste names, the longest name first (``...-gpu-4-1`` over ``...-gpu-4``)."""
    for ami in sorted(amis(), key=lambda a: -len(a.name)):
        if ami.name in text:
            return ami.name
    return None


def driver_below_image(evidence: Evidence) -> str:
    """The finding that the named image's CUDA is beyond the driver of the named GPU type, or empty."""
    text = "\n".join(item.text for item in evidence.items)
    references = {_as_sagemakers(m.group()) for m in _IMAGE.finditer(text)}
    references |= {_as_sagemakers(f"{m[1]}:{m[2]}") for m in _IMAGE_SPACED.finditer(text)}
    images = {uri for uri in references if image_cuda(uri)}
    types = {f"ml.{t}" for t in _TYPE.findall(text)}
    if evidence.instance_type:
        types.add(evidence.instance_type)
    gpus = {t for t in types if (row := instance(t)) is not None and row.accelerator_kind == "gpu"}
    if len(images) != 1 or len(gpus) != 1:
        return ""
    image, instance_type = images.pop(), gpus.pop()
    findings = check_cuda_driver(instance_type=instance_type, image=image, ami_version=_ami(text))
    blocking = [f for f in findings if f.severity == "blocking"]
    return f"{instance_type}: {blocking[0].message}" if blocking else ""


# NVIDIA's Triton named without a release the image table knows ("custom triton build, base tag unknown"): its
# releases since 24.xx need a newer driver than a GPU family's default AMI carries.
_TRITON = re.compile(r"\btriton(?:server)?\b|nvcr\.io/nvidia", re.IGNORECASE)


def triton_release_unknown(evidence: Evidence) -> bool | None:
    """True where a GPU type and NVIDIA's Triton are named, but no release of it the image table knows and no
    InferenceAmiVersion: the driver the image needs is not shown, so a driver too old is as likely as a stall."""
    text = "\n".join(item.text for item in evidence.items)
    named = any(
        reading_of(item, m).polarity != "negated"
        for item in evidence.items
        if not item.whole
        for m in _TRITON.finditer(item.text)
    )
    if not named or _ami(text):
        return None
    spaced = {f"{m[1]}:{m[2]}" for m in _IMAGE_SPACED.finditer(text)}
    if any(image_cuda(_as_sagemakers(ref)) for ref in {m.group() for m in _IMAGE.finditer(text)} | spaced):
        return None
    types = {f"ml.{t}" for t in _TYPE.findall(text)} | (
        {evidence.instance_type} if evidence.instance_type else set()
    )
    gpus = [t for t in types if (row := instance(t)) is not None and row.accelerator_kind == "gpu"]
    return True if len(gpus) == 1 else None


def image_beyond_driver(evidence: Evidence) -> bool | None:
    """True where the named image needs a newer driver than the named GPU type has; None otherwise."""
    return True if driver_below_image(evidence) else None
