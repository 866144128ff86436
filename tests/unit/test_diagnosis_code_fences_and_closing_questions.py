"""A message quoted in a code fence keeps its own words out of the reading ("... a previous error? Error 803 ...");
what "someone said" is someone else's; a question closed as one, and "not our issue" ("우리 이슈 아님")."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_message_in_a_code_fence_keeps_its_own_words_out_of_the_reading() -> None:
    line = (
        "```RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling "
        "NumCudaDevices() that might have caused a previous error? Error 803: system has unsupported display driver "
        "/ cuda driver combination```"
    )
    start = line.index("unsupported display")
    assert polarity(line, start, start + 50).polarity == "affirmed"
    chat = json.dumps(
        [{"user": "U1", "ts": "1718160033.1", "text": line}, {"user": "U1", "text": "g6, 새 이미지"}]
    )
    assert _diagnosed(chat).id == "F20"


def test_what_someone_said_is_someone_elses() -> None:
    line = "Someone said /score gives 404 on vLLM."
    assert polarity(line, 14, 28).polarity == "other"


def test_a_question_closed_as_one_and_not_our_issue_name_nothing() -> None:
    question = (
        "Q: does vLLM answer /score? Someone said it returns 404 Not Found.\n"
        "reply (author): thanks, closing as a question. Nothing deployed.\n"
    )
    assert _diagnosed(question).id == "unknown"
    denied = (
        '{"eventName":"CreateEndpoint","errorCode":"AccessDeniedException","errorMessage":"User: x is not authorized '
        'to perform: sagemaker:CreateEndpoint with an explicit deny in a service control policy"}\n'
        "→ 분석팀 개인 노트북 role. 우리 이슈 아님.\n"
    )
    assert _diagnosed(denied).id == "unknown"
