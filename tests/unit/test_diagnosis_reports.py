"""What reports and threads show where no error does: a list run one by one (F31), short samples (F32), a slow
scale-in timeline (F13), the quantized model's label counts (F29), a first call's seconds told in one message and
the later calls' milliseconds in another or in a request log (F18), percentiles with their own unit (F33), an
optimizer pass and a pack timed in minutes (F34, F24)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.batching import rows
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
