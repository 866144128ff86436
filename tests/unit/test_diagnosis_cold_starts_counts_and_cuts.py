"""A first call's read timeout is a cold start only where the endpoint cold-starts (F15 against F18 and F21); what is
to be prevented, a count of none at a sentence's end and an impact that is over; OCR's 0 for o and a split "Model";
a call numbered one is a first call (F31); Triton's file not found (F22); a copy's reason cut after "Reason:" (F09)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import one_by_one
from workflows.diagnosis.ocr import corrected
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity

TIMEOUT = (
    "Traceback (most recent call last):\n"
    '  File "probe.py", line 12, in <module>\n'
    "    rt.invoke_endpoint(EndpointName=name, ContentType='application/json', Body=body)\n"
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-west-1'
    '.amazonaws.com/endpoints/{name}/invocations"\n'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_first_calls_timeout_on_an_endpoint_of_no_known_kind_is_open_between_three() -> None:
    found = _diagnosed("첫 호출만 이렇게 나고 두 번째부터 35 ms 입니다.\n" + TIMEOUT.format(name="intent-v3"))
    assert found.id == "unknown"
    assert all(entry in found.title for entry in ("F15", "F18", "F21")), found.title


def test_an_endpoint_named_serverless_or_called_after_idle_cold_starts() -> None:
    no_death = "The log group has no 'Worker died' line.\n"
    assert _diagnosed(TIMEOUT.format(name="intent-sls-4g") + no_death).id == "F15"
    assert _diagnosed(TIMEOUT.format(name="intent-v3") + no_death).id == "unknown"
    after_idle = "First request after idle died at 60 s; the retry answered in 35 ms.\n"
    assert _diagnosed(after_idle + TIMEOUT.format(name="intent-v3")).id == "F15"


def test_a_log_group_that_shows_the_model_loaded_leaves_no_dying_worker() -> None:
    log = (
        "$ aws logs tail /aws/sagemaker/Endpoints/intent-sls-4g --since 10m\n"
        "2026-12-01T08:02:11 [INFO ] W-9000-model_1.0-stdout MODEL_LOG - Model loaded in 68.2 s\n"
    )
    assert _diagnosed(TIMEOUT.format(name="intent-sls-4g") + log).id == "F15"


def test_what_is_to_be_prevented_did_not_happen() -> None:
    line = "ReadTimeoutError 예방 차원에서 read_timeout=300 적용"
    assert polarity(line, 0, 16).polarity == "hypothetical"
    other = "OOM 방지용으로 메모리 6144 로 올림"
    assert polarity(other, 0, 3).polarity == "hypothetical"


def test_a_count_of_none_before_a_full_stop_denies() -> None:
    line = "부하 테스트 결과: 5xx 0, Worker died 0."
    start = line.index("Worker died")
    assert polarity(line, start, start + len("Worker died")).polarity == "negated"
    assert polarity("p50 went from 0.5 to 0.6 after Worker died 0.5 s later", 31, 42).polarity == "affirmed"


def test_a_review_of_a_past_stall_with_no_impact_now_names_nothing() -> None:
    text = (
        "Subject: [Postmortem] 11/02 us-east-1 g6 엔드포인트 Creating 정체\n"
        "요약: 11/02 ml.g6.2xlarge capacity 부족으로 엔드포인트 생성이 ~55분 Creating 후 FailureReason 없이 Failed.\n"
        "조치: 당일 ml.g5.2xlarge 로 우회, 11/04 원복.\n"
        "현재 영향 없음.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_ocr_reads_a_zero_for_a_small_o_and_joins_a_split_word_of_five_letters() -> None:
    fixed, changes = corrected("Instance type ml.g5.xlarge is not supp0rted for a Mode l using Direct mode")
    assert "is not supported for a Model using" in fixed
    assert "supp0rted→supported" in changes


def test_a_call_numbered_one_is_a_first_call_not_a_batchs_cost() -> None:
    lines = [
        "batch=1  call#1: 41,200 ms   call#2..100: p50 14 ms",
        "batch=8  call#1: 59.1 s, then p50 38 ms",
        "batch=8  call#2: p50 38 ms",
        "batch=16 call#1: 57.0 s, then 70 ms",
    ]
    assert one_by_one(lines) is None


def test_tritons_backend_that_cannot_find_its_file_is_a_missing_file() -> None:
    text = (
        "E1201 08:10:02.118 1 model_lifecycle.cc:638] failed to load 'nli' version 1: Unavailable: unable to find "
        "'/opt/ml/model/nli/1/model.onnx' for model instance 'nli_0_0'\n"
        "error: creating server: Internal - failed to load all models\n"
    )
    assert _diagnosed(text).id == "F22"


def test_a_copys_reason_cut_after_reason_leaves_gpus_and_memory_open() -> None:
    text = (
        "Status: Failed\n"
        "Failure reason: SageMaker was able to deploy 0 out of 1 requested copies. Reason: There is not en ...\n"
    )
    found = _diagnosed(text)
    assert found.id == "unknown"
    assert "F09" in {a.id for a in found.alternatives}
