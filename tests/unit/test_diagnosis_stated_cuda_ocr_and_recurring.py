"""A CUDA major stated with its minor left open ("CUDA 13.x") beside a stall; a comma after a bracket bounds a denial;
OCR's 1 and l for i; a load that stops and a policy that works as designed but slowly (F13); a table whose latency
columns name their input length (F32); an issue closed as not planned; a time per request ("510 ms/request"); a
failure that ends by itself each time, under an alert that resolved (F13)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


_STALL = """g6 엔드포인트 45분째 Creating. log group 아직 없음.
$ aws sagemaker describe-endpoint --endpoint-name rr-g6 --query '{s:EndpointStatus,c:CreationTime,m:LastModifiedTime}'
{
    "s": "Creating",
    "c": "2026-05-02T10:00:03.100000+00:00",
    "m": "2026-05-02T10:00:04.220000+00:00"
}
"""


def test_a_stated_cuda_major_beyond_the_default_drivers_leaves_the_driver_open() -> None:
    stated = _STALL + "이미지 tritonserver 26.05 (CUDA 13.x), InferenceAmiVersion 미지정. 쿼터는 확인함."
    found = _diagnosed(stated)
    assert found.id == "unknown" and "F20" in found.title
    assert _diagnosed(_STALL + "쿼터는 확인함.").id == "F06"


def test_a_comma_after_a_bracket_bounds_a_denial() -> None:
    text = "이미지 (CUDA 13.x), InferenceAmiVersion 미지정."
    at = text.index("CUDA 13.x")
    assert polarity(text, at, at + len("CUDA 13.x")).polarity == "affirmed"


def test_ocr_ones_and_ells_for_i() -> None:
    text = "\n".join(
        [
            "콘솔 캡처 OCR (글자 깨짐)",
            "상태  Failed",
            "실패 이유  The primary contalner for production variant AllTraffic did not pass the p1ng health check.",
            "컨테이너 3개 (Direct), ml.m5.large. 2개일 땐 떴음.",
        ]
    )
    assert _diagnosed(text).id == "F07"


def test_a_load_stop_and_a_policy_working_as_designed_but_slowly() -> None:
    text = "\n".join(
        [
            "scale-to-zero 측정 (ic-e5, ml.g5.xlarge, TargetTracking + MinCapacity 0)",
            "09:00:00  load stop (locust 종료)",
            "09:14:10  CurrentCopyCount 0",
            "09:28:30  CurrentInstanceCount 0",
            "에러 없음, 정책은 의도대로 동작은 함. 근데 28분 가까이 과금됨.",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_latency_columns_named_for_their_input_length() -> None:
    text = "\n".join(
        [
            "> 제출 수치: b=8 p50 21.0 ms (sample: short_reviews.jsonl, 평균 50 tokens)",
            '재측정 (padding="max_length", max_length=512):',
            "| batch | p50 (50 tok) | p50 (512 tok) |",
            "| 1     | 20.1 ms      | 23.0 ms       |",
            "| 8     | 21.0 ms      | 97.4 ms       |",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_an_issue_closed_as_not_planned_leaves_the_failure_standing() -> None:
    text = "\n".join(
        [
            "Title: [Usage]: serving a DeBERTa-v2 NLI head with --task classify",
            "ValueError: Model architectures ['DebertaV2ForSequenceClassification'] are not supported for now.",
            "Reply (collaborator): not in the registry; closing as not planned.",
        ]
    )
    assert _diagnosed(text).id == "F25"
    assert _diagnosed(text.replace("not planned", "completed")).id != "F25"


def test_a_time_per_request_and_a_line_measured_in_parts() -> None:
    text = "\n".join(
        [
            "Load test, nli on ml.g6e.xlarge, HF DLC pipeline",
            'payload {"inputs": [24 sentences]}  -> 410 ms/request',
            'payload {"inputs": "one sentence"} -> 17 ms/request',
            'With {"inputs": [...], "parameters": {"batch_size": 24}} we measured 23 ms. No errors anywhere.',
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_slow_scale_in_under_a_resolved_alert_still_recurs() -> None:
    text = "\n".join(
        [
            "Subject: [Resolved] idle-cost watch: ic-stage",
            "Timeline after the load test ended at 10:00:",
            "  10:00  last request",
            "  10:14  InferenceComponent CopyCount 1 -> 0",
            "  10:29  Endpoint instances 1 -> 0",
            "It did reach zero, but we pay ~30 min of g5 per idle gap.",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_benchmark_alert_resolved_by_a_longer_warmup_is_settled() -> None:
    text = "\n".join(
        [
            "Subject: [RESOLVED] serverless p99 latency",
            "Alert fired on the 08:40 run (p99 31,200 ms, p90 240 ms) which used warmup=5, serverless endpoint.",
            "Re-run at 09:05 with warmup=15: p99 250 ms. Closing.",
        ]
    )
    assert _diagnosed(text).id != "F16"
