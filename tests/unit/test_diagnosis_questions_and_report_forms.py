"""A Korean question written into its verb's last syllable and an English "is gone" set a mention aside; a placement
reason cut off before its cause, a distribution in percent, an NLI label said of all outputs, an optimizer pass named by
its type, a model load dated to the first request, a line's later measurement, a header's unit written apart and a
stop whose time follows its words are each read."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str, mention: str) -> str:
    start = line.index(mention)
    return polarity(line, start, start + len(mention)).polarity


def test_a_korean_question_in_its_verbs_last_syllable_asks() -> None:
    # -ㄹ까 is written into the syllable before it: 날까, 뜰까, 나올까 each ask, as 을까 does.
    assert (
        _reading("배포 전에 ResourceLimitExceeded 또 뜰까 했는데 이번엔 통과", "ResourceLimitExceeded")
        == "hypothetical"
    )
    assert _reading("Worker died 가 또 나올까 싶어서 로그 열어봄", "Worker died") == "hypothetical"
    # A syllable ending in another consonant before 까 is no question ("까지" is a particle).
    assert _reading("Worker died 발생, 재시작까지 3분", "Worker died") == "affirmed"


def test_a_reviewers_worry_in_korean_over_a_clean_run_names_nothing() -> None:
    text = "\n".join(
        [
            "Execution embed-deploy-0412  SUCCEEDED",
            '  TaskStateExited  WaitInService  {"EndpointStatus":"InService"}',
            "메모: 예전처럼 No module named 'onnxruntime' 날까 했는데 requirements 에 들어가 있어서 문제 없었음.",
        ]
    )
    assert _diagnosed(text).id != "F01"


def test_what_is_gone_is_the_past() -> None:
    line = "note: the ResourceLimitExceeded from the spring launch is gone since the quota went to 6"
    assert _reading(line, "ResourceLimitExceeded") == "historical"
    # Something else gone says nothing of the failure before it.
    assert _reading("Worker died again at 10:02; the old container is gone", "Worker died") == "affirmed"


def test_a_placement_reason_cut_off_before_its_cause_leaves_memory_open() -> None:
    text = "\n".join(
        [
            '{"InferenceComponentName": "rerank-ic", "InferenceComponentStatus": "Failed",',
            ' "FailureReason": "SageMaker was able to deploy 0 out of 2 requested copies …"}',
            "endpoint on ml.g5.2xlarge (one GPU), nothing else on it we know of",
        ]
    )
    assert _diagnosed(text).id == "unknown"
    # The same reason whole, ending where SageMaker ends it, stays the GPU cap's.
    assert _diagnosed(text.replace(" …", ".")).id == "F09"


def test_a_label_distribution_in_percent_with_one_label_at_100_is_a_collapse() -> None:
    text = "\n".join(
        [
            "09:10 rolled out model_quantized.onnx (quantize_dynamic, QInt8)",
            "09:55 monitor: label share entailment 0% / neutral 100% / contradiction 0%",
        ]
    )
    assert _diagnosed(text).id == "F29"


def test_an_nli_label_said_of_all_outputs_after_int8_is_a_collapse() -> None:
    text = (
        "eval on 500 pairs after QInt8 dynamic quantization: fp32 acc 0.88, int8 acc 0.33 (all contradiction)"
    )
    assert _diagnosed(text).id == "F29"
    # Without INT8 or quantization in the paste, one label everywhere is some other bug.
    assert _diagnosed("eval on 500 pairs: acc 0.33, all contradiction").id != "F29"


def test_an_optimizer_pass_named_by_its_type_alone_that_runs_past_its_bound() -> None:
    text = "\n".join(
        [
            "[2026-10-02 08:00:03] [INFO] [engine.py:210:run_pass] Running pass OrtTransformersOptimization",
            "nothing printed since, 25 minutes elapsed, one core pinned at 100%",
        ]
    )
    assert _diagnosed(text).id == "F34"
    finished = (
        text + "\n[2026-10-02 08:26:10] [INFO] Pass OrtTransformersOptimization finished in 1570 seconds"
    )
    assert _diagnosed(finished).id != "F34"


def test_a_model_load_dated_to_the_first_request_on_lmi_is_a_lazy_load() -> None:
    text = "\n".join(
        [
            "djl-inference (LMI) endpoint emb-lmi on ml.g5.xlarge, InService since 09:01",
            "server log: Loading model ... at the first request (09:20:11), load done 09:20:47",
        ]
    )
    assert _diagnosed(text).id == "F18"
    korean = 'LMI 엔드포인트 로그: 첫 요청 들어온 직후 "Loading model" 시작 → 36초 뒤 로딩 끝'
    assert _diagnosed(korean).id == "F18"


def test_a_lines_later_measurement_shares_the_batch_of_its_first() -> None:
    text = "다시 측정: b=8 평균 샘플 p50 22ms, 512로 패딩한 입력 p50 98ms. 에러 없음"
    assert _diagnosed(text).id == "F32"


def test_a_header_unit_written_apart_is_part_of_its_column() -> None:
    text = "\n".join(
        [
            "HF DLC zero-shot pipeline on ml.g5.xlarge",
            "request                     p50 ms   p99 ms",
            '{"inputs": "<1 text>"}       15.8     18.9',
            '{"inputs": [<16 texts>]}     251.0    262.4',
            'no "parameters" in the body',
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_stop_whose_time_follows_its_words_starts_the_scale_in_timeline() -> None:
    text = "\n".join(
        [
            "Subject: [Alerting] ic idle cost",
            "Summary: traffic stopped 2026-10-30 23:30:00Z",
            "  23:46:02Z  InferenceComponent CurrentCopyCount 1 -> 0",
            "  23:59:40Z  Endpoint CurrentInstanceCount 1 -> 0",
        ]
    )
    assert _diagnosed(text).id == "F13"
