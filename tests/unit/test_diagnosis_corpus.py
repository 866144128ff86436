"""The paraphrase corpus: every entry with a runtime signature, in the forms people paste."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from workflows.diagnosis.accuracy import Case, diagnose_healthy, evaluate, load_corpus, score_case
from workflows.diagnosis.paste import FORMS, evidence_from_paste
from workflows.diagnosis.rules import default_rules

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus" / "diagnosis_paraphrases.yaml"
CASES = load_corpus(CORPUS).cases
HEALTHY = load_corpus(CORPUS).healthy


def test_the_corpus_covers_every_runtime_entry_in_at_least_four_forms() -> None:
    # Given the rule table's entries (each has a runtime signature)
    entries = default_rules().ids()
    # When the corpus's cases are counted per entry
    per_entry = Counter(case.expect for case in CASES)
    forms = {entry: {f for c in CASES if c.expect == entry for f in c.forms} for entry in entries}
    # Then each entry has at least 4 variants, in at least 4 forms, and healthy evidence is plentiful
    assert {e for e in entries if per_entry[e] < 4} == set()
    assert {e: sorted(found) for e, found in forms.items() if len(found) < 4} == {}
    assert len(HEALTHY) >= 15


def test_every_entry_has_a_korean_or_mixed_text_and_every_form_a_healthy_one() -> None:
    # Given the corpus: tickets come in Korean too, and every form is pasted from healthy systems too
    entries = default_rules().ids()
    written = {c.expect for c in CASES if c.language in ("ko", "mixed")}
    healthy_forms = {
        f for h in HEALTHY for f in evidence_from_paste(h.read(CORPUS.parent)[1], origin="h").forms
    }
    # Then no entry lacks a Korean or mixed text, and no form the reader knows lacks a healthy text
    assert sorted(entries - written) == []
    assert [form for form in FORMS if form not in healthy_forms] == []


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c.expect}-{'+'.join(c.forms)}")
def test_each_form_is_found_as_declared(case: Case) -> None:
    # Given one pasted text
    # When it is read
    scored = score_case(case, "case")
    # Then the reader finds exactly the forms it holds, in order
    assert scored.found_forms == case.forms


def test_top1_is_right_at_least_95_percent_and_healthy_evidence_names_nothing() -> None:
    # Given the whole corpus
    # When every case and every healthy text is diagnosed
    scored, healthy, figures = evaluate(CORPUS)
    wrong = [(s.expect, s.diagnosis.id, s.diagnosis.evidence[:3]) for s in scored if not s.correct]
    named = [(name, d.id) for name, d in healthy if d.id != "unknown"]
    # Then at least 95% are named right first, and no healthy text is diagnosed
    assert figures["top1_accuracy"] >= 0.95, wrong
    assert named == []
    assert figures["healthy_false_positives"] == 0


@pytest.mark.parametrize("healthy", HEALTHY, ids=lambda h: h.name or Path(h.file or "").stem)
def test_healthy_evidence_has_no_alternatives_either(healthy) -> None:  # type: ignore[no-untyped-def]
    # Given healthy evidence in one of the pasted forms
    name, diagnosis = diagnose_healthy(healthy, CORPUS.parent)
    # Then nothing is named, not even as an alternative
    assert (diagnosis.id, diagnosis.alternatives) == ("unknown", []), name


def test_every_answer_carries_its_confidence_and_its_runner_up_when_there_is_one() -> None:
    # Given the cases whose evidence also fits another entry
    scored, _, figures = evaluate(CORPUS)
    contested = [s for s in scored if s.diagnosis.alternatives and s.diagnosis.id != "unknown"]
    # Then the answer is surer than its runner-up, and both confidences are stated
    assert contested, "the corpus holds cases where two entries share a signature"
    for s in contested:
        runner_up = s.diagnosis.alternatives[0]
        assert 0.3 <= s.diagnosis.confidence <= 0.99
        assert runner_up.confidence <= s.diagnosis.confidence
        assert any(line.startswith(f"[alternative] {runner_up.id}") for line in s.diagnosis.evidence)
    assert figures["answers_with_runner_up"] == len(contested)


def test_figures_are_given_per_entry_and_add_up_to_the_whole() -> None:
    # Given the corpus's figures
    scored, _, figures = evaluate(CORPUS)
    expected = sorted({s.expect for s in scored})
    entries = [e for e in expected if e.startswith("F")]
    # Then each entry has its cases, its distinct forms and its correct answers, summing to the totals
    assert sum(figures[f"cases_{e}"] for e in expected) == figures["cases"]
    assert sum(figures[f"top1_correct_{e}"] for e in expected) == figures["top1_correct"]
    assert min(figures[f"forms_{e}"] for e in entries) >= 4
    languages = {s.language for s in scored}
    assert sum(figures[f"language_cases_{lang}"] for lang in languages) == figures["cases"]


def test_a_plain_list_of_cases_is_a_corpus_where_none_is_healthy_and_unknown_is_an_answer(
    tmp_path: Path,
) -> None:
    # Given a corpus shaped id, expect, candidates, form, language, text (no declared reader forms)
    corpus = tmp_path / "cases.yaml"
    corpus.write_text(
        "- {id: a, expect: none, candidates: [F02], form: ticket, language: en, text: \"no 'Worker died' lines\"}\n"
        "- {id: b, expect: unknown, candidates: [F39], form: ticket, language: ko, text: '혹시 ResourceLimitExceeded?'}\n"
        "- {id: c, expect: F01, candidates: [], form: log, language: en, text: \"No module named 'onnxruntime'\"}\n",
        encoding="utf-8",
    )
    # When it is scored
    scored, healthy, figures = evaluate(corpus)
    # Then each is right, counted per language and per label, and the healthy one counts as healthy
    assert [(s.name, s.correct) for s in scored] == [("a", True), ("b", True), ("c", True)]
    assert (figures["language_cases_en"], figures["language_cases_ko"]) == (2, 1)
    assert (figures["label_cases_ticket"], figures["label_cases_log"]) == (2, 1)
    assert (figures["healthy_logs"], figures["healthy_false_positives"], figures["unknown_expected"]) == (
        1,
        0,
        1,
    )
