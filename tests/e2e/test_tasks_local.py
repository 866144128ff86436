"""Each task through the local engine's real container stack, and an hf:// source through the CLI.

Slow: every test converts a model and starts Multi Model Server in the local SageMaker (tens of
seconds each). The served answers are compared with transformers' own (tests/support/tasks.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from tests.conftest import ROOT, fast_spec
from tests.support.hub import local_hub
from tests.support.tasks import build_cross_encoder, reference_embeddings, reference_logits, with_st_layout
from workflows.contracts import PipelineState
from workflows.execution.pipeline import follow
from workflows.local.engine import LocalEngine

pytestmark = pytest.mark.slow

TEXTS = ["A short text.", "A somewhat longer text about the weather in Lisbon this week.", "Three words here"]
PAIRS = [["A man is eating.", "Someone eats food."], ["The sky is blue.", "It is raining hard."]]


def served(
    source: Path, tmp_path: Path, requests: list[dict[str, Any]], **model: Any
) -> list[dict[str, Any]]:
    """Run the deploy pipeline on the real stack keeping the endpoint, then send ``requests`` to it."""
    spec = fast_spec(source, model=model, keep_endpoint=True)
    state = PipelineState(run_id=f"task-{model.get('task', 'embedding')[:8]}", spec=spec)
    with LocalEngine(workdir=tmp_path / "engine", serving="mms") as engine:
        arn = engine.start_execution("deploy_pipeline", state.model_dump(mode="json"), name=state.run_id)
        outcome = follow(engine.client("stepfunctions"), arn, poll_s=0.5, timeout_s=900)
        assert outcome.status == "SUCCEEDED", outcome.cause
        runtime = engine.client("sagemaker-runtime")
        name = outcome.output["deploy"]["endpoint_name"]
        answers = [
            json.loads(
                runtime.invoke_endpoint(
                    EndpointName=name, ContentType="application/json", Body=json.dumps(request)
                )["Body"].read()
            )  # fmt: skip
            for request in requests
        ]
    return answers


def test_embeddings_served_by_the_stack_are_pooled_as_the_layout_says(
    tiny_bert: Path, tmp_path: Path
) -> None:
    folder = with_st_layout(tiny_bert, tmp_path / "st", pooling="cls", normalize=False)
    (answer,) = served(folder, tmp_path, [{"inputs": TEXTS}])
    expected = reference_embeddings(folder, TEXTS, pooling="cls", normalize=False)
    assert np.abs(np.array(answer["embeddings"]) - expected).max() < 1e-4


def test_pairs_and_zero_shot_served_by_the_stack_match_transformers(tmp_path: Path) -> None:
    from transformers import pipeline

    from workflows.conversion.random_models import build_tiny_bert

    source = build_tiny_bert(tmp_path / "nli", task="classification")
    labels = ["weather", "sport"]
    zero_shot = {"candidate_labels": labels, "hypothesis_template": "This text is about {}."}
    pairs, zero = served(
        source,
        tmp_path,
        [{"inputs": PAIRS}, {"inputs": TEXTS[1], "parameters": zero_shot}],
        task="classification",
    )
    logits = reference_logits(source, [(a, b) for a, b in PAIRS])
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert np.allclose([p["score"] for p in pairs["predictions"]], probabilities.max(axis=1), atol=1e-4)
    reference = pipeline("zero-shot-classification", model=str(source), tokenizer=str(source), device="cpu")(
        TEXTS[1], **zero_shot
    )
    assert zero["predictions"][0]["labels"] == reference["labels"]
    assert np.allclose(zero["predictions"][0]["scores"], reference["scores"], atol=1e-4)


def test_reranking_served_by_the_stack_scores_each_passage(tmp_path: Path) -> None:
    source = build_cross_encoder(tmp_path / "reranker")
    query = "weather in Lisbon"
    (answer,) = served(source, tmp_path, [{"inputs": {"query": query, "passages": TEXTS}}], task="reranking")
    logits = reference_logits(source, [(query, p) for p in TEXTS])[:, 0]
    expected = 1 / (1 + np.exp(-logits))
    assert np.allclose(answer["scores"], expected, atol=1e-4)
    assert answer["ranking"] == [int(i) for i in np.argsort(-expected)]


def test_deploybench_run_local_downloads_a_hub_source_and_records_its_commit(
    tiny_bert: Path, tmp_path: Path
) -> None:
    # Given a private repo on a local Hub and a spec naming it by branch
    folder = tmp_path / "repo"
    shutil.copytree(tiny_bert, folder)
    command: Callable[[Path], list[str]] = lambda spec: [  # noqa: E731 - one command line, read once
        sys.executable, "-m", "workflows.cli", "run", str(spec), "--local", "--results-dir", str(tmp_path / "out")
    ]  # fmt: skip
    spec = fast_spec("hf://acme/tiny-bert").model_dump(mode="json", exclude_defaults=True)
    spec_path = tmp_path / "hub.yaml"
    spec_path.write_text(yaml.safe_dump({**spec, "name": "hub-run"}), encoding="utf-8")
    with local_hub() as hub:
        commit = hub.add("acme/tiny-bert", folder, token="hf_local")
        environment = {**os.environ, "HF_ENDPOINT": hub.url, "HF_TOKEN": "hf_local", "HF_HUB_OFFLINE": "0"}
        # When `deploybench run --local` runs it
        completed = subprocess.run(command(spec_path), capture_output=True, text=True, timeout=1800,
                                   cwd=ROOT, env=environment)  # fmt: skip
        downloaded = hub.downloaded()
    # Then it succeeded, downloaded the weights from the local Hub, and recorded the commit
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-4000:]
    assert "Execution SUCCEEDED" in completed.stdout
    assert "model.safetensors" in downloaded
    [result_path] = list((tmp_path / "out").glob("*/result.json"))
    result = json.loads(result_path.read_text())
    assert result["model_source"] == {
        "source": f"hf://acme/tiny-bert@{commit}", "repo": "acme/tiny-bert", "revision": commit, "commit": commit
    }  # fmt: skip
    assert result["convert"]["manifest"]["hub"]["commit"] == commit
