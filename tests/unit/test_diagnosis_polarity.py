"""Polarity: a mention in prose that is negated, asked or past is no evidence; a log line is."""

from __future__ import annotations

import pytest

from workflows.diagnosis import diagnose
from workflows.diagnosis.evidence import normalize
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def read(text: str, mention: str) -> str:
    text = normalize(text)
    start = text.index(mention)
    return polarity(text, start, start + len(mention)).polarity


@pytest.mark.parametrize(
    ("text", "mention", "expected"),
    [
        ("CreateEndpoint returned 200, no ResourceLimitExceeded.", "ResourceLimitExceeded", "negated"),
        ("ResourceLimitExceeded was ruled out by support", "ResourceLimitExceeded", "negated"),
        ("Result: 0 5XX, no 'Worker died' or OOM lines in the log group", "Worker died", "negated"),
        ("메모리 31%, OOM 아님, Worker died 로그도 없음.", "Worker died", "negated"),
        ("메모리 31%, OOM 아님, Worker died 로그도 없음.", "OOM", "negated"),
        ("IAM 권한도 확인함, AccessDenied 없음", "AccessDenied", "negated"),
        ("모델 로드 안 됨", "모델 로드", "negated"),
        ("ReadTimeoutError 는 안 났고 두 번째부터 30ms", "ReadTimeoutError", "negated"),
        ("로그에서 Worker died 못 찾음", "Worker died", "negated"),
        ("quota?", "quota", "hypothetical"),
        ("Is it ResourceLimitExceeded?", "ResourceLimitExceeded", "hypothetical"),
        ("혹시 CUDA 803? 요즘 자주 보여서", "CUDA 803", "hypothetical"),
        ('803이면 로그에 "error 803" 찍혀야 하는데 로그 그룹이 없음', "error 803", "hypothetical"),
        ("OOM인가요?", "OOM", "hypothetical"),
        ("we hit the limit last month", "limit", "historical"),
        ("저번 803 때문에 AMI 바꿨음", "803", "historical"),
        ("로그 그룹이 없어서 error 803 여부도 확인 불가", "error 803", "hypothetical"),
        ("capacity 부족인지 드라이버 문제인지 모르겠음", "드라이버 문제", "hypothetical"),
        ("It is unclear whether CUDA error 803 was raised", "CUDA error 803", "hypothetical"),
        ("OOM unconfirmed, the metrics were not kept", "OOM", "hypothetical"),
    ],
)
def test_a_mention_under_a_trigger_is_not_affirmed(text: str, mention: str, expected: str) -> None:
    # Given a sentence of a ticket that denies, asks or recalls what it names
    # When the mention's polarity is read
    # Then it is the trigger's, not an assertion
    assert read(text, mention) == expected


@pytest.mark.parametrize(
    ("text", "mention"),
    [
        ("not ResourceLimitExceeded but the logs show Worker died", "Worker died"),  # a terminator
        ("the endpoint logs Worker died, however no OOM", "Worker died"),  # the trigger comes after
        ("We keep getting Worker died on the nli container, not only under load.", "Worker died"),  # pseudo
        ("why do we get ResourceLimitExceeded?", "ResourceLimitExceeded"),  # a wh-question presupposes it
        ("dan: why do we get ResourceLimitExceeded?", "ResourceLimitExceeded"),  # after a chat's speaker
        ("민수: warmup 이 왜 이렇게 오래 걸리지?", "warmup"),  # Korean's 왜 stands before the verb
        ("No module named 'onnxruntime' again after the redeploy", "No module named 'onnxruntime'"),
        ("메모리 31%, OOM 아님, Worker died 로그도 없음.", "메모리"),  # another clause
        ("ping health check 통과 못 함", "ping health check"),  # 못 of 통과하다: the check failed
        ('the client printed "ResourceLimitExceeded: not enough quota"', "ResourceLimitExceeded"),
    ],
)
def test_a_mention_outside_any_scope_or_with_the_trigger_in_its_own_words_is_affirmed(
    text: str, mention: str
) -> None:
    # Given a sentence whose trigger does not reach the mention (or sits inside the quoted message)
    # Then the mention is affirmed
    assert read(text, mention) == "affirmed"


