"""Diagnosis: turn a caught error's evidence into a failure catalogue entry.

Each rule matches stable fragments of the field's messages (names and numbers vary around
them). An error no rule explains is reported as ``unknown`` with its evidence, never forced
into an entry.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from workflows.contracts import Diagnosis, ErrorInfo


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    patterns: tuple[str, ...]
    action: str
    errors: tuple[str, ...] = ()

    def match(self, error: ErrorInfo) -> list[str]:
        if self.errors and error.Error not in self.errors:
            return []
        text = f"{error.Error}: {error.Cause}"
        return [m.group(0) for p in self.patterns if (m := re.search(p, text, re.IGNORECASE))]


RULES: tuple[Rule, ...] = (
    Rule(
        "F06",
        "capacity stall: no instance assigned",
        (r"no ProductionVariants", r"no instance was assigned"),
        "next_instance_type",
        ("CapacityStall",),
    ),
    Rule(
        "F01",
        "onnxruntime missing from the container",
        (r"No module named \\?['\"]?onnxruntime",),
        "add_requirement",
    ),
    Rule("F03", "tokenizer output the graph does not take", (r"Invalid input name:\s*\w+",), "fail"),
    Rule(
        "F20",
        "CUDA driver too old for the image (error 803)",
        (r"error 803", r"unsupported display driver\s*/\s*cuda driver"),
        "newer_ami",
    ),
    Rule(
        "F04",
        "GPU instance in multi-container Direct mode",
        (r"not supported for a Model using Direct InferenceExecutionMode",),
        "fail",
    ),
    Rule("F02", "model server worker died (memory)", (r"Worker died",), "single_worker"),
    Rule(
        "F22",
        "artifact missing or truncated",
        (r"truncated", r"missing from", r"does not match its sha256"),
        "fail",
        ("ArtifactIncomplete",),
    ),
)


def diagnose(error: ErrorInfo) -> Diagnosis:
    """The first rule whose fragments appear in the error; ``unknown`` otherwise."""
    for rule in RULES:
        evidence = rule.match(error)
        if evidence:
            return Diagnosis(
                id=rule.id, title=rule.title, evidence=evidence, action=rule.action, confidence=0.9
            )
    return Diagnosis(
        id="unknown",
        title=f"no catalogue entry matches {error.Error}",
        evidence=[f"{error.Error}: {error.Cause[:500]}"],
        action="fail",
        confidence=0.0,
    )
