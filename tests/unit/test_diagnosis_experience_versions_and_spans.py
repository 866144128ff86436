"""What has happened before, told as experience; a previous configuration's failure; an image not yet seen; a zero
whose time follows it (F13); a comparison with "vs" (F32); a pass named in lower case and a start and a now (F34)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.scale_in import timeline


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_what_happened_before_told_as_experience_is_the_past() -> None:
    text = "int8 채택 (일치율 99%). 참고로 다른 모델은 quantize_dynamic 후 전부 neutral 로 나온 적 있어서 이번엔 뺌."
    assert _diagnosed(text).id != "F29"


def test_a_previous_configurations_failure_is_the_past() -> None:
    text = "\n".join(
        [
            "상태 InService, 현재 에러율 0",
            "10/2 10:20  이전 설정 v6 업데이트 실패: did not pass the ping health check → 자동 롤백",
        ]
    )
    assert _diagnosed(text).id != "F07"


def test_an_image_not_yet_seen_leaves_the_first_call_open() -> None:
    text = "\n".join(
        [
            'ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1.amazonaws.com/'
            'endpoints/rr/invocations"',
            "두 번째부터는 30ms. 인프라팀이 만든 거라 이미지도 아직 못 봤어요",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_zero_whose_time_follows_it() -> None:
    lines = ["트래픽 중단            09:00", "IC copies 1 -> 0       09:14", "instances 1 -> 0       09:29"]
    found = timeline(lines)
    assert found is not None and found.minutes == 29.0


def test_a_comparison_with_vs_under_a_padded_block() -> None:
    lines = ["fixed 512 로 다시 재보니:", "  b=8 p50  20.0ms (45 tok) vs 85.0ms (512)"]
    found = hidden_by_samples(lines)
    assert found is not None and found[0].ms == 20.0 and found[1].ms == 85.0


def test_a_pass_named_in_lower_case_and_a_start_and_a_now() -> None:
    text = "\n".join(
        [
            "Olive 최적화 (OrtTransformersOptimization, model_type bert) 아직 안 끝남.",
            '시작 10:02, 지금 10:24. 로그는 "Running pass transformers_optimization" 이후 없음.',
        ]
    )
    assert _diagnosed(text).id == "F34"
