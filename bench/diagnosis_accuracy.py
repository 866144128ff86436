"""How well pasted evidence is named: the paraphrase corpus, scored as `deploybench diagnose --log`.

Figures the catalogue's diagnosis is held to: top-1 accuracy at least 95% over every entry with a
runtime signature (at least 4 variants each, in at least 4 forms), no diagnosis at all on healthy
evidence, and each answer's confidence and runner-up. Counted per evidence form, since the same
failure pasted as a Describe* JSON, a CloudWatch excerpt, a client traceback or a Step Functions
error must be named the same.

Usage: python bench/diagnosis_accuracy.py [--corpus tests/data/corpus/diagnosis_paraphrases.yaml]
Prints accuracy per form and per entry.
Writes bench/results/diagnosis_accuracy.json (flat).
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

from workflows.diagnosis.accuracy import evaluate  # noqa: E402
from workflows.diagnosis.paste import FORMS  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "diagnosis_accuracy.json"
CORPUS = ROOT / "tests" / "data" / "corpus" / "diagnosis_paraphrases.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
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
        table.add_row(form, str(figures[f"cases_{key}"]), str(figures[f"top1_correct_{key}"]))
    table.add_row(
        "mixed (2+ forms)", str(figures["cases_mixed_forms"]), str(figures["top1_correct_mixed_forms"])
    )
    console.print(table)
    entries = Table(title="Per entry (cases, distinct forms, top-1 correct)")
    for column in ("entry", "cases", "forms", "top-1 correct"):
        entries.add_column(column, justify="right" if column != "entry" else "left")
    for key in sorted(k for k in figures if k.startswith("cases_F")):
        entry = key.removeprefix("cases_")
        entries.add_row(
            entry, str(figures[key]), str(figures[f"forms_{entry}"]), str(figures[f"top1_correct_{entry}"])
        )
    console.print(entries)
    console.print(
        f"top-1 {figures['top1_accuracy']:.1%} (target ≥ 95%), top-2 {figures['top2_accuracy']:.1%}; "
        f"healthy: {figures['healthy_false_positives']} of {figures['healthy_logs']} diagnosed (target 0); "
        f"forms found as declared {figures['forms_found_as_declared']}/{figures['cases']}"
    )
    console.print(
        f"confidence when right: mean {figures['mean_confidence_correct']:.2f}, min "
        f"{figures['min_confidence_correct']:.2f}; {figures['answers_with_runner_up']} answers with a "
        f"runner-up, margin over it mean {figures['mean_margin_over_runner_up']:.2f}, min "
        f"{figures['min_margin_over_runner_up']:.2f}"
    )
    for s in scored:
        if not s.correct:
            console.print(f"[red]wrong[/]: expected {s.expect}, named {s.diagnosis.id} ({'+'.join(s.forms)})")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    console.print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
