"""F40: a request longer than the graph's position table must never reach it.

Two things keep it from happening, and both are read from the artifact itself:
- the serving code (``code/inference.py``) truncates what it tokenizes: a tokenizer call with
  ``truncation=True`` (transformers) or a tokenizers backend with ``enable_truncation``. Without it, a
  600-token request makes onnxruntime fail with ``indices element out of data bounds, idx=601 must be
  within the inclusive range [-514,513]``, while short requests succeed;
- the length it truncates to (the manifest's ``max_sequence_length``), plus the positions the family
  reserves (RoBERTa-style models start at ``padding_idx + 1``), fits the graph's position embeddings.
"""

from __future__ import annotations

import ast
from pathlib import Path

from workflows.contracts import Finding
from workflows.conversion.families import FAMILIES

# Calls that turn text into ids: a tokenizer called directly (transformers, or the packaged reader),
# or the encode methods of transformers' and tokenizers' APIs.
_ENCODE_METHODS = frozenset({"encode", "encode_plus", "batch_encode_plus", "encode_batch"})
_POSITION_TABLE = "position_embeddings.weight"
_LOADERS = frozenset({"AutoTokenizer", "Tokenizer", "PreTrainedTokenizerFast"})


def _callee(node: ast.Call) -> str:
    """The called name: ``tokenizer`` for ``self.tokenizer(...)`` and ``model["tokenizer"](...)``."""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Subscript) and isinstance(func.slice, ast.Constant):
        return str(func.slice.value)
    return ""


def _truncates(call: ast.Call) -> bool:
    value = next((k.value for k in call.keywords if k.arg == "truncation"), None)
    if value is None:
        return False
    return not (isinstance(value, ast.Constant) and value.value in (False, None, "do_not_truncate"))


def tokenizer_calls(code: str) -> tuple[list[int], list[int]]:
    """The lines of ``code`` that tokenize without truncation, and those that truncate.

    A tokenizing call is a tokenizer object called (``tokenizer(...)``, ``self.tokenizer(...)``) or an
    encode method; the file's own functions (a ``load_tokenizer``) and the classes that load one are
    not. An encode method of a backend on which the code enables truncation counts as truncating (the
    tokenizers library truncates by state, not by argument).
    """
    tree = ast.parse(code)
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    enabled = any(_callee(c) == "enable_truncation" for c in calls)
    bare: list[int] = []
    truncating: list[int] = []
    for call in calls:
        name = _callee(call)
        encodes = name in _ENCODE_METHODS
        if not encodes and not (name.lower().endswith("tokenizer") and name not in own | _LOADERS):
            continue
        (truncating if _truncates(call) or (enabled and encodes) else bare).append(call.lineno)
    return sorted(bare), sorted(truncating)


def position_rows(onnx_path: Path) -> int | None:
    """The rows of the graph's absolute position embeddings; None where it has none (relative
    positions, or a table under another name) or cannot be read."""
    import onnx
    from google.protobuf.message import DecodeError

    try:
        graph = onnx.load(str(onnx_path), load_external_data=False).graph
    except (DecodeError, OSError, ValueError):  # an unreadable graph is F22's finding, not this one's
        return None
    rows = [int(i.dims[0]) for i in graph.initializer if i.name.endswith(_POSITION_TABLE) and i.dims]
    return rows[0] if rows else None


def position_offset(architecture: str) -> int:
    """The positions the architecture's family reserves ahead of the first token (RoBERTa: 2)."""
    squashed = architecture.lower()
    keys = sorted(FAMILIES, key=len, reverse=True)
    key = next((k for k in keys if squashed.startswith(k.replace("-", "").replace("_", ""))), None)
    return FAMILIES[key].position_offset if key else 0


def check_positions(
    *, code: str, max_sequence_length: int, rows: int | None, architecture: str
) -> list[Finding]:
    """F40, from the serving code's tokenizer calls and the graph's position table."""
    findings = []
    bare, truncating = tokenizer_calls(code)
    if bare and not truncating:
        findings.append(
            Finding(
                id="F40",
                severity="blocking",
                message="code/inference.py tokenizes without truncation: a request longer than the model's "
                f"{max_sequence_length} positions would fail with onnxruntime's 'indices element out of data "
                "bounds' while short requests succeed.",
                fix="pass truncation=True, max_length=<the manifest's max_sequence_length> to the tokenizer "
                "call (or serve with the packaged code/inference.py, which does)",
                evidence=f"tokenizer calls without truncation at code/inference.py lines {bare}",
            )
        )
    if rows is not None:
        offset = position_offset(architecture)
        if max_sequence_length + offset > rows:
            findings.append(
                Finding(
                    id="F40",
                    severity="blocking",
                    message=f"the serving code truncates to {max_sequence_length} tokens, but the graph's "
                    f"position table has {rows} rows ({architecture} reserves {offset}): a request of "
                    f"{rows - offset + 1} tokens or more would fail with 'indices element out of data bounds'.",
                    fix=f"convert again with model.max_sequence_length at most {rows - offset}",
                    evidence=f"max_sequence_length {max_sequence_length} + {offset} > {rows} position rows",
                )
            )
    return findings
