"""A GPU artifact on the local SageMaker, which has no GPU: served on CPU, and labelled so.

The artifact of a GPU spec pins ``onnxruntime-gpu`` and asks for the CUDA (or TensorRT) provider;
its serving code refuses a CPU fallback (F36). Locally the container installs the CPU build of the
onnxruntime version the artifact was converted with instead (the wheelhouse holds that one only, and
no GPU build; the GPU pin may be an older release built for the image's CUDA) and sets
``DEPLOYBENCH_SERVE_ON_CPU`` to a note: the serving code then runs the CPU provider and puts the
note in the endpoint log and in every response, so a local result never passes for a GPU figure.
"""

from __future__ import annotations

import json
from pathlib import Path

from workflows.conversion.manifest import MANIFEST_FILE
from workflows.gpu.device import CPU_PACKAGE, GPU_PACKAGE

STAND_IN_ENV = "DEPLOYBENCH_SERVE_ON_CPU"
"""The variable ``code/inference.py`` reads (its CPU_STAND_IN_ENV; a test keeps the two equal)."""
NOTE = (
    "the local SageMaker has no GPU: this GPU artifact runs on onnxruntime's CPU execution provider, "
    "and its figures are CPU figures"
)


def serve_on_cpu(model_dir: Path) -> str | None:
    """Prepare an unpacked GPU artifact to run on CPU; the log line saying so, or None for a CPU one."""
    manifest_path = model_dir / MANIFEST_FILE
    if not manifest_path.is_file():
        return None
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    serving = manifest.get("serving") or {}
    if serving.get("device") != "gpu":
        return None
    requirements = model_dir / "code" / "requirements.txt"
    swapped = ""
    if requirements.is_file():
        lines = requirements.read_text(encoding="utf-8").splitlines()
        converted = manifest.get("onnxruntime_version")
        pinned = [line.strip() for line in lines if line.strip().startswith(f"{GPU_PACKAGE}=")]
        replaced = [
            (
                f"{CPU_PACKAGE}=={converted}"
                if converted
                else f"{CPU_PACKAGE}{line.strip()[len(GPU_PACKAGE) :]}"
            )
            if line.strip().startswith(f"{GPU_PACKAGE}=")
            else line
            for line in lines
        ]
        if replaced != lines:
            requirements.write_text("\n".join(replaced) + "\n", encoding="utf-8")
            swapped = (
                f"; code/requirements.txt's {pinned[0]} is installed as {CPU_PACKAGE}=={converted}, the "
                "conversion's"
                if converted
                else f"; code/requirements.txt's {GPU_PACKAGE} is installed as {CPU_PACKAGE} of the same version"
            )
    return f"{NOTE} (requested {(serving.get('providers') or ['?'])[0]}){swapped}"
