"""A FailureReason the writer cut from the paste shows no empty reason; logs not pulled or CloudWatch not opened
yet leave a failed ping open; "linked from" and "for reference" quote someone else's; "stays at 1 instance" is
F11's; a Korean test's stop time inside its words times a scale-in; "첫 호출만 타임아웃" and "두번째부터는 200ms"
answer a timeout; vLLM's "Initializing an LLM engine" names vLLM."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"
TIMEOUT = (
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.'
    'eu-west-1.amazonaws.com/endpoints/emb-serverless/invocations"\n'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_failure_reason_cut_from_the_paste_shows_no_empty_reason() -> None:
    table = (
        "$ aws sagemaker describe-endpoint --endpoint-name emb-rt --output table\n"
        "---------------------------------------------------\n"
        "|                DescribeEndpoint                 |\n"
        "+----------------------+--------------------------+\n"
        "|  EndpointStatus      |  Failed                  |\n"
        "|  CreationTime        |  2024-10-21T09:02:11Z    |\n"
        "|  LastModifiedTime    |  2024-10-21T09:49:58Z    |\n"
        "+----------------------+--------------------------+\n"
    )
    assert _diagnosed(table).id == "F06"
    assert _diagnosed(table + "(I cut the FailureReason column when copying.)\n").id == "unknown"


def test_logs_not_pulled_or_cloudwatch_not_opened_leave_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "ml.g5.xlarge, custom image; logs not pulled yet.\n").id == "unknown"
    assert _diagnosed(PING + "I have not opened CloudWatch yet.\n").id == "unknown"


def test_what_is_linked_from_elsewhere_is_someone_elses() -> None:
    line = 'linked from the vLLM tracker: "POST /score returns 404" on an older release'
    start = line.index("POST")
    assert polarity(line, start, start + 25).polarity == "other"


def test_staying_at_one_instance_with_min_zero_is_f11() -> None:
    text = (
        "Endpoint stays at 1 instance overnight despite MinInstanceCount: 0\n"
        "No scaling policy on the component; zero traffic for 14 hours.\n"
    )
    assert _diagnosed(text).id == "F11"


def test_a_korean_tests_stop_time_inside_its_words_times_the_scale_in() -> None:
    assert _diagnosed("테스트 10:00 에 끝났는데 copy 가 10:34 에야 0 으로 떨어짐.\n").id == "F13"


def test_korean_words_for_an_answered_timeout() -> None:
    assert _diagnosed(TIMEOUT + "첫 호출만 타임아웃. serverless.\n").id == "F15"
    assert _diagnosed(TIMEOUT + "serverless. 두번째부터는 200ms대.\n").id == "F15"


def test_vllms_engine_start_line_names_vllm() -> None:
    text = (
        '$ curl -s localhost:8080/v1/models\n"facebook/opt-125m"\n'
        "로그 첫 줄: INFO ... Initializing an LLM engine ... model='facebook/opt-125m'\n"
    )
    assert _diagnosed(text).id == "F26"
