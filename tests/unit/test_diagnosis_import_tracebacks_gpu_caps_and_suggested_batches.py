"""Workers that die after the serving code's traceback at import are not shown dying of memory; "serverless" named
with a real-time endpoint as alternatives tells neither; a tail of first calls with the log unread is not shown to be
loading workers; a component record that needs more GPUs than the instance has shows the cap although SageMaker's
reason is cut; a suggestion or a condition that names batch_size passes none; "32-item" and "list(32)" are batches;
the short samples said to keep the long inputs' cost from view; a Korean template that turns on network isolation."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batching import passes_batch_size, rows
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


DIED = "[WARN ] W-9001-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died.\n"


def test_workers_that_die_after_a_traceback_at_import_are_not_shown_dying_of_memory() -> None:
    traceback = (
        "ml.m5.xlarge, one container.\n"
        "[INFO ] W-9001-model-stdout MODEL_LOG - Traceback (most recent call last):\n"
        '[INFO ] W-9001-model-stdout MODEL_LOG -   File "/opt/ml/model/code/inference.py", line 5, in <module>\n'
    )
    assert _diagnosed(traceback + DIED).id == "unknown"
    # Without the traceback, workers that die on an instance are F02's.
    assert _diagnosed("ml.m5.xlarge, one container.\n" + DIED).id == "F02"


def test_serverless_named_beside_a_real_time_endpoint_tells_neither() -> None:
    text = (
        "bge-small, warmup 2, 500 calls: p50 21 ms / p99 27,400 ms, slow calls all at the start.\n"
        "어느 엔드포인트였는지 확인 중 (서버리스 검증용이랑 실시간 c6i 둘 다 떠 있었음).\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_tail_of_first_calls_with_the_log_unread_is_not_shown_to_be_loading_workers() -> None:
    run = "ml.g5.xlarge 실시간 엔드포인트, warmup 3회 후 측정: p50 17ms, p99 8,900ms, 에러 0\n"
    assert _diagnosed(run + "로그는 아직 못 봄.\n").id == "unknown"
    assert _diagnosed(run).id == "F33"


def test_a_record_that_needs_more_gpus_than_the_instance_shows_the_cap_despite_a_cut_reason() -> None:
    text = (
        "endpoint: 1 x ml.g5.xlarge\n"
        '{"InferenceComponentName": "ic-e5", "InferenceComponentStatus": "InService",\n'
        ' "Specification": {"ComputeResourceRequirements": {"NumberOfAcceleratorDevicesRequired": 1,'
        ' "MinMemoryRequiredInMb": 1024}},\n'
        ' "RuntimeConfig": {"DesiredCopyCount": 3, "CurrentCopyCount": 1}}\n'
        'another component: "FailureReason": "SageMaker was able to deploy 0 out of 1 requested copies. ..."\n'
    )
    assert _diagnosed(text).id == "F09"


def test_a_suggestion_or_a_condition_that_names_batch_size_passes_none() -> None:
    assert not passes_batch_size('Try `{"inputs": [...], "parameters": {"batch_size": 32}}`.')
    assert not passes_batch_size("The pipeline only batches when you pass `batch_size`.")
    assert passes_batch_size('We send {"inputs": [...], "parameters": {"batch_size": 32}} with every list.')


def test_an_item_count_and_a_list_call_are_batches() -> None:
    assert [row.batch for row in rows(["16-item request p50: 240 ms", "list(16)  p50 250 ms"])] == [16, 16]


def test_a_list_that_costs_its_size_in_single_calls_after_a_suggestion() -> None:
    text = (
        "HF DLC on ml.g6e.xlarge (L40S), no parameters in the payload.\n"
        "single request p50: 12 ms\n"
        "24-item request p50: 290 ms\n"
        "> reply: it only batches when you pass `batch_size`. Try adding it to the parameters.\n"
    )
    assert _diagnosed(text).id == "F31"


def test_short_samples_said_to_keep_the_long_inputs_cost_from_view() -> None:
    text = "bench p50 20 ms, prod p50 100 ms. short samples 라 long input 비용이 안 보였던 것.\n"
    assert _diagnosed(text).id == "F32"


def test_a_korean_template_that_turns_on_network_isolation_leaves_the_install_open() -> None:
    text = (
        "LMI cpu-full 이미지. PyProcess W-5-model-stdout: ModuleNotFoundError: No module named 'transformers'\n"
        "이 팀 모델은 보통 네트워크 격리 켜서 만든다고 함. pip 로그는 못 받음.\n"
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown"
    assert "F37" in diagnosis.title
