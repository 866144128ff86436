"""Pre-spend canary: the packed artifact loaded and asked once per task in the container-equivalent environment.

Before any SageMaker resource exists, ``model.tar.gz`` is unpacked, ``code/requirements.txt`` is
installed offline from the DLC-like environment's wheelhouse (as the toolkit does at container start),
and ``code/inference.py`` is imported by that environment's Python (the image's transformers and
tokenizers, no onnxruntime in the base): ``model_fn`` loads the artifact and ``input_fn -> predict_fn
-> output_fn`` answers one request per task. A failure here (F01, F03, F22, F35, ...) costs seconds
instead of an endpoint's instance-hours.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from workflows.container.cpu_stand_in import NOTE, STAND_IN_ENV
from workflows.container.environment import ensure_device_wheels, ensure_dlc_environment
from workflows.container.versions import libraries_for_image
from workflows.conversion.manifest import MANIFEST_FILE

# One request per task the artifact's manifest can name; a task not listed gets a single text.
TASK_REQUESTS: dict[str, list[dict[str, Any]]] = {
    "embedding": [{"inputs": ["deploybench canary: a short text"]}],
    "classification": [
        {"inputs": ["deploybench canary: a short text"]},
        {"inputs": [["A man is playing a guitar.", "Someone makes music."]]},
    ],
}
TIMEOUT_S = 600

_SCRIPT = r"""
import importlib.util, json, os, sys, time
model_dir, requests = sys.argv[1], json.loads(sys.argv[2])
started = time.perf_counter()
spec = importlib.util.spec_from_file_location("inference", os.path.join(model_dir, "code", "inference.py"))
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.model_fn(model_dir)
loaded = time.perf_counter() - started
answers = []
for body in requests:
    data = module.input_fn(json.dumps(body), "application/json")
    answers.append(json.loads(module.output_fn(module.predict_fn(data, model), "application/json")))
print("CANARY " + json.dumps({"load_s": loaded, "answers": answers}))
"""


@dataclass
class CanaryResult:
    """What ``result.json`` and the report record of the canary."""

    outcome: str
    """``passed`` or ``failed``."""
    seconds: float
    image: str
    versions: dict[str, str] = field(default_factory=dict)
    mismatches: list[str] = field(default_factory=list)
    tasks: list[str] = field(default_factory=list)
    load_s: float | None = None
    error: str = ""
    served_on: str = ""
    """A GPU artifact loaded here (no GPU): the note saying it ran on the CPU provider; empty otherwise."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _unpack(artifact: Path, into: Path) -> Path:
    if artifact.is_dir():
        return artifact
    with tarfile.open(artifact, "r:*") as archive:
        archive.extractall(into, filter="data")
    return into


def _served_on_cpu(model_dir: Path) -> str | None:
    """The CPU stand-in note for a GPU artifact (its manifest's serving device), None for a CPU one."""
    manifest = model_dir / MANIFEST_FILE
    if not manifest.is_file():
        return None
    serving = json.loads(manifest.read_text(encoding="utf-8")).get("serving") or {}
    if serving.get("device") != "gpu":
        return None
    return f"{NOTE} (requested {(serving.get('providers') or ['?'])[0]})"


