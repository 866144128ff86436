"""Which container image a hosting mode deploys: the spec's own, else its family's build for the device.

``image_for`` reads ``workflows/data/images.yaml`` for the instance's device (CPU without an instance) and
refuses instances no image there runs on (arm64 CPUs, accelerators other than CUDA GPUs); the modes, their
preflight checks, remediation and the canary all pick images through it.
"""

from __future__ import annotations

from typing import Protocol

from workflows.errors import SpecInvalid
from workflows.images.accelerators import device_of, is_arm64
from workflows.images.table import image_uri


class ImageChoice(Protocol):
    """What picks a mode's image: every hosting spec has both fields."""

    @property
    def image(self) -> str | None: ...

    @property
    def image_version(self) -> str | None: ...


def image_for(family: str, hosting: ImageChoice, instance_type: str | None, region: str) -> str:
    """The spec's image, else ``family``'s build (``hosting.image_version`` or the default) from
    ``images.yaml`` for the instance's device (CPU when there is no instance: serverless).

    Raises:
        SpecInvalid: the instance's accelerators are not CUDA GPUs (Neuron, Gaudi), the build is
            unknown, it has no image for the device, or it is not published in ``region``.
    """
    explicit = hosting.image
    if explicit:
        return str(explicit)
    if instance_type and is_arm64(instance_type):
        raise SpecInvalid(
            f"{instance_type} has an arm64 CPU (AWS Graviton, or Grace): every {family} image in "
            "workflows/data/images.yaml is built for x86_64, so its container would not start (exec format "
            "error), and the artifact's onnxruntime wheel is x86_64 too.",
            fix="use an x86_64 instance type (ml.c7i, ml.m7i, ml.c6i), or set hosting.image to an image "
            "built for linux/arm64",
        )
    device = device_of(instance_type) if instance_type else "cpu"
    if device not in ("cpu", "gpu"):
        raise SpecInvalid(
            f"{instance_type} carries {device} accelerators, not CUDA GPUs: no {family} image in "
            "workflows/data/images.yaml runs there.",
            fix="use a GPU or CPU instance type, or set hosting.image to an image built for this accelerator",
        )
    return image_uri(family, gpu=device == "gpu", region=region, version=hosting.image_version)
