"""A Logs Insights query after its label; a list run on production inputs of unknown length against short samples;
"instance count hit 0"; an optimizer's pass timed by a later look at the clock; a length the paste gives as its
samples'; "TRT EP"; a Korean plain past question ("-였나")."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_labelled_insights_query_is_what_was_searched() -> None:
    text = "\n".join(
        [
            "쿼리: fields @timestamp, @message | filter @message like /Worker died|error 803|No module named/",
            "결과: No data found for this time range",
            "로그 샘플: [INFO ] W-9000-model_1.0 MODEL_LOG - Model loaded",
            "이상 없음.",
        ]
    )
    assert _diagnosed(text).id in ("unknown", "none")


def test_production_inputs_of_unknown_length_are_not_the_samples_length() -> None:
    text = "\n".join(
        [
            "bench: e5 onnx on ml.g5.xlarge",
            "batch=1  p50 22 ms   (samples: 20 short pairs, ~35 tokens)",
            "batch=16 p50 360 ms  (samples: production export, lengths not recorded)",
            'Client sends {"inputs": [...16 strings...]}.',
        ]
    )
    assert _diagnosed(text).id != "F31"
    same = text.replace(
        "(samples: production export, lengths not recorded)", "(same 20 short pairs, ~35 tokens)"
    )
    assert _diagnosed(same).id == "F31"


def test_an_instance_count_that_hit_zero_half_an_hour_later() -> None:
    text = "\n".join(
        [
            "load test stopped at 09:00. copies went 1 -> 0 at 09:12, instance count hit 0 at 09:29",
            "no errors, the alarms fired in order; just slow",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_an_optimizer_pass_timed_by_a_later_look_at_the_clock() -> None:
    log = [
        "[2026-03-02 10:01:05] [INFO] [engine.py:873:_run_pass] Running pass transformers_optimization:"
        "OrtTransformersOptimization",
        "(nothing since)",
    ]
    assert _diagnosed("\n".join([*log, "top at 10:24: python 99.7% CPU"])).id == "F34"
    assert _diagnosed("\n".join([*log, "top at 10:06: python 99.7% CPU"])).id != "F34"
    # A time before the pass began is another event's.
    assert _diagnosed("\n".join([*log, "deploy window opened 08:30"])).id != "F34"


def test_a_length_given_as_the_samples_tells_their_row() -> None:
    text = "\n".join(
        [
            "벤치 샘플: 평균 45 토큰 문장. 운영 입력은 대부분 512 토큰.",
            "같은 엔드포인트(ml.g5.xlarge), 같은 워밍업 30회:",
            "| 조건 | b=1 p50 | b=8 p50 |",
            "| 45 토큰 | 20.0 ms | 21.5 ms |",
            "| 512 고정 | 24.0 ms | 95.0 ms |",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_trt_ep_names_tensorrt() -> None:
    text = "\n".join(
        [
            "g5 endpoint, ORT with TRT EP. b=1 first: 44.0 s, then 15 ms.",
            "b=8 first call timed out at 60 s, then 41 ms.",
        ]
    )
    assert _diagnosed(text).id == "F21"


def test_a_korean_plain_past_question_supposes() -> None:
    text = "컨테이너 뭐 썼죠? LMI 로 했던 거였나 TRT EP 버전이었나"
    at = text.index("TRT EP")
    assert polarity(text, at, at + len("TRT EP")).polarity == "hypothetical"
