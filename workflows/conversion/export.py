"""Export a Hugging Face encoder to ONNX, with pooling or logits inside the graph."""

from __future__ import annotations

import json
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflows.conversion.source import ModelFolder
from workflows.errors import ConversionFailed, UnsupportedArchitecture

# model_type -> onnxruntime.transformers optimizer model_type. DeBERTa-v2 is exported but gets no
# BERT attention fusion: the BERT rules do not match its disentangled attention, and the field saw
# an unbounded pass run 19 minutes at 27 GB (F34).
EXPORTABLE = {
    "bert": "bert",
    "roberta": "bert",
    "xlm-roberta": "bert",
    "distilbert": "bert",
    "mpnet": None,
    "deberta-v2": None,
}


@dataclass
class ExportedModel:
    onnx_path: Path
    inputs: list[str]
    outputs: list[str]
    labels: list[str] = field(default_factory=list)
    pooling: str | None = None
    normalize: bool = False


def _pooling(folder: Path) -> tuple[str, bool]:
    """Pooling mode and normalisation from a sentence-transformers folder (mean, normalised by default)."""
    pooling, normalize = "mean", True
    pooling_config = folder / "1_Pooling" / "config.json"
    if pooling_config.is_file():
        data = json.loads(pooling_config.read_text())
        if data.get("pooling_mode_cls_token"):
            pooling = "cls"
    modules = folder / "modules.json"
    if modules.is_file():
        normalize = any("Normalize" in m.get("type", "") for m in json.loads(modules.read_text()))
    return pooling, normalize


def load_torch_model(model: ModelFolder, task: str) -> Any:
    """The eager-attention PyTorch model (fusion needs it: sdpa exports stay unfused)."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    if model.model_type not in EXPORTABLE:
        raise UnsupportedArchitecture(
            f"architecture {model.architecture} (model_type '{model.model_type}') has no export route.",
            fix=f"use an encoder of type {', '.join(sorted(EXPORTABLE))}",
        )
    loader = AutoModelForSequenceClassification if task == "classification" else AutoModel
    try:
        return loader.from_pretrained(str(model.path), attn_implementation="eager").eval()
    except Exception as error:  # transformers raises many types for a broken folder
        raise ConversionFailed(f"loading {model.path} with transformers failed: {error}") from error


def graph_inputs(tokenizer: Any, torch_model: Any) -> list[str]:
    """The tokenizer outputs the model's forward() accepts (F03: never feed more)."""
    import inspect

    accepted = set(inspect.signature(torch_model.forward).parameters)
    names = [n for n in tokenizer.model_input_names if n in accepted]
    if "input_ids" not in names:
        raise ConversionFailed(
            f"tokenizer emits {tokenizer.model_input_names}, but the model needs input_ids"
        )
    if torch_model.config.model_type in {"roberta", "xlm-roberta"}:
        names = [n for n in names if n != "token_type_ids"]
    return names


def encoder_graph(torch_model: Any, task: str, input_names: list[str], pooling: str, normalize: bool) -> Any:
    """Wrap the model so that the exported graph returns what the server sends back."""
    import torch

    class _Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = torch_model

        def forward(self, *tensors: Any) -> Any:
            # Keyword arguments: positional ones break on transformers 5 ("multiple values for use_cache").
            out = self.model(**dict(zip(input_names, tensors, strict=True)))
            if task == "classification":
                return out.logits
            hidden = out.last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            else:
                mask = tensors[input_names.index("attention_mask")].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1) if normalize else pooled

    return _Graph().eval()


def export_onnx(
    model: ModelFolder, task: str, tokenizer: Any, out_path: Path, *, opset: int
) -> tuple[ExportedModel, Any]:
    """TorchScript export with dynamic batch and sequence axes; returns the wrapped torch module too."""
    import torch

    torch_model = load_torch_model(model, task)
    inputs = graph_inputs(tokenizer, torch_model)
    pooling, normalize = _pooling(model.path) if task == "embedding" else (None, False)
    graph = encoder_graph(torch_model, task, inputs, pooling or "mean", normalize)
    sample = tokenizer(
        ["a short text", "a somewhat longer text for the export trace"], padding=True, return_tensors="pt"
    )
    output = "logits" if task == "classification" else "embeddings"
    axes = {name: {0: "batch", 1: "sequence"} for name in inputs}
    axes[output] = {0: "batch"}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                graph,
                tuple(sample[name] for name in inputs),
                str(out_path),
                dynamo=False,
                input_names=inputs,
                output_names=[output],
                dynamic_axes=axes,
                opset_version=opset,
            )
    except Exception as error:
        out_path.unlink(missing_ok=True)
        raise ConversionFailed(f"torch.onnx.export of {model.architecture} failed: {error}") from error
    labels: list[str] = []
    if task == "classification":
        id2label = torch_model.config.id2label or {}
        labels = [str(id2label.get(i, f"LABEL_{i}")) for i in range(torch_model.config.num_labels)]
    exported = ExportedModel(out_path, inputs, [output], labels, pooling, normalize)
    return exported, graph


def optimize(model: ModelFolder, source: Path, target: Path) -> str:
    """Fuse attention/LayerNorm/GELU where the architecture has rules; returns what was done."""
    rules = EXPORTABLE.get(model.model_type)
    if rules is None:
        return "none (no fusion rules for this architecture)"
    from onnxruntime.transformers import optimizer

    config = model.config
    optimized = optimizer.optimize_model(
        str(source),
        model_type=rules,
        num_heads=int(config.get("num_attention_heads", 0)),
        hidden_size=int(config.get("hidden_size", 0)),
        opt_level=1,
    )
    optimized.save_model_to_file(str(target))
    fused = {k: v for k, v in optimized.get_fused_operator_statistics().items() if v}
    return f"onnxruntime.transformers {rules} opt_level 1: " + ", ".join(
        f"{k}×{v}" for k, v in sorted(fused.items())
    )
