"""How pasted forms and wordings are read: a Korean title tag, mail quote marks, a CLI table's wrapped cells,
onnxruntime's older wording, HTTP's reason phrase, an incident's custom details and the record in its body, a
--query's values, a command's continued lines, a count of none in a row's last cell, and "instance or serverless"."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _named(text: str) -> str:
    return diagnose(evidence_from_paste(text, origin="report")).id


def test_a_korean_title_tag_leaves_the_title_a_persons_question() -> None:
    assert (
        _named("[질문] 멀티 컨테이너 엔드포인트 Worker died 다시 날 수 있나요?\n48시간 동안 5XX 0건.")
        == "unknown"
    )


def test_a_reply_under_mail_quote_marks_is_read() -> None:
    text = "\n".join(
        [
            "Subject: FYI: vLLM /score 404 on the search team's reranker",
            "Please check whether we are hit too.",
            "> Reply: we serve with the HF DLC, not vLLM; all pair requests return 200. Nothing to do on our side.",
        ]
    )
    diagnosis = diagnose(evidence_from_paste(text, origin="mail"))
    assert diagnosis.id == "unknown"
    assert any("Nothing to do" in line for line in diagnosis.evidence)


def test_a_cell_the_cli_table_wraps_over_rows_is_read_whole() -> None:
    text = "\n".join(
        [
            "|                         DescribeStackEvents                          |",
            "+----------------+----------------+------------------------------------+",
            "|  LogicalId     |  Status        |  Reason                            |",
            "+----------------+----------------+------------------------------------+",
            "|  Component    |  CREATE_FAILED |  Resource handler returned message:|",
            '|                |                |  "There is not enough memory       |',
            "|                |                |  available for this Inference      |",
            '|                |                |  Component."                       |',
            "+----------------+----------------+------------------------------------+",
        ]
    )
    assert _named(text) == "F10"


def test_onnxruntimes_older_wording_of_an_unknown_input() -> None:
    text = 'InvokeEndpoint: Received client error (400): "[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid Feed Input Name:token_type_ids"'
    assert _named(text) == "F03"


def test_an_http_reason_phrase_is_no_denial() -> None:
    text = "\n".join(
        [
            "vLLM container, cross-encoder served with runner=pooling:",
            "POST /score -> HTTP/1.1 404 Not Found",
            '{"detail":"Not Found"}',
            "POST /classify -> 200",
        ]
    )
    assert _named(text) == "F27"


def test_an_incidents_custom_details_and_a_record_inside_its_body_are_read() -> None:
    details = {
        "messages": [
            {
                "event": "incident.trigger",
                "incident": {"title": "triton-g6 endpoint creation failed"},
                "log_entries": [
                    {
                        "type": "trigger_log_entry",
                        "channel": {
                            "type": "api",
                            "details": {
                                "note": "last log line: System has unsupported display driver / cuda driver combination (error 803)"
                            },
                        },
                    }
                ],
            }
        ]
    }
    assert _named(json.dumps(details)) == "F20"
    record = json.dumps(
        {
            "EndpointName": "e",
            "EndpointStatus": "Creating",
            "CreationTime": "2026-11-14T02:03:41Z",
            "LastModifiedTime": "2026-11-14T02:03:42Z",
        },
        indent=2,
    )
    body = {
        "event": {
            "event_type": "incident.triggered",
            "data": {
                "type": "incident",
                "title": "e still Creating after 45m",
                "body": {"details": f"watchdog snapshot:\n{record}\nno ProductionVariants key, quota fine"},
            },
        }
    }
    assert _named(json.dumps(body)) == "F06"


def test_a_querys_list_of_values_is_read() -> None:
    text = "\n".join(
        [
            "$ aws sagemaker describe-inference-component --inference-component-name ic --query '[InferenceComponentStatus,FailureReason]'",
            "[",
            '    "Failed",',
            '    "There is not enough memory available for this Inference Component."',
            "]",
        ]
    )
    assert _named(text) == "F10"


def test_a_filter_pattern_on_a_commands_continued_line_was_searched_for() -> None:
    text = "\n".join(
        [
            "$ aws logs filter-log-events --log-group-name /aws/sagemaker/Endpoints/emb \\",
            "    --filter-pattern '?\"Worker died\" ?\"No module named\"' --query 'events[].message'",
            "[]",
            "# nothing found, smoke test passed",
        ]
    )
    assert _named(text) == "unknown"


def test_a_count_of_none_in_the_next_cell_denies() -> None:
    text = "\n".join(['"kind","n"', '"Model loaded","2"', '"Worker died","0"', '"error 803","0"'])
    assert _named(text) == "unknown"
    assert _named(text.replace('"error 803","0"', '"error 803","3"')) == "F20"


def test_instance_or_serverless_as_alternatives_says_neither() -> None:
    text = "bench: warmup 3, p50 40 ms / p90 55 ms / p99 7,900 ms. I don't know the config (instance or serverless)."
    assert _named(text) == "unknown"
