"""F40: the serving code truncates, and what it truncates to fits the graph's position table."""

from __future__ import annotations

from pathlib import Path

import onnx
import pytest
from onnx import TensorProto, helper

from tests.support.preflight import ids
from workflows.preflight.positions import check_positions, position_offset, position_rows, tokenizer_calls

PACKAGED = Path(__file__).resolve().parents[2] / "artifacts" / "code" / "inference.py"

BARE = """
from transformers import AutoTokenizer

def model_fn(model_dir):
    return {"tokenizer": AutoTokenizer.from_pretrained(model_dir)}

def predict_fn(data, model):
    encoded = model["tokenizer"](data["inputs"], padding=True, return_tensors="np")
    return encoded
"""

BACKEND = """
from tokenizers import Tokenizer

def model_fn(model_dir):
    backend = Tokenizer.from_file(model_dir + "/tokenizer.json")
    backend.enable_truncation(512)
    return backend

def predict_fn(data, backend):
    return backend.encode_batch(data["inputs"])
"""


def test_the_packaged_serving_code_truncates() -> None:
    # Given the code/inference.py every artifact ships
    bare, truncating = tokenizer_calls(PACKAGED.read_text(encoding="utf-8"))
    # Then every tokenizer call it makes truncates
    assert bare == [] and truncating
    assert (
        check_positions(
            code=PACKAGED.read_text(encoding="utf-8"),
            max_sequence_length=512,
            rows=514,
            architecture="XLMRobertaModel",
        )
        == []
    )


def test_serving_code_that_tokenizes_without_truncation_is_blocking() -> None:
    # Given a handler that pads but never truncates
    findings = check_positions(code=BARE, max_sequence_length=512, rows=512, architecture="BertModel")
    # Then F40 blocks, naming the line and the fix
    assert ids(findings) == [("F40", "blocking")]
    assert "line" in findings[0].evidence and "[8]" in findings[0].evidence
    assert "truncation=True" in (findings[0].fix or "")


def test_a_backend_that_enables_truncation_passes() -> None:
    assert tokenizer_calls(BACKEND) == ([], [10])
    assert check_positions(code=BACKEND, max_sequence_length=512, rows=512, architecture="BertModel") == []


@pytest.mark.parametrize(
    ("length", "rows", "architecture", "blocked"),
    [
        (512, 512, "BertModel", False),
        (512, 514, "XLMRobertaForSequenceClassification", False),
        (513, 514, "XLMRobertaForSequenceClassification", True),
        (512, 512, "RobertaModel", True),
    ],
)
def test_the_truncation_length_fits_the_position_table(
    length: int, rows: int, architecture: str, blocked: bool
) -> None:
    findings = check_positions(
        code=PACKAGED.read_text(encoding="utf-8"),
        max_sequence_length=length,
        rows=rows,
        architecture=architecture,
    )
    assert bool(findings) is blocked
    if blocked:
        assert f"at most {rows - position_offset(architecture)}" in (findings[0].fix or "")


def test_position_rows_are_read_from_the_graph(tmp_path: Path) -> None:
    # Given a graph whose embeddings hold a 514-row position table
    table = helper.make_tensor(
        "embeddings.position_embeddings.weight", TensorProto.FLOAT, [514, 2], [0.0] * 1028
    )
    graph = helper.make_graph(
        [helper.make_node("Gather", ["embeddings.position_embeddings.weight", "ids"], ["out"])],
        "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 2])],
        [table],
    )
    path = tmp_path / "model.onnx"
    onnx.save(helper.make_model(graph), str(path))
    assert position_rows(path) == 514
    # And a graph without one (relative positions) has none to check
    graph.ClearField("initializer")
    onnx.save(helper.make_model(graph), str(path))
    assert position_rows(path) is None


def test_an_unreadable_graph_has_no_position_table_to_check(tmp_path: Path) -> None:
    # Given a graph cut off mid-way (F22 reports it)
    path = tmp_path / "model.onnx"
    path.write_bytes(b"\x08\x07\x12\x05trunc\x3a\xff\xff")
    # Then this check reads no table rather than raising
    assert position_rows(path) is None
