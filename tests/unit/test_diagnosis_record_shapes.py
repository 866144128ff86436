"""A pasted record whose fields hold other shapes than the service's (text where an object was, an object or a list
where text was) is read without a traceback: a console, an OCR or a person writes "RuntimeConfig: CopyCount 1"."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

CORPUS = Path(__file__).parents[1] / "data" / "corpus" / "diagnosis_paraphrases.yaml"
PER_TEXT = 40


def _reshaped(value: Any) -> Iterator[Any]:
    """The value with one field given another shape: an object or a list as text, a scalar as an object or a list."""
    if isinstance(value, dict):
        for key, field in value.items():
            if isinstance(field, dict | list) and field:
                yield {**value, key: "see the console"}
            else:
                yield {**value, key: {"value": field}}
                yield {**value, key: [field, field]}
            for inner in _reshaped(field):
                yield {**value, key: inner}
    elif isinstance(value, list):
        for index, element in enumerate(value):
            for inner in _reshaped(element):
                yield [*value[:index], inner, *value[index + 1 :]]


def test_a_component_record_with_text_where_its_runtime_config_was() -> None:
    text = (
        "InferenceComponentStatus: Failed\n"
        "Specification: NumberOfAcceleratorDevicesRequired 1, MinMemoryRequiredInMb 12288\n"
        "RuntimeConfig: CopyCount 1\n"
        "ml.g5.xlarge, another component already holds its GPU.\n"
    )
    assert diagnose(evidence_from_paste(text, origin="ticket")).id


def test_every_corpus_record_reshaped_field_by_field_is_read_without_a_traceback() -> None:
    read = 0
    for case in yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["cases"]:
        text = case["text"]
        start, end = text.find("{"), text.rfind("}")
        try:
            document = json.loads(text[start : end + 1]) if 0 <= start < end else None
        except json.JSONDecodeError:
            continue
        for index, reshaped in enumerate(_reshaped(document)):
            if index == PER_TEXT:
                break
            pasted = text[:start] + json.dumps(reshaped, indent=2) + text[end + 1 :]
            assert diagnose(evidence_from_paste(pasted, origin="ticket")).id, pasted[:200]
            read += 1
    assert read > 500  # the corpus holds records of every form the readers know
