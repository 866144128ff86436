"""Slow tier: every architecture converted with parity, served by the real container stack, and run.

Each family's random-weight classifier (tokenizer trained and saved by the installed transformers) is
converted; its artifact must answer single texts and pairs as transformers does in process; then it is
served by the HF inference toolkit on Multi Model Server in the DLC-like environment of the older
transformers 4.51.3 image (so a tokenizer saved by transformers 5 must still load: F35), and
``deploybench run --local`` must succeed on it. Skips, saying why, where that stack is unavailable.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.conftest import ROOT, convert_folder
from tests.support.architectures import ARCHITECTURES, PAIRS, SINGLES, reference_outputs
from tests.support.local_sagemaker import (
    HF_IMAGE,
    container,
    deploy,
    endpoint_settled,
    runtime,
    upload_artifact,
)
from workflows.container.environment import resolve_serving_stack
from workflows.conversion.portable_tokenizer import serving_module
from workflows.local.engine import LocalEngine

ModelFactory = Callable[..., Path]
pytestmark = [pytest.mark.slow, pytest.mark.matrix]


def softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return np.asarray(shifted / shifted.sum(axis=1, keepdims=True))


def check_answer(answer: dict[str, Any], logits: np.ndarray, labels: list[str]) -> None:
    """The served labels and scores are the argmax and softmax of the in-process logits."""
    expected = softmax(logits)
    assert len(answer["predictions"]) == len(expected)
    for row, prediction in enumerate(answer["predictions"]):
        assert prediction["label"] == labels[int(expected[row].argmax())]
        assert abs(prediction["score"] - float(expected[row].max())) < 1e-4


@pytest.fixture(scope="module")
def stack() -> Any:
    chosen = resolve_serving_stack("auto", image=HF_IMAGE)
    if chosen.kind != "mms":
        pytest.skip(f"the DLC's serving stack is not available here: {chosen.reason}")
    return chosen


@pytest.fixture(scope="module")
def engine(stack: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalEngine]:
    with LocalEngine(workdir=tmp_path_factory.mktemp("arch-engine"), serving="mms") as running:
        yield running


@pytest.mark.parametrize("family", sorted(ARCHITECTURES))
def test_each_architecture_converts_serves_and_runs(
    family: str, random_model: ModelFactory, engine: LocalEngine, stack: Any, tmp_path: Path
) -> None:
    started = time.monotonic()
    # Given the family's classifier, converted (the parity gate runs on 64 pairs)
    source = random_model(family, "classification")
    artifact = convert_folder(source, tmp_path)
    manifest = json.loads((artifact / "deploybench-manifest.json").read_text())
    assert manifest["parity"]["passed"] and manifest["parity"]["max_abs_diff"] < 1e-4
    labels = manifest["labels"]
    # Then in process the artifact answers single texts and pairs as transformers does
    serving = serving_module()
    model = serving.model_fn(str(artifact))
    for inputs in (SINGLES, PAIRS):
        body = json.dumps({"inputs": [i if isinstance(i, str) else list(i) for i in inputs]})
        answer = serving.predict_fn(serving.input_fn(body, "application/json"), model)
        check_answer(answer, reference_outputs(source, "classification", inputs), labels)
    # When it is served by the real container stack of the transformers 4.51.3 image
    sagemaker = engine.client("sagemaker")
    name = f"arch-{family}"
    uri = upload_artifact(engine, artifact, f"{name}/model.tar.gz", tmp_path)
    deploy(sagemaker, name, {"PrimaryContainer": container(uri, HF_IMAGE)})
    assert endpoint_settled(sagemaker, name, timeout_s=900)[-1]["EndpointStatus"] == "InService"
    # Then the served answers equal the in-process reference, for pairs and single texts
    for inputs in (PAIRS, SINGLES):
        body = json.dumps({"inputs": [i if isinstance(i, str) else list(i) for i in inputs]})
        response = runtime(engine).invoke_endpoint(
            EndpointName=name, Body=body, ContentType="application/json"
        )
        check_answer(
            json.loads(response["Body"].read()), reference_outputs(source, "classification", inputs), labels
        )
    sagemaker.delete_endpoint(EndpointName=name)
    # And `deploybench run --local` on the same model succeeds through the same stack
    spec = {
        "name": f"arch-{family}",
        "model": {"source": str(source), "task": "classification", "max_sequence_length": 64},
        "hosting": {"instance_type_fallbacks": ["ml.c6i.xlarge"], "image_version": "4.51.3"},
        "benchmark": {
            "batch_sizes": [1],
            "sequence_lengths": ["natural"],
            "min_duration_s": 0.3,
            "min_requests": 3,
            "max_duration_s": 1.5,
            "warmup_max_requests": 10,
            "concurrency": [1],
        },
    }
    spec_path = tmp_path / "spec.yaml"
    spec_path.write_text(yaml.safe_dump(spec))
    command = [
        sys.executable,
        "-m",
        "workflows.cli",
        "run",
        str(spec_path),
        "--local",
        "--results-dir",
        str(tmp_path),
    ]
    completed = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=1800,
        cwd=ROOT,
        env={**os.environ, "DEPLOYBENCH_LOCAL_SERVER": "mms"},
    )
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    [result_path] = list(tmp_path.glob("*/result.json"))
    result = json.loads(result_path.read_text())
    assert result["status"] == "SUCCEEDED"
    assert result["convert"]["manifest"]["tokenizer"]["loader"] == "tokenizers"
    # And the pre-spend canary ran in the preflight step, in the image's transformers
    canary = result["preflight"]["canary"]
    assert canary["outcome"] == "passed" and canary["versions"]["transformers"] == "4.51.3"
    [shape] = result["benchmark"]["shapes"]
    print(f"{family}: p50 {shape['p50_ms']:.2f} ms at b1 natural; test {time.monotonic() - started:.0f} s")
