"""A label's name is no lack of it; a batch's cost is its fastest run and an expectation is no run; "may fail" and
"would" suppose; a ticket closed in its title or its last line settles; a virtualenv's prompt runs a command; a
report's block gives its rows their batch and length, and real traffic stands against the benchmark; a numbered
request table, a count named at zero and a value labelled after it are read."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str, mention: str) -> str:
    start = line.index(mention)
    return polarity(line, start, start + len(mention)).polarity


def test_a_labels_name_is_no_lack_of_it() -> None:
    carried = (
        "both images carry com.amazonaws.sagemaker.capabilities.accept-bind-to-port=true; endpoint InService"
    )
    assert _diagnosed(carried).id != "F05"
    assert (
        _diagnosed("the vllm image lacks the accept-bind-to-port=true label, so CreateEndpoint refused").id
        == "F05"
    )
    assert _diagnosed("co-host 실패: vllm 이미지에 accept-bind-to-port 라벨 없음").id == "F05"


def test_a_batch_that_also_ran_fast_paid_a_one_time_cost() -> None:
    text = "\n".join(
        [
            "TensorrtExecutionProvider, ml.g5.xlarge, calls in order:",
            "#1 b=1 15 ms",
            "#2 b=8 52.3 s (engine build for the new shape)",
            "#3 b=8 40 ms",
        ]
    )
    assert _diagnosed(text).id != "F31"


def test_an_expected_figure_is_no_run() -> None:
    text = "\n".join(
        [
            "HF DLC pipeline on ml.g6e.xlarge (L40S)",
            'payload A: {"inputs": "<one pair>"}  -> p50 16 ms',
            'payload B: {"inputs": [32 pairs]}    -> p50 505 ms',
            "expected: batch 32 should be 25-30 ms; no parameters in the body",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_what_may_happen_or_would_happen_is_supposed() -> None:
    line = 'endpoints on older AMIs may fail to start with "unsupported display driver / cuda driver combination"'
    assert _reading(line, "unsupported display driver / cuda driver combination") == "hypothetical"
    line = (
        'without the alarm, requests at zero copies would get "Inference Component has no capacity" forever'
    )
    assert _reading(line, "Inference Component has no capacity") == "hypothetical"


def test_a_ticket_closed_in_its_title_or_its_last_line_settles() -> None:
    text = "\n".join(
        [
            "[회고] 4/02 serverless 500 장애 — 종료",
            '원인: MemorySizeInMB 2048 에서 "Worker died" 반복 → 6144 로 올려 해결.',
            "이후 2주간 5xx 0건. 본 티켓은 닫습니다.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_virtualenvs_prompt_runs_a_command() -> None:
    text = "\n".join(
        [
            "export 전용 venv 에서만 optimum 설치",
            '(export-env) $ pip install "optimum[onnxruntime]" "transformers<4.58"',
            "Successfully installed optimum-1.26.1 transformers-4.57.1",
        ]
    )
    assert _diagnosed(text).id != "F28"


def test_a_reports_blocks_set_benchmark_samples_against_production() -> None:
    text = "\n".join(
        [
            "Load test (before launch, ml.g5.xlarge):",
            "samples: support FAQ titles, mean 16 tokens",
            "b=8 p50 23.5 ms",
            "Production, first week:",
            "inputs: chat transcripts, mean 420 tokens",
            "b=8 p50 98.0 ms",
        ]
    )
    assert _diagnosed(text).id == "F32"
    # Without the benchmark's sample lengths, two runs of one batch say nothing of their inputs.
    assert _diagnosed(text.replace("samples: support FAQ titles, mean 16 tokens\n", "")).id != "F32"


def test_korean_list_of_n_items_gives_its_batch() -> None:
    text = "\n".join(
        [
            "L40S 엔드포인트, HF pipeline",
            "- 단건 1개: 16ms",
            "- 32개 리스트 1회: 505ms",
            "parameters 필드 없음",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_numbered_request_table_whose_first_request_took_seconds_on_lmi() -> None:
    text = "\n".join(
        [
            "LMI (djl-inference) on ml.g5.xlarge, InService at 09:00",
            "| request # | batch | latency |",
            "|---|---|---|",
            "| 1 | 1 | 37,905 ms |",
            "| 2 | 1 | 16 ms |",
        ]
    )
    assert _diagnosed(text).id == "F18"


def test_a_count_named_at_zero_in_a_poll_ends_the_scale_in() -> None:
    text = "\n".join(
        [
            "polling every 30 s:",
            "  08:00:00  load test stops   copies 1  instances 1",
            "  08:14:10  copies 0          instances 1",
            "  08:27:30  instances 0",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_value_labelled_after_it_is_a_percentile() -> None:
    text = "\n".join(
        [
            "[FIRING:1] bench p99 > 500ms",
            "Value: B0=1598.2 (p99 ms), B1=19.5 (p50 ms)",
            "real-time endpoint ml.c6i.2xlarge, 4 workers, measured right after 3 warmup calls",
        ]
    )
    assert _diagnosed(text).id == "F33"
