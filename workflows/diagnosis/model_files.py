"""Whether a Triton model's file is there under another name (F23) rather than missing or cut short (F22).

Triton's backends look for one file name in each version folder: model.onnx for onnxruntime, model.plan for
tensorrt, model.pt for pytorch, model.py for python (or the config's default_model_filename). A load that fails
because that file is not found ("unable to find '/opt/ml/model/e5/1/model.onnx'", "unable to find 'model.onnx' for
model 'e5'", "failed to stat file
.../model.onnx") is F22 where the file never arrived, and F23 where the folder holds the weights under another
name, which a listing or the writer's tree shows ("e5/1/e5-base-v2.onnx").
"""

from __future__ import annotations

import re

from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.mentions import reading_of

_NOT_FOUND = re.compile(
    r"(?:unable to find|unable to load model|failed to stat file|could not find(?: model file)?|failed to find model file)\s*'?(?:[^'\s]{0,200}?/)?"
    r"model\.(?P<ext>onnx|plan|pt|py|savedmodel)\b",
    re.IGNORECASE,
)


def _other_names(evidence: Evidence) -> list[str]:
    """How the paste holds each file of the missing file's kind under another name: its mentions' polarities."""
    items = [item for item in evidence.items if not item.whole]
    wanted = {found["ext"].lower() for item in items for found in _NOT_FOUND.finditer(item.text)}
    if not wanted:
        return []
    other = re.compile(rf"(?<![\w.-])(?!model\.)[\w.-]+\.(?:{'|'.join(sorted(wanted))})\b", re.IGNORECASE)
    return [reading_of(item, m).polarity for item in items for m in other.finditer(item.text)]


def model_file_misnamed(evidence: Evidence) -> bool | None:
    """True where the backend's file was not found and the paste shows a file of its kind under another name;
    None where no such file was looked for, or none is shown. Supposed is not shown: "파일 이름을 bge_m3.onnx 로
    넣은 건지 ... 알 듯" asks whether it was."""
    return True if "affirmed" in _other_names(evidence) else None


def model_file_name_open(evidence: Evidence) -> bool | None:
    """The paste names a file of the missing file's kind under another name in any way but a denial: shown, or
    raised as what may have happened. A missing or truncated file (F22) is then as open as the name (F23)."""
    return True if any(polarity != "negated" for polarity in _other_names(evidence)) else None


# A quantized graph beside the exported one in the folder the loader reads ("model_quantized.onnx", "model_int8.onnx")...
_QUANTIZED_FILE = re.compile(
    r"(?<![\w.-])[\w.-]*(?:quantized|int8|qint8|quant)[\w.-]*\.onnx\b", re.IGNORECASE
)
_STANDARD_FILE = re.compile(r"(?<![\w.-])model\.onnx\b")
# ... and optimum's loader called on the folder without naming the file.
# ... or the loaded model's path shown as the standard file ("m.model_path" -> PosixPath('onnx_out/model.onnx')).
_LOADED_STANDARD = re.compile(
    r"PosixPath\('(?:[^']*/)?model\.onnx'\)|\bmodel_path\b\W{0,12}[^\s]*model\.onnx\b"
    # ... or the server's log saying which file it loads ("ORTModelForFeatureExtraction: loading /opt/ml/model/model.onnx").
    r"|\bloading\s+(?:model\s+)?(?:from\s+)?'?(?:\S*/)?model\.onnx\b"
)
_LOADER_CALL = re.compile(r"\bORTModel\w*\.from_pretrained\((?P<args>[^)\n]*)\)")


def quantized_file_not_named(evidence: Evidence) -> bool | None:
    """F30 before its warning: the folder holds model.onnx and a quantized graph, and optimum's loader is called on
    it without file_name, so it loads model.onnx (its standard name) and the quantized graph is never served."""
    texts = [item.text for item in evidence.items if not item.whole] + evidence.commands
    calls = [m for text in texts for m in _LOADER_CALL.finditer(text)]
    loaded = any(_LOADED_STANDARD.search(text) for text in texts)
    # ... a file_name of None names none ("from_pretrained('out/', file_name=None)").
    if not (calls or loaded) or any(re.search(r"\bfile_name\b(?!\s*=\s*None\b)", m["args"]) for m in calls):
        return None
    both = any(_QUANTIZED_FILE.search(t) for t in texts) and any(_STANDARD_FILE.search(t) for t in texts)
    return True if both else None
