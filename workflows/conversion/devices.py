"""One artifact per device for a run whose instance pools span CPU and GPU types.

Each device's artifact is built from the spec as if that device's types were the only ones listed:
``serving_plan`` then picks the device's providers and onnxruntime build (onnxruntime-gpu for the
image's CUDA on a GPU), and the conversion cache keys each device's artifact apart. With more than
one device the precisions are the devices' own: fp16 on the GPU (onnxruntime's CUDA provider has
fast fp16 kernels and no dynamic INT8 ones), fp32 on the CPU, or INT8 where ``convert.precision``
asks for it (the CPU provider has no fast fp16 kernels, F29). Each is parity-checked as a single-
device artifact is: fp32 against PyTorch, a reduced precision against fp32.
"""

from __future__ import annotations

from workflows.images.accelerators import device_of
from workflows.spec.pipeline import RunSpec


def device_precision(device: str, precision: str) -> str:
    """The served precision of ``device``'s artifact in a run that converts for several devices."""
    if device == "gpu":
        return "fp16"
    return "int8" if precision == "int8" else "fp32"


def device_spec(spec: RunSpec, device: str, *, several: bool) -> RunSpec:
    """``spec`` narrowed to ``device``: only its types in ``hosting.instance_type_fallbacks`` (in
    their order) and, when the run converts for ``several`` devices, the device's precision."""
    hosting = spec.hosting
    types = [
        name for name in getattr(hosting, "instance_type_fallbacks", None) or [] if device_of(name) == device
    ]
    convert = spec.convert
    if several:
        convert = convert.model_copy(update={"precision": device_precision(device, convert.precision)})
    return spec.model_copy(
        update={"hosting": hosting.model_copy(update={"instance_type_fallbacks": types}), "convert": convert}
    )
