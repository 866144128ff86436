"""Triton model repositories: config syntax (F19), file name per backend (F23), weights present (F22).

``config.pbtxt`` is parsed with the real ``inference.ModelConfig`` protobuf that tritonclient
ships, so what passes here parses in the server.
"""

from __future__ import annotations

from pathlib import Path

from workflows.contracts import Finding, PreflightResult

# Without default_model_filename, Triton looks for this file in each version folder.
FILE_BY_BACKEND = {
    "onnxruntime": "model.onnx",
    "python": "model.py",
    "tensorrt": "model.plan",
    "pytorch": "model.pt",
    "tensorflow": "model.savedmodel",
    "openvino": "model.xml",
}
FILE_BY_PLATFORM = {
    "onnxruntime_onnx": "model.onnx",
    "tensorrt_plan": "model.plan",
    "pytorch_libtorch": "model.pt",
    "tensorflow_savedmodel": "model.savedmodel",
    "tensorflow_graphdef": "model.graphdef",
}
# A weight file under this size is an interrupted download (the field's empty 1 GB model folder).
MIN_WEIGHT_BYTES = 1_000_000


def parse_config(text: str) -> object:
    """The parsed ModelConfig.

    Raises:
        google.protobuf.text_format.ParseError: with line:column, like the server's own message.
    """
    from google.protobuf import text_format
    from tritonclient.grpc import model_config_pb2

    return text_format.Parse(text, model_config_pb2.ModelConfig())


def check_config_syntax(text: str, *, origin: str) -> list[Finding]:
    """F19: config.pbtxt is protobuf text format, not JSON (list elements need commas)."""
    from google.protobuf import text_format

    try:
        parse_config(text)
    except text_format.ParseError as error:
        return [
            Finding(
                id="F19",
                severity="blocking",
                message=f"{origin} does not parse as inference.ModelConfig: {error}. Triton would stop with "
                "'failed to load all models'.",
                fix='protobuf text needs commas between list elements (",\\n".join, not "\\n".join); '
                "fix the generator",
                evidence=str(error),
            )
        ]
    return []


def expected_file(config: object) -> str | None:
    """The model file Triton looks for, or None for an ensemble (no file of its own)."""
    default = getattr(config, "default_model_filename", "")
    if default:
        return str(default)
    platform = str(getattr(config, "platform", ""))
    if platform == "ensemble":
        return None
    backend = str(getattr(config, "backend", ""))
    return FILE_BY_BACKEND.get(backend) or FILE_BY_PLATFORM.get(platform)


def check_model_folder(folder: Path) -> list[Finding]:
    """One model of a repository: its config parses (F19), each version folder holds the file its
    backend loads (F23) and that file is complete (F22)."""
    config_path = folder / "config.pbtxt"
    if not config_path.is_file():
        return []
    findings = check_config_syntax(config_path.read_text(encoding="utf-8"), origin=str(config_path))
    if findings:
        return findings
    config = parse_config(config_path.read_text(encoding="utf-8"))
    expected = expected_file(config)
    if expected is None:
        return []
    versions = sorted(p for p in folder.iterdir() if p.is_dir() and p.name.isdigit())
    if not versions:
        return [_incomplete(folder, f"no version folder (e.g. {folder.name}/1/{expected})")]
    for version in versions:
        target = version / expected
        present = sorted(p.name for p in version.iterdir())
        if not target.exists():
            if present:
                findings.append(
                    Finding(
                        id="F23",
                        severity="blocking",
                        message=f"{version} holds {present} but its backend loads {expected}: Triton answers "
                        "'unable to find backend library' / fails to load the model.",
                        fix=f"name the file {expected}, or set default_model_filename in config.pbtxt",
                        evidence=f"{folder.name}: expected {expected}, found {present}",
                    )
                )
            else:
                findings.append(_incomplete(version, f"{version} is empty"))
        elif target.is_file() and expected != "model.py" and target.stat().st_size < MIN_WEIGHT_BYTES:
            findings.append(_incomplete(version, f"{target} is {target.stat().st_size} bytes"))
    return findings


def _incomplete(where: Path, evidence: str) -> Finding:
    return Finding(
        id="F22",
        severity="blocking",
        message=f"{where}: the model file is missing or truncated (an interrupted download leaves an empty "
        "version folder); Triton stops with 'failed to load all models' though the config is valid.",
        fix="rebuild the model repository; every weight file must exist and be at least 1 MB",
        evidence=evidence,
    )


def check_repository(root: Path) -> list[Finding]:
    """Every model folder of a Triton model repository."""
    findings: list[Finding] = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        findings.extend(check_model_folder(folder))
    return findings


def is_model_repository(path: Path) -> bool:
    """A folder whose model folders hold ``config.pbtxt`` (a Triton model repository, not an artifact)."""
    return path.is_dir() and any(path.glob("*/config.pbtxt")) and not (path / "config.pbtxt").exists()


def check_repository_result(root: Path) -> PreflightResult:
    """``deploybench preflight --artifact REPOSITORY``: the repository's checks as one result."""
    return PreflightResult(
        findings=check_repository(root),
        checked=[f"F19/F23/F22 Triton model repository {root}: config.pbtxt syntax, backend files, weights"],
    )