def run_canary(artifact: Path, *, image: str | None, task: str, timeout_s: float = TIMEOUT_S) -> CanaryResult:
    """Load ``artifact`` (model.tar.gz or its folder) in the environment of ``image`` and ask it once per task.

    Raises:
        DlcUnavailable: the container-equivalent environment cannot be built here.
    """
    libraries = libraries_for_image(image)
    environment = ensure_dlc_environment(libraries)
    started = time.monotonic()
    requests = TASK_REQUESTS.get(task, TASK_REQUESTS["embedding"])
    result = CanaryResult(
        outcome="failed",
        seconds=0.0,
        image=image or "",
        versions=environment.versions,
        mismatches=libraries.mismatches(),
        tasks=[task],
    )
    with tempfile.TemporaryDirectory(prefix="deploybench-canary-") as scratch:
        model_dir = _unpack(artifact, Path(scratch) / "model")
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"VIRTUAL_ENV", "PYTHONHOME"} and not k.startswith("PIP_")
        }
        requirements = model_dir / "code" / "requirements.txt"
        wanted = requirements.read_bytes() if requirements.is_file() else b""
        note = _served_on_cpu(model_dir)
        if note is not None:
            # A GPU artifact here: its onnxruntime-gpu installs as pinned, and runs on the CPU provider.
            env[STAND_IN_ENV] = note
            result.served_on = note
        # Installed once per requirements file and environment (its wheelhouse is fixed).
        pydeps = environment.root / "canary-deps" / hashlib.sha256(wanted).hexdigest()[:16]
        partial: Path | None = None
        try:
            if wanted and not pydeps.is_dir():
                ensure_device_wheels(environment, wanted.decode("utf-8", errors="replace"))
                pydeps.parent.mkdir(parents=True, exist_ok=True)
                partial = Path(tempfile.mkdtemp(prefix="partial-", dir=pydeps.parent))
                pip = [str(environment.python), "-m", "pip", "install", "--quiet", "--no-index"]
                pip += ["--find-links", str(environment.wheelhouse), "--target", str(partial)]
                env["PIP_CONFIG_FILE"] = os.devnull
                subprocess.run(
                    [*pip, "-r", str(requirements)],
                    capture_output=True,
                    text=True,
                    timeout=timeout_s,
                    env=env,
                    check=True,
                )
                try:
                    os.rename(partial, pydeps)  # atomic on one filesystem
                except OSError:  # another canary placed the same set first
                    shutil.rmtree(partial, ignore_errors=True)
            env["PYTHONPATH"] = str(pydeps)
            env["ORT_INTRA_OP_THREADS"] = env.get("ORT_INTRA_OP_THREADS", "1")
            command = [str(environment.python), "-c", _SCRIPT, str(model_dir), json.dumps(requests)]
            completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout_s, env=env)
        except subprocess.CalledProcessError as error:
            if partial is not None:
                shutil.rmtree(partial, ignore_errors=True)
            result.error = f"code/requirements.txt does not install offline: {(error.stderr or '')[-1500:]}"
            completed = None
        except subprocess.TimeoutExpired:
            result.error = f"no answer within {timeout_s:.0f} s"
            completed = None
    result.seconds = round(time.monotonic() - started, 3)
    if completed is None:
        return result
    line = next((x for x in completed.stdout.splitlines() if x.startswith("CANARY ")), None)
    if completed.returncode != 0 or line is None:
        result.error = (completed.stderr or completed.stdout).strip()[-2000:]
        return result
    answer = json.loads(line.removeprefix("CANARY "))
    result.load_s = round(float(answer["load_s"]), 3)
    result.outcome = "passed"
    return result


CANARY_ENV = "DEPLOYBENCH_LOCAL_CANARY"
"""Set to 1 by the local engine when its containers run the real stack; 0 opts a local run out."""


def pipeline_canary(spec: Any, pack_uri: str, *, s3: Any, region: str) -> CanaryResult | None:
    """The canary of a local run's preflight step, on the packed model.tar.gz in S3; None when the
    engine did not ask for one (the light server, or ``DEPLOYBENCH_LOCAL_CANARY=0``)."""
    from workflows.aws.clients import split_s3_uri
    from workflows.hosting.image_choice import image_for
    from workflows.images.table import HF_INFERENCE

    if os.environ.get(CANARY_ENV) != "1":
        return None
    types = getattr(spec.hosting, "instance_type_fallbacks", None) or []
    image = image_for(HF_INFERENCE, spec.hosting, types[0] if types else None, region)
    bucket, key = split_s3_uri(pack_uri)
    with tempfile.TemporaryDirectory(prefix="deploybench-canary-pack-") as scratch:
        tarball = Path(scratch) / "model.tar.gz"
        s3.download_file(bucket, key, str(tarball))
        return run_canary(tarball, image=image, task=str(spec.model.task))
