"""How well the rules name failures from pasted evidence: a corpus of cases, scored.

A corpus (YAML) has ``cases`` (evidence that must be named as ``expect``, the ``forms`` the reader
must find, optionally the ``mode`` a user would state and the ``language`` it is written in) and
``healthy`` evidence that must name nothing (inline ``text`` or a ``file`` relative to the corpus).
A corpus may also be a plain list of cases shaped ``id, expect, candidates, form, language, text``,
where ``expect`` is an entry, ``unknown`` (no entry can be told: the right answer is unknown) or
``none`` (healthy: nothing may be named). ``evaluate`` reads each one as ``deploybench diagnose
--log`` does and returns the figures as one flat mapping.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

from workflows.contracts import Diagnosis
from workflows.diagnosis.paste import FORMS, evidence_from_paste
from workflows.diagnosis.verdict import diagnose

UNKNOWN = "unknown"
HEALTHY = "none"


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    expect: str = Field(
        description="The catalogue ID the evidence must be named as; 'unknown' when no entry can be told "
        "from it, 'none' when it is healthy."
    )
    forms: list[str] = Field(default_factory=list, description="The forms the reader must find, in order.")
    form: str | None = Field(None, description="How it was pasted, as its writer calls it (a label).")
    candidates: list[str] = Field(default_factory=list, description="Entries a reader might confuse it with.")
    language: str = Field("en", description="en, ko, or mixed.")
    mode: str | None = Field(None, description="What a user would pass with --mode.")
    why: str = Field("", description="What in the text decides it, for a human reader (never scored).")
    text: str

    @property
    def label(self) -> str:
        """The form it is counted under: its label, else the forms the reader must find."""
        return self.form or "+".join(self.forms) or "unlabelled"


class Healthy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    file: str | None = None
    text: str | None = None
    language: str = "en"

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
    healthy: list[Healthy] = Field(default_factory=list)

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
    name: str = ""
    label: str = ""
    language: str = "en"

    @property
    def correct(self) -> bool:
        if self.expect in (UNKNOWN, HEALTHY):
            return self.diagnosis.id == UNKNOWN
        return self.diagnosis.id == self.expect

    @property
    def wrong(self) -> bool:
        """A named entry that is not the one expected (a healthy or undecidable text given a name
        included). "unknown" for a named failure is not right, and never wrong: it sends no one to fix
        the wrong thing."""
        return self.diagnosis.id != UNKNOWN and not self.correct

    @property
    def runner_up(self) -> str | None:
        return self.diagnosis.alternatives[0].id if self.diagnosis.alternatives else None


def load_corpus(path: Path) -> Corpus:
    """The corpus at ``path``: a mapping of cases and healthy texts, or a plain list of cases."""
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return Corpus.model_validate({"cases": data} if isinstance(data, list) else data)


def score_case(case: Case, origin: str) -> Scored:
    """Read and diagnose one case as the CLI does."""
    evidence = evidence_from_paste(case.text, origin=origin, hosting_mode=case.mode)
    return Scored(
        expect=case.expect,
        forms=case.forms,
        found_forms=evidence.forms,
        diagnosis=diagnose(evidence),
        name=case.id or origin,
        label=case.label,
        language=case.language,
    )


def diagnose_healthy(healthy: Healthy, folder: Path) -> tuple[str, Diagnosis]:
    name, text = healthy.read(folder)
    return name, diagnose(evidence_from_paste(text, origin=name))


def figures(
    scored: list[Scored], healthy: list[tuple[str, Diagnosis]], languages: list[str] | None = None
) -> dict[str, float | int]:
    """The corpus's figures, flat: accuracy, healthy false positives, per form, entry and language."""
    healthy_languages = list(zip(languages or ["en"] * len(healthy), (d.id for _, d in healthy), strict=True))
    healthy_languages += [(s.language, s.diagnosis.id) for s in scored if s.expect == HEALTHY]
    correct = [s for s in scored if s.correct]
    named = [s for s in correct if s.expect not in (UNKNOWN, HEALTHY)]
    wrong = [s for s in scored if not s.correct]
    with_runner_up = [s for s in scored if s.runner_up is not None and s.diagnosis.id != UNKNOWN]
    margins = [
        s.diagnosis.confidence - s.diagnosis.alternatives[0].confidence
        for s in named
        if s.diagnosis.alternatives
    ]
    result: dict[str, float | int] = {
        "cases": len(scored),
        "entries": len({s.expect for s in scored} - {UNKNOWN, HEALTHY}),
        "top1_correct": len(correct),
        "wrong_answers": sum(s.wrong for s in scored),
        "unknown_answers": sum(s.diagnosis.id == UNKNOWN and not s.correct for s in scored),
        "top1_accuracy": round(len(correct) / len(scored), 4) if scored else 0.0,
        "top2_accuracy": round((len(correct) + sum(s.runner_up == s.expect for s in wrong)) / len(scored), 4)
        if scored
        else 0.0,
        "forms_declared": sum(bool(s.forms) for s in scored),
        "forms_found_as_declared": sum(s.found_forms == s.forms for s in scored if s.forms),
        "healthy_logs": len(healthy_languages),
        "healthy_false_positives": sum(named != UNKNOWN for _, named in healthy_languages),
        "unknown_expected": sum(s.expect == UNKNOWN for s in scored),
        "named_when_unknown_expected": sum(s.expect == UNKNOWN and not s.correct for s in scored),
        "mean_confidence_correct": round(sum(s.diagnosis.confidence for s in named) / len(named), 3)
        if named
        else 0.0,
        "min_confidence_correct": min((s.diagnosis.confidence for s in named), default=0.0),
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
        result[f"forms_{entry}"] = len({form for s in mine for form in s.forms} or {s.label for s in mine})
        result[f"top1_correct_{entry}"] = sum(s.correct for s in mine)
        result[f"wrong_{entry}"] = sum(s.wrong for s in mine)
    for language in sorted({s.language for s in scored}):
        written = [s for s in scored if s.language == language]
        result[f"language_cases_{language}"] = len(written)
        result[f"language_top1_correct_{language}"] = sum(s.correct for s in written)
        result[f"language_wrong_{language}"] = sum(s.wrong for s in written)
    for label in sorted({s.label for s in scored}):
        labelled = [s for s in scored if s.label == label]
        result[f"label_cases_{label}"] = len(labelled)
        result[f"label_top1_correct_{label}"] = sum(s.correct for s in labelled)
    for language in sorted({written for written, _ in healthy_languages}):
        answers = [answer for written, answer in healthy_languages if written == language]
        result[f"language_healthy_{language}"] = len(answers)
        result[f"language_healthy_false_positives_{language}"] = sum(a != UNKNOWN for a in answers)
    return result


def evaluate(path: Path) -> tuple[list[Scored], list[tuple[str, Diagnosis]], dict[str, float | int]]:
    """Score every case and every healthy entry of the corpus at ``path``."""
    corpus = load_corpus(path)
    scored = [score_case(case, f"case{number}") for number, case in enumerate(corpus.cases, start=1)]
    healthy = [diagnose_healthy(h, path.parent) for h in corpus.healthy]
    return scored, healthy, figures(scored, healthy, [h.language for h in corpus.healthy])
