from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ROOT
from workflows.errors import SpecInvalid
from workflows.spec.pipeline import RunSpec, json_schema, load_spec, parse_spec


def test_example_spec_loads() -> None:
    spec = load_spec(ROOT / "examples" / "minilm-realtime.yaml")
    assert spec.name == "minilm-realtime"
    assert spec.hosting.instance_type_fallbacks == ["ml.c6i.xlarge", "ml.c6i.2xlarge"]
    assert spec.benchmark.sequence_lengths == ["natural", 128]


def test_hosting_mode_defaults_to_realtime() -> None:
    assert parse_spec({"name": "x", "hosting": {"workers": 2}}).hosting.mode == "realtime"


@pytest.mark.parametrize(
    ("data", "field", "fix"),
    [
        ({"name": "Bad_Name"}, "name", "lowercase"),
        (
            {"name": "ok", "hosting": {"instance_type_fallbacks": ["c6i.xlarge"]}},
            "instance_type_fallbacks",
            "ml.c6i.xlarge",
        ),
        ({"name": "ok", "benchmark": {"batch_sizes": [0]}}, "benchmark.batch_sizes", "parameters.batch_size"),
        ({"name": "ok", "model": {"task": "ner"}}, "model.task", "'embedding'"),
        ({"name": "ok", "typo": 1}, "typo", "remove it"),
        ({"model": {}}, "name", "Short lowercase name"),
        (
            {"name": "ok", "benchmark": {"sequence_lengths": [512]}},
            "max_sequence_length",
            "raise model.max_sequence_length",
        ),
    ],
)
def test_malformed_spec_names_the_field_and_the_fix(data: dict, field: str, fix: str) -> None:
    with pytest.raises(SpecInvalid) as caught:
        parse_spec(data)
    message = str(caught.value)
    assert field in message
    assert fix in message


def test_missing_file_and_bad_yaml_are_spec_errors(tmp_path: Path) -> None:
    with pytest.raises(SpecInvalid, match="does not exist"):
        load_spec(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(SpecInvalid, match="not valid YAML"):
        load_spec(bad)
    listing = tmp_path / "list.yaml"
    listing.write_text("- a\n- b\n")
    with pytest.raises(SpecInvalid, match="must be a mapping"):
        load_spec(listing)


def test_json_schema_describes_every_field() -> None:
    schema = json.loads(json_schema())
    assert schema["title"] == "RunSpec"
    assert "description" in schema["properties"]["keep_endpoint"]
    assert set(schema["required"]) == {"name"}


def test_spec_round_trips_through_json() -> None:
    spec = parse_spec({"name": "rt"})
    assert RunSpec.model_validate_json(spec.model_dump_json()) == spec


def test_a_sweep_file_given_as_a_run_spec_is_named_as_such() -> None:
    # Given the bundled nightly sweep passed where a run spec is expected
    # When it is loaded as a run spec
    with pytest.raises(SpecInvalid) as raised:
        load_spec(ROOT / "examples" / "sweep-nightly.yaml")
    # Then the error says what it is and which command runs it
    assert "is a sweep (base + matrix), not a run spec" in str(raised.value)
    assert f"run it with `deploybench sweep {ROOT / 'examples' / 'sweep-nightly.yaml'}`" in str(raised.value)
