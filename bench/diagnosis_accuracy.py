"""How well pasted evidence is named: the paraphrase corpus, scored as `deploybench diagnose --log`.

Figures the catalogue's diagnosis is held to: top-1 accuracy at least 95% over every entry with a
runtime signature (at least 4 variants each, in at least 4 forms), no diagnosis at all on healthy
evidence, and each answer's confidence and runner-up. Counted per evidence form, since the same
failure pasted as a Describe* JSON, a CloudWatch excerpt, a client traceback or a Step Functions
error must be named the same.

Usage: python bench/diagnosis_accuracy.py [--corpus FILE] [--results FILE]
--corpus takes the project's corpus schema (cases and healthy) or a plain list of cases shaped
id, expect (an entry, `unknown`, or `none` for healthy), candidates, form, language, text.
Prints accuracy and wrong answers per form, per language and per entry, and each wrong answer.
Writes bench/results/diagnosis_accuracy.json (flat; --results elsewhere for another corpus).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from workflows.diagnosis.accuracy import Scored, evaluate  # noqa: E402
from workflows.diagnosis.paste import FORMS  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "diagnosis_accuracy.json"
CORPUS = ROOT / "tests" / "data" / "corpus" / "diagnosis_paraphrases.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    started = time.perf_counter()
    scored, healthy, figures = evaluate(args.corpus)
    figures["seconds"] = round(time.perf_counter() - started, 3)
    figures["target_top1_accuracy"] = 0.95
    figures["target_healthy_false_positives"] = 0

    console = Console(highlight=False)
    table = Table(
        title=f"Diagnosis from pasted evidence ({figures['cases']} cases, {figures['entries']} entries)"
    )
    for column in ("form", "cases", "top-1 correct"):
        table.add_column(column, justify="right" if column != "form" else "left")
    for form in FORMS:
        key = form.replace("-", "_")
        if figures[f"cases_{key}"]:
            table.add_row(form, str(figures[f"cases_{key}"]), str(figures[f"top1_correct_{key}"]))
    if figures["cases_mixed_forms"]:
        table.add_row(
            "mixed (2+ forms)", str(figures["cases_mixed_forms"]), str(figures["top1_correct_mixed_forms"])
        )
    for key in sorted(k for k in figures if k.startswith("label_cases_")):
        label = key.removeprefix("label_cases_")
        if not set(label.split("+")) <= set(FORMS):
            table.add_row(
                f"as labelled: {label}", str(figures[key]), str(figures[f"label_top1_correct_{label}"])
            )
    console.print(table)
    console.print(_grouped(figures, "language", "Per language (cases; healthy texts apart)"))
    entries = Table(title="Per entry (cases, distinct forms, top-1 correct, wrong)")
    for column in ("entry", "cases", "forms", "top-1 correct", "wrong"):
        entries.add_column(column, justify="right" if column != "entry" else "left")
    for key in sorted(
        k for k in figures if k.startswith("cases_") and k.removeprefix("cases_") in _expected(scored)
    ):
        entry = key.removeprefix("cases_")
        entries.add_row(
            entry,
            str(figures[key]),
            str(figures[f"forms_{entry}"]),
            str(figures[f"top1_correct_{entry}"]),
            str(figures[f"wrong_{entry}"]),
        )
    console.print(entries)
    console.print(
        f"top-1 {figures['top1_accuracy']:.1%} (target ≥ 95%), top-2 {figures['top2_accuracy']:.1%}; "
        f"healthy: {figures['healthy_false_positives']} of {figures['healthy_logs']} diagnosed (target 0); "
        f"unknown expected {figures['unknown_expected']}, named anyway {figures['named_when_unknown_expected']}; "
        f"forms found as declared {figures['forms_found_as_declared']}/{figures['forms_declared']}"
    )
    console.print(
        f"confidence when right: mean {figures['mean_confidence_correct']:.2f}, min "
        f"{figures['min_confidence_correct']:.2f}; {figures['answers_with_runner_up']} answers with a "
        f"runner-up, margin over it mean {figures['mean_margin_over_runner_up']:.2f}, min "
        f"{figures['min_margin_over_runner_up']:.2f}"
    )
    console.print(
        f"wrong answers (an entry named that is not the one expected): {figures['wrong_answers']} "
        f"(target 0); unknown where an entry was expected: {figures['unknown_answers']}"
    )
    for s in scored:
        if not s.correct:
            console.print(
                f"{'[red]wrong[/]' if s.wrong else 'unknown'}: {s.name}: expected {s.expect}, named "
                f"{s.diagnosis.id} ({s.label}, {s.language})"
            )
    for name, diagnosis in healthy:
        if diagnosis.id != "unknown":
            console.print(f"[red]healthy named[/]: {name}: {diagnosis.id}")
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {args.results}")


def _expected(scored: list[Scored]) -> set[str]:
    return {s.expect for s in scored}


def _grouped(figures: dict[str, float | int], group: str, title: str) -> Table:
    table = Table(title=title)
    for column in (group, "cases", "top-1 correct", "wrong", "healthy", "healthy named"):
        table.add_column(column, justify="right" if column != group else "left")
    values = sorted(
        {k.removeprefix(f"{group}_cases_") for k in figures if k.startswith(f"{group}_cases_")}
        | {
            k.removeprefix(f"{group}_healthy_")
            for k in figures
            if k.startswith(f"{group}_healthy_") and "false" not in k
        }
    )
    for value in values:
        cases = int(figures.get(f"{group}_cases_{value}", 0))
        correct = int(figures.get(f"{group}_top1_correct_{value}", 0))
        table.add_row(
            value,
            str(cases),
            str(correct),
            str(figures.get(f"{group}_wrong_{value}", cases - correct)),
            str(figures.get(f"{group}_healthy_{value}", 0)),
            str(figures.get(f"{group}_healthy_false_positives_{value}", 0)),
        )
    return table


if __name__ == "__main__":
    main()
