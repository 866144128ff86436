"""A container the writer cannot see; "no worker death"; a plan's heading; a prompt's line ends a log's output; a load
dated to the first call in Korean, and "로그 보면"; a payload named with a note (F31); a configuration and a payload
the writer does not know."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

_TIMEOUT = (
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-west-1'
    '.amazonaws.com/endpoints/e/invocations"'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_container_the_writer_cannot_see_leaves_the_first_call_open() -> None:
    text = (
        f"{_TIMEOUT}\nsecond call 200 ms. Made by the shared helper; I can't see which container it picked."
    )
    assert _diagnosed(text).id == "unknown"


def test_no_worker_death_rules_out_serverless_memory() -> None:
    text = f"{_TIMEOUT}\nserverless, MemorySizeInMB=6144; CW shows Model loaded ~70 s after start, no worker death."
    assert _diagnosed(text).id == "F15"


def test_a_plans_heading_frames_what_it_lists() -> None:
    text = "\n".join(
        [
            "## 다음 주 점검 계획",
            "1. serverless MemorySizeInMB=1024 로 내려서 Worker died 유도 → 알림 확인",
            "아직 실행 안 함.",
        ]
    )
    assert _diagnosed(text).id != "F14"


def test_a_prompts_line_ends_a_logs_output() -> None:
    text = "\n".join(
        [
            "serverless endpoint e5-sls",
            _TIMEOUT,
            "$ aws logs tail /aws/sagemaker/Endpoints/e5-sls --since 10m",
            "2026-01-03T01:12:40 AllTraffic/abc [INFO ] W-9000-model_1.0 TS_METRICS - Model loaded",
            "$ # Worker died 0건, OOM 0건. 메모리 부족 아님",
        ]
    )
    assert _diagnosed(text).id == "F15"


def test_a_load_dated_to_the_first_call_in_korean() -> None:
    text = "LMI (djl-inference) 엔드포인트. 로그 보면 모델 로드가 InService 때가 아니라 첫 호출(09:10:03) 때 시작함."
    assert _diagnosed(text).id == "F18"
    assert polarity("로그 보면 Worker died 가 찍혀 있음", 6, 17).polarity == "affirmed"


def test_a_payload_named_with_a_note() -> None:
    text = "\n".join(
        [
            "HF DLC on ml.g5.xlarge (A10G)",
            'payload A (single): {"inputs": "q"}',
            'payload B (list of 16): {"inputs": ["q1", "...", "q16"]}',
            "| payload | p50 ms |",
            "|---|---|",
            "| A | 15.0 |",
            "| B | 235.0 |",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_configuration_and_a_payload_the_writer_does_not_know() -> None:
    config = f"{_TIMEOUT}\n두 번째부터 30ms. 엔드포인트 구성은 문서에 없어서 모르겠음."
    assert _diagnosed(config).id == "unknown"
    payload = "\n".join(
        ["mDeBERTa, ml.g5.xlarge", "  b=1  p50 24ms", "  b=8  p50 187ms", "payload 형식은 아직 못 봄."]
    )
    assert _diagnosed(payload).id == "unknown"
