"""The Triton tokenizer ensemble on an image without ``tokenizers``: pack stages the real wheel of the
release that wrote tokenizer.json, and the python-backend model loads from it alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np

from tests.support.hosting import request
from workflows.artifact.vendoring import tokenizers_version, vendor_triton_tokenizer
from workflows.hosting.triton_repository import TOKENIZER_WHEEL

MODEL = Path("artifacts/triton/tokenizer_model.py")

# The python backend's view: numpy (Triton's image has it) and the standard library, no site-packages.
LOAD = """
import importlib.util, json, sys
sys.path = [p for p in sys.path if "site-packages" not in p] + [sys.argv[2]]
spec = importlib.util.spec_from_file_location("model", sys.argv[1] + "/model.py")
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
model = module.TritonPythonModel()
config = {"parameters": {"max_length": {"string_value": "32"}, "outputs": {"string_value": "input_ids"}}}
repository, version = sys.argv[1].rsplit("/", 1)
model.initialize({"model_config": json.dumps(config), "model_repository": repository, "model_version": version})
import tokenizers
ids = module.encode(model.tokenizer, ["a short text", "a much longer text about encoders"], model.outputs)
print(json.dumps({"from": tokenizers.__file__, "ids": ids["input_ids"].tolist()}))
"""


def test_pack_stages_the_wheel_and_the_tokenizer_model_loads_from_it_alone(
    tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given the converted artifact and a Triton spec with the tokenizer ensemble
    root = tmp_path / "artifact"
    shutil.copytree(tiny_artifact, root)
    spec = request({"mode": "triton", "instance_type_fallbacks": ["ml.g5.xlarge"]}).spec
    # When pack stages the tokenizers wheel
    name = vendor_triton_tokenizer(root, spec)
    # Then it is the release that wrote tokenizer.json, built for any CPython >= 3.10 on x86-64 Linux
    assert name is not None and name.startswith(f"tokenizers-{tokenizers_version(root)}-")
    assert "abi3" in name and "x86_64" in name
    assert zipfile.is_zipfile(root / TOKENIZER_WHEEL)
    # And a version folder laid out as Triton's (model.py, tokenizer.json, the wheel) loads and encodes
    # in a Python whose only packages are numpy's: tokenizers comes from the shipped wheel
    folder = tmp_path / "repository" / "tokenizer" / "1"
    folder.mkdir(parents=True)
    shutil.copy(MODEL, folder / "model.py")
    shutil.copy(root / "tokenizer" / "tokenizer.json", folder / "tokenizer.json")
    shutil.copy(root / TOKENIZER_WHEEL, folder / "tokenizers.whl")
    only_numpy = tmp_path / "only-numpy"
    only_numpy.mkdir()
    site = Path(np.__file__).parent.parent
    for entry in site.glob("numpy*"):
        if entry.is_dir() and not entry.name.endswith(".dist-info"):
            (only_numpy / entry.name).symlink_to(entry)
    done = subprocess.run(
        [sys.executable, "-I", "-c", LOAD, str(folder), str(only_numpy)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert "/tokenizers-" in loaded["from"] and "site-packages" not in loaded["from"]
    # And the ids are the ones the artifact's own tokenizer gives
    from tokenizers import Tokenizer

    reference = Tokenizer.from_file(str(root / "tokenizer" / "tokenizer.json"))
    reference.enable_truncation(max_length=32)
    reference.enable_padding()
    expected = [e.ids for e in reference.encode_batch(["a short text", "a much longer text about encoders"])]
    assert loaded["ids"] == expected


def test_only_a_triton_tokenizer_ensemble_gets_the_wheel(tiny_artifact: Path, tmp_path: Path) -> None:
    # Given a real-time spec and a Triton spec that serves token ids, Then pack stages no wheel
    realtime = request({"mode": "realtime", "instance_type_fallbacks": ["ml.c6i.xlarge"]}).spec
    ids_only = request(
        {"mode": "triton", "instance_type_fallbacks": ["ml.g5.xlarge"], "tokenizer_ensemble": False}
    ).spec
    assert vendor_triton_tokenizer(tiny_artifact, realtime) is None
    assert vendor_triton_tokenizer(tiny_artifact, ids_only) is None
    assert not (tiny_artifact / TOKENIZER_WHEEL).exists()
