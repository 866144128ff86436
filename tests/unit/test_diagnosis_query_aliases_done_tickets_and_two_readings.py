"""The AWS CLI's --query aliases are read as the fields they stand for; a ticket titled "(Done)" is settled; a Korean
writer who sets two readings side by side ("... 건지 ... 건지 모르겠음") leaves both open; log streams left empty
("비어 있음") are logs not read."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.cli_queries import aliases, with_field_names
from workflows.diagnosis.paste import evidence_from_paste

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_querys_aliases_name_their_fields() -> None:
    command = "aws sagemaker describe-endpoint --endpoint-name e --query '{s:EndpointStatus,pv:ProductionVariants[0]}'"
    assert aliases(command) == {"s": "EndpointStatus", "pv": "ProductionVariants"}
    assert with_field_names(command + '\n{"s": "Failed", "pv": null}') == command + (
        '\n{"EndpointStatus": "Failed", "ProductionVariants": null}'
    )
    # Without a --query the text is left as it is.
    assert with_field_names('{"s": "Failed"}') == '{"s": "Failed"}'


def test_a_failed_endpoint_read_through_query_aliases_is_the_stall() -> None:
    text = (
        "$ aws sagemaker describe-endpoint --endpoint-name emb-g6 "
        "--query '{S:EndpointStatus,R:FailureReason,C:CreationTime,M:LastModifiedTime}'\n"
        '{"S": "Failed", "R": "", "C": "2025-01-06T08:00:02+00:00", "M": "2025-01-06T08:51:40+00:00"}\n'
        "No log group was ever created. Quota for ml.g6.xlarge endpoint usage is 2, in use 0.\n"
    )
    assert _diagnosed(text).id == "F06"


def test_a_ticket_titled_done_is_settled() -> None:
    text = "OPS-90 (Done)\n2월에 Creating 50분 후 Failed (FailureReason 비어있음) → 리전 옮겨서 해결. 지금 InService.\n"
    assert _diagnosed(text).id == "unknown"


def test_two_readings_set_side_by_side_leave_both_open() -> None:
    text = (
        "ml.g5.xlarge 1대, 이미 다른 IC 1 copy.\n"
        "FailureReason: SageMaker was able to deploy 0 out of 1 requested copies of the inference component.\n"
        "GPU가 모자란 건지 메모리가 모자란 건지 메시지로는 모르겠음.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_log_streams_left_empty_are_logs_not_read() -> None:
    assert _diagnosed(PING + "로그 스트림은 생겼는데 보관기간 설정 실수로 비어 있음.\n").id == "unknown"
