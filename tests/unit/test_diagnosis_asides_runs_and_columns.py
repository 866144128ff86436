"""A question's bracketed aside after its mark; an earlier run named by its id and a matter told as resolved (Korean);
a count held until a time, then zero (F13); a collapsed count with only its first label (F29); a measurement's start
and workers' "Model loaded" told with their times after them (F33); a header whose batch column is "inputs per
request"; a list comprehension that runs the graph per input (F31)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity
from workflows.diagnosis.report_columns import header


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(text: str, mention: str) -> str:
    at = text.index(mention)
    return polarity(text, at, at + len(mention)).polarity


def test_a_questions_bracketed_aside_is_asked_too() -> None:
    text = "will our new image hit the 803 thing? (unsupported display driver / cuda driver combination)"
    assert _reading(text, "unsupported display driver / cuda driver combination") == "hypothetical"
    said = "It failed again. (unsupported display driver / cuda driver combination)"
    assert _reading(said, "unsupported display driver / cuda driver combination") == "affirmed"


def test_an_earlier_run_and_a_matter_told_as_resolved_are_the_past() -> None:
    text = "smoke test 200 x 50 정상. 이전 run-0311 의 ResourceLimitExceeded 는 쿼터 늘려서 해결된 건."
    assert _reading(text, "ResourceLimitExceeded") == "historical"
    assert _diagnosed(text).id != "F39"


def test_a_count_held_until_a_time_then_zero() -> None:
    text = "\n".join(
        [
            "Subject: [FIRING:1] ic copy count > 0 while idle",
            "Annotations: traffic stopped at 09:02 UTC; CurrentCopyCount stayed 1 until 09:34 UTC, then 0.",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_collapsed_count_with_only_its_first_label() -> None:
    text = "\n".join(
        [
            "| 모델 | acc | 예측 분포 |",
            "| fp32 model.onnx | 0.80 | ent 140 / neu 130 / con 130 |",
            "| quantize_dynamic int8 | 0.33 | contradiction 400 / 0 / 0 |",
        ]
    )
    assert _diagnosed(text).id == "F29"


def test_a_measurement_start_and_workers_loaded_after_it_in_korean() -> None:
    text = "\n".join(
        [
            "벤치 보고서 검토",
            "- 측정 시작: 엔드포인트 InService 직후 (11:00:04)",
            '- 로그상 W-9001~W-9003 "Model loaded" 가 11:00:39 까지 찍힘',
            "- p99 2.6초. 11:01 이후만 보면 p99 58ms. 에러 0건, 서버리스 아님 (ml.c6i.2xlarge)",
        ]
    )
    assert _diagnosed(text).id == "F33"


def test_a_load_test_kicked_off_before_workers_loaded() -> None:
    text = "\n".join(
        [
            "[FIRING:1] enc p99 latency > 2000ms, ModelLatency p99 = 6,900 ms",
            "Endpoint went InService 14:04. Load test kicked off 14:05 automatically.",
            'Workers W-9001..W-9003 logging "Model loaded" at 14:06:30, 14:07:45, 14:08:20.',
            "instance is ml.c6i.4xlarge real-time (not serverless). No Worker died.",
        ]
    )
    assert _diagnosed(text).id == "F33"


def test_a_header_whose_batch_column_is_inputs_per_request() -> None:
    assert header(["inputs per request", "p50 (ms)", "p50 / input"]) == {"latency": 1, "batch": 0}


def test_a_list_comprehension_that_runs_the_graph_per_input() -> None:
    text = "\n".join(
        [
            "minilm on ml.c6i.xlarge: 1 input 9.5 ms, 16 inputs 150 ms, per input flat.",
            "inference.py predict_fn:",
            '    return [self.session.run(None, self.tok(t, return_tensors="np")) for t in data["inputs"]]',
        ]
    )
    assert _diagnosed(text).id == "F31"
