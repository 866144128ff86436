"""How well the rules name failures from pasted evidence: a corpus of cases, scored.

A corpus (YAML) has ``cases`` (evidence that must be named as ``expect``, the ``forms`` the reader
must find, optionally the ``mode`` a user would state) and ``healthy`` evidence that must name
nothing (inline ``text`` or a ``file`` relative to the corpus). ``evaluate`` reads each one as
``deploybench diagnose --log`` does and returns the figures as one flat mapping.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts import Diagnosis
from workflows.diagnosis.matcher import diagnose
from workflows.diagnosis.paste import FORMS, evidence_from_paste


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    expect: str = Field(description="The catalogue ID the evidence must be named as.")
    forms: list[str] = Field(min_length=1, description="The forms the reader must find, in order.")
    mode: str | None = Field(None, description="What a user would pass with --mode.")
    text: str


class Healthy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    file: str | None = None
    text: str | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Healthy:
        if (self.file is None) == (self.text is None):
            raise ValueError("a healthy entry has exactly one of file or text")
        return self

    def read(self, folder: Path) -> tuple[str, str]:
        """Its name and its text."""
        if self.file is not None:
            return Path(self.file).stem, (folder / self.file).read_text(encoding="utf-8")
        return self.name or "healthy", self.text or ""


class Corpus(BaseModel):
    model_config = ConfigDict(extra="forbid")

    cases: list[Case]
    healthy: list[Healthy]

    @model_validator(mode="after")
    def _known_forms(self) -> Corpus:
        unknown = {f for case in self.cases for f in case.forms} - set(FORMS)
        if unknown:
            raise ValueError(f"unknown forms {sorted(unknown)}; known: {list(FORMS)}")
        return self


class Scored(BaseModel):
    """One case's outcome."""

    expect: str
    forms: list[str]
    found_forms: list[str]
    diagnosis: Diagnosis

    @property
    def correct(self) -> bool:
        return self.diagnosis.id == self.expect

    @property
    def runner_up(self) -> str | None:
        return self.diagnosis.alternatives[0].id if self.diagnosis.alternatives else None


def load_corpus(path: Path) -> Corpus:
    """The corpus at ``path``."""
    return Corpus.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def score_case(case: Case, origin: str) -> Scored:
    """Read and diagnose one case as the CLI does."""
    evidence = evidence_from_paste(case.text, origin=origin, hosting_mode=case.mode)
    return Scored(
        expect=case.expect, forms=case.forms, found_forms=evidence.forms, diagnosis=diagnose(evidence)
    )


def diagnose_healthy(healthy: Healthy, folder: Path) -> tuple[str, Diagnosis]:
    name, text = healthy.read(folder)
    return name, diagnose(evidence_from_paste(text, origin=name))


def figures(scored: list[Scored], healthy: list[tuple[str, Diagnosis]]) -> dict[str, float | int]:
    """The corpus's figures, flat: accuracy, healthy false positives, per form, per entry, runner-up."""
    correct = [s for s in scored if s.correct]
    wrong = [s for s in scored if not s.correct]
    with_runner_up = [s for s in scored if s.runner_up is not None]
    margins = [
        s.diagnosis.confidence - s.diagnosis.alternatives[0].confidence
        for s in correct
        if s.diagnosis.alternatives
    ]
    result: dict[str, float | int] = {
        "cases": len(scored),
        "entries": len({s.expect for s in scored}),
        "top1_correct": len(correct),
        "top1_accuracy": round(len(correct) / len(scored), 4) if scored else 0.0,
        "top2_accuracy": round((len(correct) + sum(s.runner_up == s.expect for s in wrong)) / len(scored), 4)
        if scored
        else 0.0,
        "forms_found_as_declared": sum(s.found_forms == s.forms for s in scored),
        "healthy_logs": len(healthy),
        "healthy_false_positives": sum(d.id != "unknown" for _, d in healthy),
        "mean_confidence_correct": round(sum(s.diagnosis.confidence for s in correct) / len(correct), 3)
        if correct
        else 0.0,
        "min_confidence_correct": min((s.diagnosis.confidence for s in correct), default=0.0),
        "answers_with_runner_up": len(with_runner_up),
        "mean_margin_over_runner_up": round(sum(margins) / len(margins), 3) if margins else 0.0,
        "min_margin_over_runner_up": round(min(margins), 3) if margins else 0.0,
    }
    per_form = Counter(form for s in scored for form in s.forms)
    per_form_correct = Counter(form for s in correct for form in s.forms)
    multi = [s for s in scored if len(s.forms) > 1]
    for form in FORMS:
        key = form.replace("-", "_")
        result[f"cases_{key}"] = per_form[form]
        result[f"top1_correct_{key}"] = per_form_correct[form]
    result["cases_mixed_forms"] = len(multi)
    result["top1_correct_mixed_forms"] = sum(s.correct for s in multi)
    for entry in sorted({s.expect for s in scored}):
        mine = [s for s in scored if s.expect == entry]
        result[f"cases_{entry}"] = len(mine)
        result[f"forms_{entry}"] = len({form for s in mine for form in s.forms})
        result[f"top1_correct_{entry}"] = sum(s.correct for s in mine)
    return result


def evaluate(path: Path) -> tuple[list[Scored], list[tuple[str, Diagnosis]], dict[str, float | int]]:
    """Score every case and every healthy entry of the corpus at ``path``."""
    corpus = load_corpus(path)
    scored = [score_case(case, f"case{number}") for number, case in enumerate(corpus.cases, start=1)]
    healthy = [diagnose_healthy(h, path.parent) for h in corpus.healthy]
    return scored, healthy, figures(scored, healthy)
