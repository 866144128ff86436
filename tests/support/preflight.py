"""Shared by preflight tests: the field's images and a compact view of findings."""

from __future__ import annotations

from workflows.contracts import Finding

HF_CPU = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"


HF_GPU = "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:2.6.0-transformers4.51.3-gpu-py312-cu124-ubuntu22.04"


def ids(findings: list[Finding]) -> list[tuple[str, str]]:
    return [(f.id, f.severity) for f in findings]
