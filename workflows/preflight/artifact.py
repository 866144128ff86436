"""Artifact checks: what the serving code imports is installed (F01, F17, F28), the tokenizer feeds
what the graph takes (F03), and every file is complete (F22)."""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

from workflows.artifact.requirements import requirement_names
from workflows.contracts import Finding
from workflows.errors import ArtifactIncomplete

# What the Hugging Face PyTorch inference DLC ships: torch and transformers, not onnxruntime (F01).
HF_DLC_PROVIDES = frozenset(
    {
        "numpy",
        "torch",
        "transformers",
        "tokenizers",
        "huggingface_hub",
        "safetensors",
        "sagemaker_inference",
        "sagemaker_huggingface_inference_toolkit",
        "requests",
    }
)
# djl-inference *-cpu-full is Java-first: the field's model needed all of these (F17).
LMI_CPU_REQUIREMENTS = ("transformers", "torch", "sentencepiece", "protobuf", "peft", "accelerate")
# Distribution name -> module name, where they differ.
_MODULE_OF = {
    "onnxruntime-gpu": "onnxruntime",
    "onnxruntime-openvino": "onnxruntime",
    "scikit-learn": "sklearn",
    "protobuf": "google",
    "pyyaml": "yaml",
    "pillow": "PIL",
    "opencv-python": "cv2",
    "opencv-python-headless": "cv2",
}
# The field's failures come from these two modules; anything else unknown is a warning.
_FIELD_MODULES = {"onnxruntime": "F01"}


def distribution_of(module: str) -> str:
    """The distribution that installs top-level ``module`` (``sklearn`` -> ``scikit-learn``); a module
    whose table entries are variants of its own name (onnxruntime-gpu) is its own distribution."""
    names = [name for name, provided in _MODULE_OF.items() if provided == module]
    if not names or any(name.startswith(f"{module}-") for name in names):
        return module.replace("_", "-")
    return names[0]


def provided_modules(requirements: str) -> set[str]:
    """Module names that installing ``requirements`` makes importable."""
    return {_MODULE_OF.get(name, name.replace("-", "_")) for name in requirement_names(requirements)}


