"""A quotation introduced by "users report" is someone else's; a setup the writer cannot see leaves a first-call
timeout open; the serving code's import is no requirements line; timed events in sentences; a list written
[문장 32개] and a line whose sentences each time something."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_quotation_introduced_by_users_report_is_someone_elses() -> None:
    text = "\n".join(
        [
            "Linking the vllm-project/vllm issue for context: users report",
            "\"Model architectures ['DebertaV2ForSequenceClassification'] are not supported for now.\"",
            "We serve mdeberta on the HF DLC; it is InService and matches local accuracy.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_setup_the_writer_cannot_see_leaves_a_first_call_timeout_open() -> None:
    text = "\n".join(
        [
            'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1'
            '.amazonaws.com/endpoints/enc-b/invocations"',
            "(somebody else deployed it; I only have invoke rights and can't see the config or logs)",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_the_serving_codes_import_is_no_requirements_line() -> None:
    text = "\n".join(
        [
            "botocore.errorfactory.ModelError: An error occurred (ModelError) when calling the InvokeEndpoint operation:"
            " Received client error (400) from primary with message \"No module named 'onnxruntime'\"",
            "code/inference.py 에서 import onnxruntime as ort 하고 있고, code/requirements.txt 는 tokenizers 한 줄만 있음.",
        ]
    )
    assert _diagnosed(text).id == "F01"


def test_timed_events_in_sentences() -> None:
    text = "\n".join(
        [
            "scale to zero test on e5-ic: load stopped 09:00:00 sharp",
            "09:14:02 CurrentCopyCount 1 -> 0. 09:27:41 CurrentInstanceCount 1 -> 0. idle billing the whole time",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_list_written_as_n_sentences_and_a_line_of_timed_sentences() -> None:
    text = "\n".join(
        [
            "HF DLC pipeline on the L40S endpoint.",
            'payload {"inputs": [문장 32개]} 로 보냈더니 505ms. 단건은 약 16ms. parameters 는 안 넣었음.',
        ]
    )
    assert _diagnosed(text).id == "F31"
