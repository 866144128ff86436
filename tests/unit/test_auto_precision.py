"""precision: auto picks the artifact per target instance type from the CPU family's ISA."""

from __future__ import annotations

import pytest

from workflows.images.accelerators import instance_table
from workflows.images.cpu_isa import cpu_isa, isa_table
from workflows.spec.pipeline import parse_spec


@pytest.mark.parametrize(
    ("instance_type", "task", "precision", "engine"),
    [
        ("ml.c7i.xlarge", "embedding", "fp32", "openvino"),
        ("ml.m7i.2xlarge", "embedding", "fp32", "openvino"),
        ("ml.c7i.xlarge", "classification", "fp32", "onnxruntime"),
        ("ml.c6i.xlarge", "embedding", "fp32", "onnxruntime"),
        ("ml.c5.xlarge", "embedding", "fp32", "onnxruntime"),
        ("ml.c7g.xlarge", "embedding", "fp32", "onnxruntime"),
        ("ml.g5.xlarge", "embedding", "fp32", "onnxruntime"),
    ],
)
def test_auto_resolves_to_a_concrete_artifact_with_its_basis(
    instance_type: str, task: str, precision: str, engine: str
) -> None:
    # Given a spec asking for precision auto on that instance type
    data = {
        "name": "auto",
        "model": {"task": task},
        "convert": {"precision": "auto"},
        "hosting": {"instance_type_fallbacks": [instance_type]},
    }
    # When it is parsed
    convert = parse_spec(data).convert
    # Then the spec carries the chosen precision and engine, and says why
    assert (convert.precision, convert.engine) == (precision, engine)
    assert convert.precision_basis
    # And the resolved spec parses to itself (the steps pass it on as JSON)
    again = parse_spec(parse_spec(data).model_dump(mode="json")).convert
    assert (again.precision, again.engine, again.precision_basis) == (
        precision,
        engine,
        convert.precision_basis,
    )


def test_serverless_has_no_instance_type_and_keeps_onnxruntime() -> None:
    convert = parse_spec(
        {"name": "auto", "convert": {"precision": "auto"}, "hosting": {"mode": "serverless"}}
    ).convert
    assert (convert.precision, convert.engine) == ("fp32", "onnxruntime")
    assert "processor is unknown" in convert.precision_basis


def test_a_given_precision_is_kept_and_has_no_basis() -> None:
    convert = parse_spec({"name": "int8", "convert": {"precision": "int8"}}).convert
    assert (convert.precision, convert.engine, convert.precision_basis) == ("int8", "onnxruntime", "")


def test_the_isa_table_reads_the_families_aws_documents() -> None:
    # Ice Lake has VNNI and no bf16; Sapphire Rapids has AMX; Graviton is not an x86 row
    c6i, c7i = cpu_isa("ml.c6i.4xlarge"), cpu_isa("ml.c7i.large")
    assert c6i is not None and (c6i.vnni, c6i.bf16, c6i.amx) == (True, False, False)
    assert c7i is not None and (c7i.vnni, c7i.bf16, c7i.amx) == (True, True, True)
    assert cpu_isa("ml.c7g.xlarge") is None and cpu_isa("not-an-instance") is None


def test_every_cpu_family_of_the_instance_table_with_an_isa_row_is_x86() -> None:
    # The ISA table and the instance table name CPU families the same way
    cpu_families = {f for f, row in instance_table()["families"].items() if row["accelerator"] is None}
    assert cpu_families <= set(isa_table()["families"])
