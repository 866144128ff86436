"""What reports and threads show where no error does: a list run one by one (F31), short samples (F32), a slow
scale-in timeline (F13), the quantized model's label counts (F29), a first call's seconds told in one message and
the later calls' milliseconds in another (F18); and the context a stall leaves open (F20 under F06)."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.batching import hidden_by_samples, one_by_one, rows
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.scale_in import timeline


def _named(text: str) -> str:
    return diagnose(evidence_from_paste(text, origin="report")).id


LIST_REPORT = [
    "Latency on ml.g5.2xlarge (A10G), classifier behind the HF DLC, 128 tokens per text:",
    'one text  {"inputs": "a sentence"}        p50 12.0 ms',
    'list of 16 {"inputs": [16 texts]}          p50 {list_ms} ms',
]


def test_a_list_as_slow_as_its_texts_one_at_a_time_on_a_gpu_ran_one_by_one() -> None:
    # Given a list of 16 that takes about 16 single calls on a GPU instance
    text = "\n".join(LIST_REPORT).replace("{list_ms}", "185.0")
    # When the report is diagnosed
    # Then the pipeline looped over the list (F31)
    assert _named(text) == "F31"


def test_a_batched_list_a_first_call_or_a_method_with_batch_size_is_no_loop() -> None:
    batched = "\n".join(LIST_REPORT).replace("{list_ms}", "70.0")  # 16 texts in under 6 single calls' time
    with_method = 'Every list went out with "parameters": {"batch_size": 16}.\n' + "\n".join(
        LIST_REPORT
    ).replace("{list_ms}", "185.0")
    first_call = (
        "\n".join(LIST_REPORT).replace("{list_ms}", "185.0").replace("list of 16", "first list of 16")
    )
    for text in (batched, with_method, first_call):
        assert _named(text) != "F31", text


def test_on_a_cpu_or_with_no_instance_shown_a_linear_list_is_not_named() -> None:
    text = "\n".join(LIST_REPORT).replace("{list_ms}", "185.0")
    for where in ("ml.c7i.2xlarge (Sapphire Rapids)", "our endpoint"):
        assert _named(text.replace("ml.g5.2xlarge (A10G)", where)) != "F31", where


def test_rows_read_batch_length_and_latency_from_a_table_header() -> None:
    lines = [
        "| batch | input | p50 (ms) | p99 (ms) |",
        "|---|---|---|---|",
        "| 4 | natural (~40 tok) | 14.1 | 16.0 |",
        "| 4 | padded to 384 | 61.7 | 66.2 |",
    ]
    found = rows(lines)
    assert [(r.batch, r.tokens, r.ms, r.natural, r.fixed) for r in found] == [
        (4, 40, 14.1, True, False),
        (4, 384, 61.7, False, True),
    ]
    pair = hidden_by_samples(lines)
    assert pair is not None and pair[1].ms == 61.7
    assert one_by_one(lines) is None


def test_natural_samples_far_faster_than_the_same_batch_padded_hid_the_cost_of_long_inputs() -> None:
    text = "\n".join(
        [
            "Sizing review for the ranking endpoint (ml.g6.xlarge):",
            "| b | sample | p50 |",
            "|---|---|---|",
            "| 16 | sample set, avg 48 tokens | 30.5 ms |",
            "| 16 | fixed 512 | 141.0 ms |",
        ]
    )
    assert _named(text) == "F32"
    # Two fixed lengths compared on purpose are a measurement, not samples that hid a cost
    assert _named(text.replace("sample set, avg 48 tokens", "fixed 128")) != "F32"


def test_zero_reached_half_an_hour_after_the_last_request_is_the_slow_scale_in() -> None:
    text = "\n".join(
        [
            "Why is the idle endpoint still billed? Polling every minute:",
            "time   status     instances  copies",
            "14:00  InService  1          1   <- load test stops here",
            "14:16  Updating   1          0",
            "14:31  InService  0          0",
        ]
    )
    found = timeline(text.splitlines())
    assert found is not None and found.minutes == 31.0
    assert _named(text) == "F13"
    # Zero eight minutes after the last request is no slow scale-in
    assert _named(text.replace("14:16", "14:05").replace("14:31", "14:08")) != "F13"


def test_a_timeline_in_korean_with_counts_going_to_zero() -> None:
    text = "\n".join(
        [
            "타임라인:",
            "  03:10:05  마지막 요청",
            "  03:24:50  CurrentCopyCount 1 -> 0",
            "  03:38:12  CurrentInstanceCount 1 -> 0",
        ]
    )
    assert _named(text) == "F13"


def test_the_quantized_models_label_counts_all_in_one_label_collapsed() -> None:
    line = "\n".join(
        [
            "Validation after quantize_dynamic, 900 pairs:",
            "fp32: entailment 301 / neutral 297 / contradiction 302",
            "int8: entailment 0 / neutral 900 / contradiction 0 (acc 0.33)",
        ]
    )
    table = "\n".join(
        [
            "| model | entailment | neutral | contradiction | acc |",
            "| fp32 | 301 | 297 | 302 | 0.88 |",
            "| qint8 | 0 | 900 | 0 | 0.33 |",
        ]
    )
    assert _named(line) == "F29"
    assert _named(table) == "F29"
    # Counts spread over the labels are no collapse
    assert (
        _named(
            line.replace(
                "entailment 0 / neutral 900 / contradiction 0",
                "entailment 290 / neutral 310 / contradiction 300",
            )
        )
        != "F29"
    )


def test_a_first_calls_seconds_and_the_later_calls_milliseconds_in_two_messages_of_a_thread() -> None:
    text = "\n".join(
        [
            "alice: the djl-inference endpoint took 35 s on its first request, InService for an hour already",
            "bob: can you check the later ones?",
            "alice: after that every call is 20-25 ms",
        ]
    )
    assert _named(text) == "F18"
    # A question about the later calls is no figure for them
    assert _named("\n".join(text.splitlines()[:2])) != "F18"


def test_a_stall_with_an_image_beyond_the_default_drivers_cuda_leaves_the_driver_open() -> None:
    record = "\n".join(
        [
            '{"EndpointName": "xnli", "EndpointStatus": "Creating",',
            ' "CreationTime": "2026-12-01T10:00:00Z", "LastModifiedTime": "2026-12-01T10:00:01Z"}',
            "Still Creating after 55 minutes on ml.g5.2xlarge, no log group.",
        ]
    )
    newer = f"{record}\nImage: sagemaker-tritonserver:26.05-py3, no InferenceAmiVersion in the config."
    diagnosis = diagnose(evidence_from_paste(newer, origin="ticket"))
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F20") for line in diagnosis.evidence)
    # With an AMI whose driver runs that CUDA, or with no image named, the stall stands
    fixed = newer.replace(
        "no InferenceAmiVersion in the config", "InferenceAmiVersion al2023-ami-sagemaker-inference-gpu-4-1"
    )
    assert _named(fixed) == "F06"
    assert _named(record) == "F06"


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


def test_a_request_log_whose_first_invocation_took_seconds_on_lmi() -> None:
    text = "\n".join(
        [
            "2026-11-19T09:07:31 INFO ModelInfo Loading model nli on gpu(0)",
            '2026-11-19T09:08:12 INFO RequestLogger 10.2.0.9 "POST /invocations HTTP/1.1" 200 39870ms',
            '2026-11-19T09:08:13 INFO RequestLogger 10.2.0.9 "POST /invocations HTTP/1.1" 200 26ms',
            "djl-inference LMI, TensorRT 안 씀.",
        ]
    )
    assert _named(text) == "F18"


def test_percentile_cells_with_their_own_unit() -> None:
    text = "\n".join(
        [
            "ml.c6i.2xlarge real-time endpoint, 4 workers, measured right after InService",
            "| warmup | n | p50 | p99 |",
            "|---|---|---|---|",
            "| 2 | 500 | 17.5ms | 1,480ms |",
            "| 25 | 500 | 17.4ms | 19.8ms |",
        ]
    )
    assert _named(text) == "F33"


def test_an_optimizer_pass_timed_in_minutes_and_a_pack_timed_by_the_shell() -> None:
    assert (
        _named(
            "olive 돌린 지 25분째인데 결과가 없음. 로그는 Running pass OrtTransformersOptimization 에서 멈춤"
        )
        == "F34"
    )
    assert (
        _named("The olive OrtTransformersOptimization pass has been running for 22 minutes at 100% CPU.")
        == "F34"
    )
    pack = "\n".join(
        ["$ time tar -cf - -C build . | gzip -9 > model.tar.gz", "real    0m48.113s", "user    0m47.902s"]
    )
    assert _named(pack) == "F24"
    assert _named(pack.replace("0m48.113s", "0m3.210s")) != "F24"


def test_a_closed_recap_that_leaves_nothing_to_do_names_nothing() -> None:
    text = "\n".join(
        [
            "[회고] 최적화 경로 정리",
            "- 그때 olive OrtTransformersOptimization 을 돌렸을 때 19분 동안 결과물이 안 나왔음.",
            "- optimum 경로로 전환, 변환 23초. 추가 작업 없음.",
        ]
    )
    assert _named(text) == "unknown"


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


def test_a_status_as_of_a_date_dates_the_recap_before_it() -> None:
    text = "\n".join(
        [
            "[사후 보고] 이전 작업 회고",
            "- 11/08: Triton 이미지 올리면서 error 803 발생 → InferenceAmiVersion 지정으로 해결.",
            "현재 상태 (12/04 기준): 모든 엔드포인트 InService, 5XX 0건",
        ]
    )
    assert _named(text) == "unknown"


def test_instance_or_serverless_as_alternatives_says_neither() -> None:
    text = "bench: warmup 3, p50 40 ms / p90 55 ms / p99 7,900 ms. I don't know the config (instance or serverless)."
    assert _named(text) == "unknown"


def test_copies_short_of_an_instance_they_fit_leave_memory_open() -> None:
    component = {
        "InferenceComponentName": "ic",
        "Specification": {
            "ComputeResourceRequirements": {
                "NumberOfAcceleratorDevicesRequired": 1.0,
                "MinMemoryRequiredInMb": 8192,
            }
        },
        "RuntimeConfig": {"DesiredCopyCount": 3, "CurrentCopyCount": 2},
        "InferenceComponentStatus": "InService",
    }
    shared = (
        f"{json.dumps(component)}\nThe endpoint runs on one ml.g5.12xlarge shared with two other components."
    )
    diagnosis = diagnose(evidence_from_paste(shared, origin="ticket"))
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F10") for line in diagnosis.evidence)
    # Three copies of one GPU on a one-GPU instance cannot fit: the GPUs are the limit
    assert _named(shared.replace("ml.g5.12xlarge", "ml.g5.xlarge")) == "F09"


def test_a_closed_ticket_is_a_settled_matter() -> None:
    text = "\n".join(
        [
            "OPS-88 \"No module named 'onnxruntime'\" on emb-cpu   Status: Closed",
            "Comment: added onnxruntime to code/requirements.txt, redeployed, 500 calls 0 errors.",
        ]
    )
    assert _named(text) == "unknown"


def test_named_payloads_and_a_space_aligned_table() -> None:
    payloads = "\n".join(
        [
            "bench on ml.g6e.xlarge",
            'payload A: {"inputs": "one premise"}',
            'payload B: {"inputs": ["<premise>" x 32]}',
            "Type Name      | Avg Min Max | req/s",
            "POST payloadA  | 16 14 40    | 60.1",
            "POST payloadB  | 530 498 700 | 1.9",
        ]
    )
    assert _named(payloads) == "F31"
    aligned = "\n".join(
        [
            "입력            배치  p50(ms)  처리량(건/s)",
            "샘플(55 토큰)    8     22.9     340",
            "512 고정         8    101.7      79",
        ]
    )
    assert _named(aligned) == "F32"


def test_a_pack_timed_at_gzips_default_level_behind_a_bash_prompt() -> None:
    text = "\n".join(["ops@build:~/art$ time tar -czf model.tar.gz -C model .", "", "real    2m14.302s"])
    assert _named(text) == "F24"
    assert (
        _named(text.replace("tar -czf model.tar.gz -C model .", "tar -cf - -C model . | gzip -1 > m.tar.gz"))
        != "F24"
    )