def imported_modules(code: str) -> set[str]:
    """Top-level modules a Python file imports, anywhere in it (model_fn imports lazily)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.Import):
            modules.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.add(node.module.split(".")[0])
    return modules


def check_requirements(
    *,
    code: str,
    requirements: str | None,
    provided: frozenset[str] = HF_DLC_PROVIDES,
    local_modules: frozenset[str] = frozenset(),
) -> list[Finding]:
    """F01: every module the serving code imports is in the container or in requirements.txt.
    F28: never optimum (it pins transformers<4.58 and clashes with the container's 5.x).

    Args:
        code: code/inference.py.
        requirements: code/requirements.txt, or None when the artifact has none.
        provided: modules the container image ships.
        local_modules: modules shipped next to inference.py in code/.
    """
    findings = []
    installed = provided_modules(requirements or "")
    needed = imported_modules(code) - set(sys.stdlib_module_names) - provided - local_modules - {"__future__"}
    for module in sorted(needed - installed):
        known = module in _FIELD_MODULES
        findings.append(
            Finding(
                id="F01",
                severity="blocking" if known else "warning",
                message=f"code/inference.py imports {module}, which the container does not ship and "
                "code/requirements.txt does not install: the endpoint would pass its health check and answer "
                f"every request with \"No module named '{module}'\".",
                fix=f"add {module}{'==<the version used for conversion>' if known else ''} to "
                "code/requirements.txt and repack",
                evidence=f"import {module}; requirements: {sorted(requirement_names(requirements or '')) or 'none'}",
            )
        )
    if requirements and any(name.startswith("optimum") for name in requirement_names(requirements)):
        findings.append(
            Finding(
                id="F28",
                severity="blocking",
                message="code/requirements.txt installs optimum, which pins transformers<4.58 and clashes with "
                "the container's transformers 5.x.",
                fix="remove optimum; serving needs only onnxruntime",
                evidence=", ".join(
                    sorted(n for n in requirement_names(requirements) if n.startswith("optimum"))
                ),
            )
        )
    return findings


def check_runtime_requirement(*, runtime: str, requirements: str | None) -> list[Finding]:
    """F01 for the runtime the serving plan names: the serving code imports OpenVINO by name only for
    an artifact whose plan says ``openvino``, so the import scan cannot see it; the plan can."""
    if runtime != "openvino" or "openvino" in requirement_names(requirements or ""):
        return []
    return [
        Finding(
            id="F01",
            severity="blocking",
            message="the serving plan runs the graph on OpenVINO, but code/requirements.txt does not install "
            "openvino: the model would fail to load with \"No module named 'openvino'\".",
            fix="convert again with convert.engine: openvino (it pins openvino in code/requirements.txt), or "
            "add openvino==<the version the artifact was checked with> and repack",
            evidence=f"serving.runtime openvino; requirements: {sorted(requirement_names(requirements or '')) or 'none'}",
        )
    ]


def check_lmi_requirements(*, image: str, requirements: str | None) -> list[Finding]:
    """F17: djl-inference CPU images have no Python model packages; GPU LMI images do."""
    tag = image.rsplit(":", 1)[-1]
    if "djl-inference" not in image or "cpu" not in tag:
        return []
    missing = [name for name in LMI_CPU_REQUIREMENTS if name not in requirement_names(requirements or "")]
    if not missing:
        return []
    return [
        Finding(
            id="F17",
            severity="blocking",
            message=f"{image} is the Java-first LMI CPU image: without {', '.join(missing)} in requirements.txt "
            "the model load fails with \"ModuleNotFoundError: No module named 'transformers'\" (or 'peft').",
            fix=f"add {' '.join(LMI_CPU_REQUIREMENTS)} to requirements.txt",
            evidence="requirements.txt "
            + ("absent" if requirements is None else f"lacks {', '.join(missing)}"),
        )
    ]


def tokenizer_outputs(folder: Path) -> list[str] | None:
    """The tensors the tokenizer emits: tokenizer_config.json's model_input_names, else the class's
    defaults through transformers; None when neither is available."""
    config_path = folder / "tokenizer_config.json"
    if config_path.is_file():
        names = json.loads(config_path.read_text(encoding="utf-8")).get("model_input_names")
        if names:
            return [str(n) for n in names]
    try:
        from transformers import AutoTokenizer
    except ImportError:
        return None
    return list(AutoTokenizer.from_pretrained(str(folder)).model_input_names)


def check_input_names(
    *, tokenizer_outputs: list[str], graph_inputs: list[str], serving_filters: bool
) -> list[Finding]:
    """F03: the tokenizer's outputs against the ONNX graph's inputs.

    Args:
        tokenizer_outputs: what the tokenizer emits (e.g. input_ids, token_type_ids, attention_mask).
        graph_inputs: the graph's inputs, from the artifact manifest.
        serving_filters: the serving code feeds only ``session.get_inputs()`` names.
    """
    findings = []
    lacking = [name for name in graph_inputs if name not in tokenizer_outputs]
    if lacking:
        findings.append(
            Finding(
                id="F03",
                severity="blocking",
                message=f"the graph requires {lacking} but the tokenizer emits only {tokenizer_outputs}: "
                "onnxruntime would refuse every request ('Required inputs ... are missing').",
                fix="export the graph with the tokenizer's inputs, or derive the missing input in the serving code",
                evidence=f"graph {graph_inputs}, tokenizer {tokenizer_outputs}",
            )
        )
    extra = [name for name in tokenizer_outputs if name not in graph_inputs]
    if extra and not serving_filters:
        findings.append(
            Finding(
                id="F03",
                severity="blocking",
                message=f"the tokenizer emits {extra}, which the graph does not take: every request would fail "
                f"with 'InvalidArgument: Invalid input name: {extra[0]}'.",
                fix="feed only {i.name for i in session.get_inputs()} in the serving code",
                evidence=f"graph {graph_inputs}, tokenizer {tokenizer_outputs}",
            )
        )
    return findings


def serving_code_filters_inputs(code: str) -> bool:
    """The serving code builds its feed from the session's declared inputs (F03's fix)."""
    return "get_inputs()" in code


def check_artifact_complete(root: Path) -> list[Finding]:
    """F22: every file the manifest names exists with its size and sha256, and the ONNX file loads."""
    from workflows.conversion.manifest import verify_artifact

    try:
        verify_artifact(root)
    except ArtifactIncomplete as error:
        return [
            Finding(
                id="F22",
                severity="blocking",
                message=f"the artifact is incomplete: {error.message}",
                fix=error.fix or "convert again",
                evidence=str(root),
            )
        ]
    return []