@pytest.mark.parametrize(
    "line",
    [
        "2026-11-18T06:40:12,331 [INFO ] W-9000-model-stdout - ModuleNotFoundError: No module named 'onnxruntime'",
        "ResourceLimitExceeded: not enough capacity for ml.g5.xlarge",
        "OSError: [Errno 28] No space left on device",
        "botocore.exceptions.ClientError: An error occurred (ResourceLimitExceeded) when calling CreateEndpoint",
        "ERROR: Could not find a version that satisfies the requirement onnxruntime==9.9",
        '  File "/opt/ml/model/code/inference.py", line 9, in <module>',
        '{"FailureReason": "not enough capacity"}',
        "FailureReason: Unable to provision requested ML compute capacity",
        "E1129 10:02:12.400 1 model_lifecycle.cc:626] failed to load 'minilm'",
    ],
)
def test_lines_software_wrote_are_machine_output(line: str) -> None:
    assert is_machine_line(line)


@pytest.mark.parametrize(
    "line",
    [
        "no ResourceLimitExceeded here",
        "We saw no errors during the test",
        "Quota is 2 and 0 in use",
        "혹시 803?",
    ],
)
def test_lines_people_wrote_are_prose(line: str) -> None:
    assert not is_machine_line(line)


def test_a_negated_signature_in_a_ticket_rules_its_entry_out_and_says_so() -> None:
    # Given a ticket that rules out the quota before showing the waiter giving up while Creating
    text = (
        "Checked Service Quotas: applied value 4, we use 1. CreateEndpoint returned 200, no "
        "ResourceLimitExceeded for ml.g5.2xlarge for endpoint usage.\n"
        "botocore.exceptions.WaiterError: Waiter EndpointInService failed: Max attempts exceeded\n"
    )
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="ticket"))
    # Then the stall is named, the quota is not even an alternative, and the evidence says why
    assert diagnosis.id == "F06"
    assert "F39" not in [a.id for a in diagnosis.alternatives]
    assert any(line.startswith("[ruled out] F39") and "no" in line for line in diagnosis.evidence)


def test_a_log_line_with_negation_words_is_still_the_failure() -> None:
    # Given log and record lines that hold "No", "not" and "Could not" in the failure's own words
    for text, entry in [
        (
            "2026-10-14T03:21:55,402 [INFO ] W-9002-model-stdout - ModuleNotFoundError: No module named 'onnxruntime'",
            "F01",
        ),
        ("No module named 'onnxruntime'", "F01"),
        ("The image does not contain required accept-bind-to-port=true Docker label", "F05"),
    ]:
        # Then each is named
        assert diagnose(evidence_from_paste(text, origin="paste")).id == entry, text


def test_a_question_or_a_past_mention_is_no_evidence_but_a_candidate() -> None:
    # Given a ticket that only asks about error 803 and recalls a quota error
    text = "혹시 CUDA error 803?\nWe hit ResourceLimitExceeded last month, not this time.\n"
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="ticket"))
    # Then nothing is named, and the candidates say what would decide them
    assert diagnosis.id == "unknown"
    candidates = [line for line in diagnosis.evidence if line.startswith("[candidate]")]
    assert [line.split()[1] for line in candidates] == ["F20", "F39"]
    assert all("decided by:" in line for line in candidates)


def test_a_match_across_sentences_is_read_in_each_sentence() -> None:
    # Given a signature whose match runs from a question into the next sentence
    text = normalize("ResourceLimitExceeded again? The console lists 'ml.g5.xlarge for endpoint usage' at 2.")
    start, end = 0, text.index("usage") + len("usage")
    # When its polarity is read
    # Then the question in its first sentence decides it, not the affirmed words after
    assert polarity(text, start, end).polarity == "hypothetical"


def test_a_trigger_inside_the_signature_across_sentences_still_does_not_count() -> None:
    # Given a match whose own words end a sentence and hold a trigger ("absent")
    text = normalize("Creating for 50 minutes; ProductionVariants: absent, FailureReason empty")
    start = text.index("Creating")
    end = text.index("FailureReason")
    # Then the mention stays affirmed: the signature's words are no trigger of its own
    assert polarity(text, start, end).polarity == "affirmed"
