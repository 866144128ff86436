"""code/requirements.txt is read with packaging, as pip reads it; a malformed line is refused by number."""

from __future__ import annotations

from pathlib import Path

import pytest

from workflows.artifact.requirements import (
    parse_requirements,
    requirement_names,
    requirements_of,
    satisfied_by,
)
from workflows.errors import RequirementsInvalid
from workflows.preflight.artifact import check_requirements
from workflows.preflight.gpu import pinned_version
from workflows.preflight.pins import check_library_pins, satisfies

IMAGE = (
    "763104351884.dkr.ecr.us-east-1.amazonaws.com/huggingface-pytorch-inference:"
    "2.6.0-transformers4.51.3-cpu-py312-ubuntu22.04"
)

PIP_FILE = """\
# serving dependencies
onnxruntime==1.31.1  # parity was measured on this one
Transformers>=4.51,<5 --hash=sha256:0123abcd
-r more.txt
--extra-index-url https://example.com/simple
https://example.com/wheels/tool-1.0-py3-none-any.whl
./vendor/local-0.1-py3-none-any.whl
tokenizer-tools @ https://example.com/tokenizer_tools-2.0.tar.gz
scikit_learn[alldeps]; python_version >= "3.9"
sentencepiece \\
    ==0.2.1
"""


def test_every_requirement_pip_reads_is_parsed_and_everything_else_skipped() -> None:
    # When a requirements file with comments, options, URLs, markers, hashes and a continuation is read
    lines = parse_requirements(PIP_FILE)
    # Then each requirement is there once, by canonical name, with its line number and specifiers
    assert [(line.number, line.name) for line in lines] == [
        (2, "onnxruntime"),
        (3, "transformers"),
        (8, "tokenizer-tools"),
        (9, "scikit-learn"),
        (10, "sentencepiece"),
    ]
    assert str(lines[1].requirement.specifier) == "<5,>=4.51"
    assert lines[2].requirement.url == "https://example.com/tokenizer_tools-2.0.tar.gz"
    assert lines[3].requirement.extras == {"alldeps"}
    assert str(lines[4].requirement.specifier) == "==0.2.1"
    # And the names are what preflight compares against
    assert requirement_names(PIP_FILE) == {
        "onnxruntime",
        "transformers",
        "tokenizer-tools",
        "scikit-learn",
        "sentencepiece",
    }


@pytest.mark.parametrize(
    "line",
    ["transformers=>4.51", "onnxruntime==", "torch>=2.0,,<3", "numpy (>=2", "[extras-only]==1.0"],
)
def test_a_malformed_line_is_refused_with_its_number_text_what_is_accepted_and_the_fix(line: str) -> None:
    # Given a requirements file whose third line pip could not read
    text = f"# deps\nonnxruntime==1.31.1\n{line}\n"
    # When it is parsed
    with pytest.raises(RequirementsInvalid) as raised:
        parse_requirements(text)
    # Then the error names the file, the line number and text, what a line may be, and the fix
    error = raised.value
    assert f"code/requirements.txt line 3 {line!r}" in error.message
    assert "Accepted: a PEP 508 requirement" in error.message
    assert error.fix is not None and "line 3 of code/requirements.txt" in error.fix
    assert "\n" not in error.message


def test_preflight_refuses_an_artifact_whose_requirements_pip_could_not_read() -> None:
    # Given serving code and a requirements file with a malformed pin
    code = "import onnxruntime\n"
    requirements = "onnxruntime=>1.31\n"
    # When the F01 and F28 checks read it
    # Then both refuse it by line (pip would fail at the container's start, minutes in)
    with pytest.raises(RequirementsInvalid, match="line 1 'onnxruntime=>1.31'"):
        check_requirements(code=code, requirements=requirements)
    with pytest.raises(RequirementsInvalid, match="line 1"):
        check_library_pins(requirements=requirements, image=IMAGE)


def test_a_pin_is_checked_against_the_image_s_library_with_pep_440_semantics() -> None:
    # Given lines that name transformers in several spellings and ways
    text = "Transformers>=4.51,<5\ntransformers~=4.50.0\ntransformers==4.51.*\ntransformers\n"
    lines = requirements_of(text, "transformers")
    # Then each is checked against the image's 4.51.3 as pip would
    assert [satisfied_by(line, "4.51.3") for line in lines] == [True, False, True, True]
    # And the F28 check blocks on exactly the line that excludes it
    findings = check_library_pins(requirements=text, image=IMAGE)
    assert [(f.id, f.evidence.split(";")[0]) for f in findings] == [("F28", "transformers~=4.50.0")]


def test_one_specifier_and_the_gpu_pin_read_as_pip_does() -> None:
    # Then single specifiers follow PEP 440 (pre-releases are versions, a wildcard is a prefix)
    assert satisfies("4.51.3", "~=", "4.51.0") and not satisfies("4.52.0", "~=", "4.51.0")
    assert satisfies("5.0.0rc1", ">=", "5.0.0rc1") and not satisfies("4.51.3", "==", "4.5.*")
    assert not satisfies("not-a-version", ">=", "1.0")
    # And the onnxruntime-gpu pin is its == version, whatever the extras, markers or comments
    text = 'onnxruntime_gpu[cuda]==1.20.1 ; sys_platform == "linux"  # CUDA 12\n'
    assert pinned_version(text, "onnxruntime-gpu") == "1.20.1"
    assert pinned_version("onnxruntime-gpu>=1.20\n", "onnxruntime-gpu") is None


def test_a_repack_refuses_to_add_to_a_requirements_file_it_cannot_read(tmp_path: Path) -> None:
    from workflows.remediation.requirements import apply_requirements

    # Given an artifact folder whose requirements file has a malformed line
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "requirements.txt").write_text("numpy>=2\ntorch==\n", encoding="utf-8")
    # When the F01 remediation adds onnxruntime to it
    # Then it refuses, naming the line, and leaves the file as it was
    with pytest.raises(RequirementsInvalid, match="line 2 'torch=='"):
        apply_requirements(tmp_path, ["onnxruntime==1.31.1"])
    assert (tmp_path / "code" / "requirements.txt").read_text(encoding="utf-8") == "numpy>=2\ntorch==\n"
