"""Export a Hugging Face encoder to ONNX, with pooling or logits inside the graph."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workflows.conversion.families import takes_token_type_ids
from workflows.conversion.pooling import Pooling, choose_pooling
from workflows.conversion.source import ModelFolder
from workflows.errors import ConversionFailed


@dataclass
class ExportedModel:
    onnx_path: Path
    inputs: list[str]
    outputs: list[str]
    labels: list[str] = field(default_factory=list)
    pooling: str | None = None
    normalize: bool = False


def load_torch_model(model: ModelFolder, task: str) -> Any:
    """The eager-attention PyTorch model (fusion needs it: sdpa exports stay unfused)."""
    from transformers import AutoModel, AutoModelForSequenceClassification

    loader = AutoModelForSequenceClassification if task == "classification" else AutoModel
    try:
        return loader.from_pretrained(str(model.path), attn_implementation="eager").eval()
    except Exception as error:  # transformers raises many types for a broken folder
        raise ConversionFailed(f"loading {model.path} with transformers failed: {error}") from error


def graph_inputs(tokenizer: Any, torch_model: Any) -> list[str]:
    """The tokenizer outputs the model uses, in the tokenizer's order (F03: never feed more)."""
    import inspect

    accepted = set(inspect.signature(torch_model.forward).parameters)
    names = [n for n in tokenizer.model_input_names if n in accepted]
    if "input_ids" not in names or "attention_mask" not in names:
        raise ConversionFailed(
            f"tokenizer emits {tokenizer.model_input_names}, but the model needs input_ids and attention_mask",
            fix="save the model's own tokenizer into the folder",
        )
    if not takes_token_type_ids(torch_model.config):
        names = [n for n in names if n != "token_type_ids"]
    return names


def encoder_graph(torch_model: Any, task: str, input_names: list[str], pooling: str, normalize: bool) -> Any:
    """Wrap the model so that the exported graph returns what the server sends back."""
    import torch

    class _Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = torch_model
            self.input_names = list(input_names)

        def forward(self, *tensors: Any) -> Any:
            # Keyword arguments: positional ones break on transformers 5 ("multiple values for use_cache").
            out = self.model(**dict(zip(input_names, tensors, strict=True)))
            if task == "classification":
                return out.logits
            hidden = out.last_hidden_state
            if pooling == "cls":
                pooled = hidden[:, 0]
            elif pooling == "last_token":
                # The first position where the running count of real tokens reaches its total is the
                # last real token, with padding on either side.
                mask = tensors[input_names.index("attention_mask")]
                last = torch.cumsum(mask, dim=1).argmax(dim=1)
                pooled = hidden[torch.arange(hidden.shape[0]), last]
            else:
                mask = tensors[input_names.index("attention_mask")].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1) if normalize else pooled

    return _Graph().eval()


def graph_io(path: Path) -> tuple[list[str], list[str]]:
    """The input and output names of an ONNX file, as onnxruntime will see them."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    return inputs, [o.name for o in model.graph.output]


def export_onnx(
    model: ModelFolder,
    task: str,
    tokenizer: Any,
    out_path: Path,
    *,
    opset: int,
    pooling: Pooling | None = None,
) -> tuple[ExportedModel, Any]:
    """TorchScript export with dynamic batch and sequence axes; returns the wrapped torch module too.

    TorchScript rather than dynamo: it exports in seconds (dynamo took 6-10x longer) and is the
    route onnxruntime's BERT fusion rules match. Its graph may drop an input the model ignores,
    so the returned inputs are read back from the file.
    """
    import torch

    torch_model = load_torch_model(model, task)
    inputs = graph_inputs(tokenizer, torch_model)
    if task == "embedding" and pooling is None:
        pooling = choose_pooling(model.path, pooling="auto", normalize=None)
    mode, normalize = (pooling.mode, pooling.normalize) if task == "embedding" and pooling else (None, False)
    graph = encoder_graph(torch_model, task, inputs, mode or "mean", normalize)
    sample = tokenizer(
        ["a short text", "a somewhat longer text for the export trace"], padding=True, return_tensors="pt"
    )
    output = "logits" if task == "classification" else "embeddings"
    axes = {name: {0: "batch", 1: "sequence"} for name in inputs}
    axes[output] = {0: "batch"}
    out_path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            # The tracer's warnings (legacy exporter, Python booleans in masking code) are about
            # shapes that are constant for an encoder; parity over mixed lengths is the real check.
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
    graph_inputs_found, graph_outputs = graph_io(out_path)
    exported = ExportedModel(out_path, graph_inputs_found, graph_outputs, labels, mode, normalize)
    return exported, graph
