"""A Korean condition on what may occur ("... 가 나오면"); a quote under the line that introduces it; a guess put after
what it guesses; a ticket titled resolved by its key; two runs on one line; a set's median length; a single call's
time in an aside; label counts as a bare dict or as Counter.most_common(); file_name=None; a first call labelled
"first:"; top's row alone; the first /invocations and the next calls."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.latency import runs, tail_gone_after_warmup
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(text: str, mention: str) -> str:
    at = text.index(mention)
    return polarity(text, at, at + len(mention)).polarity


def test_a_korean_condition_on_an_occurrence_supposes_it() -> None:
    text = "CUDA error 803 가 뜨면 InferenceAmiVersion 을 올리세요"
    assert _reading(text, "CUDA error 803") == "hypothetical"
    said = '"did not pass the ping health check" 가 나오면 컨테이너별 로그를 보세요'
    assert _reading(said, "did not pass the ping health check") == "hypothetical"
    # What a step was followed by, and what a run did, are no conditions.
    assert _reading("Worker died 가 났음. 재시작하고 나면 정상", "Worker died") == "affirmed"


def test_a_question_about_a_failure_to_come_then_inservice_names_nothing() -> None:
    text = "\n".join(
        [
            "Q: ping health check 실패하면 어떤 로그를 봐야 하나요? 다음 주에 2-컨테이너로 올릴 예정이라 미리 여쭙니다.",
            '> reply: "did not pass the ping health check" 가 나오면 컨테이너별 로그 스트림부터 보세요.',
            "update: ml.m6i.2xlarge 로 올렸고 health check 통과, InService. 닫습니다.",
        ]
    )
    assert _diagnosed(text).id in ("unknown", "none")
    assert _diagnosed(text).id != "F07"


def test_a_quote_sits_under_the_line_that_introduces_it() -> None:
    text = "\n".join(
        [
            "공유: 옆 팀(추천팀) 채널에 올라온 건데 참고하세요",
            "> ResourceLimitExceeded: The account-level service limit 'ml.g5.12xlarge for endpoint usage' is 0 Instances",
            "그쪽 계정 얘기고 우리 엔드포인트 2개는 오늘 다 InService, 알람 없음.",
        ]
    )
    assert _diagnosed(text).id != "F39"


def test_a_quote_under_an_outline_item_keeps_the_outline() -> None:
    text = "\n".join(
        [
            "1. 지난달 이슈 후속",
            " - 4월에 아래 에러로 배포가 막혔던 건은 한도 증설 승인으로 종결",
            "   > ResourceLimitExceeded: The account-level service limit 'ml.g5.12xlarge for endpoint usage' is 0 Instances",
            "2. 이번 주: 전부 InService",
        ]
    )
    assert _diagnosed(text).id != "F39"


def test_a_guess_after_what_it_guesses_supposes_it() -> None:
    assert (
        _reading("LMI loads on first request, that's it probably", "loads on first request") == "hypothetical"
    )
    said = "the worker loads the model at the first call unless told otherwise, could be that"
    assert _reading(said, "loads the model at the first call") == "hypothetical"
    # A clause with words of its own keeps its comma as its bound.
    assert _reading("The quota is fine, the stall probably is capacity", "quota is fine") == "affirmed"


def test_two_engines_each_guessed_in_a_thread_stay_open() -> None:
    text = "\n".join(
        [
            "dev: first invoke to the new LMI endpoint (TensorRT build on, g5.2xlarge) timed out after 60s. second call 21 ms.",
            "ops: LMI loads the model on the first request, that could explain it",
            "dev: but the TensorRT option builds an engine on the first shape too",
            "ops: no logs kept, endpoint deleted.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_ticket_titled_resolved_by_its_key_is_settled() -> None:
    text = "\n".join(
        [
            "OPS-4410 resolved",
            '원인: IC 가 0 copy 일 때 "Inference Component has no capacity to process this request" 로 즉시 실패.',
            "조치: step scaling policy 와 알람 추가. 검증 완료, 이후 에러 없음.",
        ]
    )
    assert _diagnosed(text).id != "F12"


def test_a_percentile_named_again_starts_the_next_run() -> None:
    line = "p50 18.1ms / p99 1480ms. 워밍업 25회로 다시 돌리니 p99 19.0ms."
    assert [run.percentiles for run in runs([line])] == [{50: 18.1, 99: 1480.0}, {99: 19.0}]
    assert tail_gone_after_warmup([line]) is not None
    assert tail_gone_after_warmup(["p50 18.1ms / p99 1480ms. 다시 돌리니 p99 19.0ms."]) is None


def test_a_set_given_by_its_median_length_is_the_samples_own() -> None:
    text = "\n".join(
        [
            "Benchmark review, e5-base on ml.g5.xlarge",
            "Published: b=8 p50 21.0 ms using the eval set (median 48 tokens).",
            "Rerun with inputs padded to 512: b=8 p50 96.5 ms. No errors, same warm-up.",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_a_single_calls_time_in_an_aside_against_the_lists() -> None:
    text = "\n".join(
        [
            'payload {"inputs": [24 sentences]}',
            "  latency 402 ms  (single 17 ms × 24 ≈ 408)",
            "GPU util 6%. parameters 에 batch_size 없음.",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_label_counts_as_a_bare_dict_or_most_common_collapse() -> None:
    bare = "\n".join(
        [
            "quantize_dynamic(model.onnx, model_int8.onnx, weight_type=QuantType.QInt8)",
            "fp32: acc 0.80, label dist {entailment: 140, neutral: 130, contradiction: 130}",
            "int8: acc 0.33, label dist {contradiction: 400}",
        ]
    )
    assert _diagnosed(bare).id == "F29"
    pairs = "\n".join(
        [
            'quantize_dynamic("model.onnx", "model_int8.onnx", weight_type=QuantType.QInt8)',
            "fp32 [('entailment', 140), ('neutral', 130), ('contradiction', 130)] 0.80",
            "int8 [('contradiction', 400)] 0.33",
        ]
    )
    assert _diagnosed(pairs).id == "F29"


def test_a_loader_given_file_name_none_names_no_file() -> None:
    text = "\n".join(
        [
            'ORTModelForFeatureExtraction.from_pretrained("export/", file_name=None)',
            "ls export/: config.json  model.onnx  model_quantized.onnx  tokenizer.json",
            "latency fp32 40.1 ms, int8 39.8 ms; outputs identical.",
        ]
    )
    assert _diagnosed(text).id == "F30"
    named = text.replace("file_name=None", 'file_name="model_quantized.onnx"')
    assert _diagnosed(named).id != "F30"


def test_a_first_call_labelled_first_with_korean_later_calls() -> None:
    text = "\n".join(
        [
            "ORT TensorrtExecutionProvider, ml.g5.2xlarge. 배치별 첫 호출:",
            "  b=1 first: 44.0 s   이후 14-16 ms",
            "  b=4 first: 49.5 s   이후 27 ms",
        ]
    )
    assert _diagnosed(text).id == "F21"


def test_tops_row_alone_times_the_optimizer() -> None:
    text = "\n".join(
        [
            "[INFO] [engine.py:873:_run_pass] Running pass transformers_optimization:OrtTransformersOptimization",
            "$ top -b -n1 -p 5120 | tail -1",
            "   5120 ubuntu    20   0   30.1g  26.2g  11m R  99.6 41.0  22:10.31 python",
        ]
    )
    assert _diagnosed(text).id == "F34"
    short = text.replace("22:10.31", "1:10.31")
    assert _diagnosed(short).id != "F34"


def test_the_first_invocations_and_the_next_calls() -> None:
    text = "\n".join(
        [
            "djl-inference lmi on ml.g5.xlarge, python engine.",
            "Observed: first /invocations = 12.4 s. Next 300 calls p50 26 ms.",
        ]
    )
    assert _diagnosed(text).id == "F18"
