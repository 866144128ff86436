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
from functools import lru_cache

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import reading_of, spoken_of
from workflows.images.table import image_cuda
from workflows.preflight.containers import amis, check_cuda_driver
from workflows.preflight.instances import instance, known_instances

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


def _known_images(text: str) -> set[str]:
    """The image references the text names, either way it writes them, that the image table knows."""
    references = {_as_sagemakers(m.group()) for m in _IMAGE.finditer(text)}
    references |= {_as_sagemakers(f"{m[1]}:{m[2]}") for m in _IMAGE_SPACED.finditer(text)}
    return {uri for uri in references if image_cuda(uri)}


def _gpu(name: str) -> bool:
    return (row := instance(name)) is not None and row.accelerator_kind == "gpu"


def gpu_types_named(text: str) -> set[str]:
    """The GPU instance types the text names, with or without "ml." ("g5.xlarge" is ml.g5.xlarge)."""
    return {name for bare in _TYPE.findall(text) if _gpu(name := f"ml.{bare}")}


def _gpu_types(text: str, evidence: Evidence) -> set[str]:
    """The GPU instance types the text or the evidence names."""
    types = gpu_types_named(text)
    if evidence.instance_type and _gpu(evidence.instance_type):
        types.add(evidence.instance_type)
    return types


def driver_below_image(evidence: Evidence) -> str:
    """The finding that the named image's CUDA is beyond the driver of the named GPU type, or empty."""
    text = "\n".join(item.text for item in evidence.items)
    images, gpus = _known_images(text), _gpu_types(text, evidence)
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
    if not spoken_of(_TRITON, evidence) or _ami(text) or _known_images(text):
        return None
    return True if len(_gpu_types(text, evidence)) == 1 else None


# The image's CUDA as a person states it: "Triton 26.05 (CUDA 13.2)", "cu128 image", "CUDA 13 기반 이미지".
# ... its minor version may be left open: "CUDA 13.x".
_CUDA_STATED = re.compile(
    r"\bCUDA\s*(?P<major>1\d)(?:\.(?P<minor>\d|x))?(?![\d.])|\bcu(?P<packed>1\d\d)\b", re.IGNORECASE
)


@lru_cache(maxsize=1)
def _newest_default_cuda() -> tuple[int, int]:
    """The newest CUDA any GPU family's default driver runs (the instance table's drivers, the AMI table's CUDA)."""
    drivers = [
        row.default_driver for name in known_instances() if (row := instance(name)) and row.default_driver
    ]
    newest = max(drivers, default=0)
    return max((ami.cuda for ami in amis() if ami.driver <= newest), default=(0, 0))


def stated_cuda_beyond_defaults(evidence: Evidence) -> bool | None:
    """True where a person states the image's CUDA at a major version past every family's default driver, and
    no InferenceAmiVersion is named: whatever the GPU type, its default driver cannot run the image."""
    text = "\n".join(item.text for item in evidence.items)
    if _ami(text):
        return None
    for item in evidence.items:
        if item.whole or not item.prose:
            continue
        for m in _CUDA_STATED.finditer(item.text):
            packed = m["packed"]
            minor = int(m["minor"]) if (m["minor"] or "").isdigit() else 0
            stated = (int(packed[:2]), int(packed[2])) if packed else (int(m["major"]), minor)
            # CUDA's minor version compatibility runs a 12.x image on any 12.x driver: the major decides.
            if stated[0] > _newest_default_cuda()[0] and reading_of(item, m).polarity != "negated":
                return True
    return None


def image_beyond_driver(evidence: Evidence) -> bool | None:
    """True where the named image needs a newer driver than the named GPU type has; None otherwise."""
    return True if driver_below_image(evidence) else None
