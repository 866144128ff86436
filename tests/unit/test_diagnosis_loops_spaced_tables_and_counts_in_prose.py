"""Serving code that loops over its inputs is F31 on any instance; a first-call table aligned by spaces is read as a
piped one; copies counted in prose are short of the GPUs only where they cannot fit them; Direct mode refused
"with" a GPU type, a cut-off safetensors header, a count of no-capacity failures, a scale-in timed in one
sentence, a later call's answer, a log export's order and a bench's samples called too short are each read; a
quoted issue of someone else's ("다른 사람이 올린") and "우리 쪽 문제 없음" are not ours."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_serving_code_that_runs_each_input_alone_is_f31_on_a_cpu() -> None:
    text = (
        "ml.m5.xlarge, e5-small ONNX\nbatch 16: 190 ms, batch 1: 12 ms\n"
        "handler: for q in payload['inputs']: out.append(sess.run(None, enc(q))[0])\n"
    )
    assert _diagnosed(text).id == "F31"
    assert (
        _diagnosed("CPU 엔드포인트. 핸들러가 for 문으로 하나씩 session.run 함. 배치 효과 없음.\n").id == "F31"
    )


def test_a_first_call_table_aligned_by_spaces_is_read() -> None:
    text = (
        "onnxruntime TensorRT EP on ml.g5.2xlarge\n"
        "shape    first call    steady p50\n"
        "b1x64    29.4 s        3 ms\n"
        "b8x128   33.0 s        9 ms\n"
    )
    assert _diagnosed(text).id == "F21"


def test_copies_counted_in_prose_past_one_gpu_are_f09() -> None:
    said = (
        "ml.g5.xlarge 1대. IC 가 DesiredCopyCount 3 인데 CurrentCopyCount 1 에서 안 올라감. 메모리는 충분.\n"
    )
    assert _diagnosed(said).id == "F09"
    # On four GPUs two copies fit by themselves: what else holds the devices or the memory is not shown.
    shared = "ml.g5.12xlarge 1대, GPU 4장. DesiredCopyCount 2 인데 CurrentCopyCount 1.\n"
    assert _diagnosed(shared).id == "unknown"
    # None placed yet is a start or a scale-out from zero, not a shortfall.
    assert _diagnosed(
        "ml.g5.xlarge. DesiredCopyCount 1, CurrentCopyCount 0 right after the first request.\n"
    ).id != ("F09")


def test_direct_mode_refused_with_a_gpu_type_named_after_it_is_f04() -> None:
    text = (
        'Resource handler returned message: "InferenceExecutionConfig Mode Direct for multi-container model is not '
        'supported with instance type ml.g6.xlarge."\n'
    )
    assert _diagnosed(text).id == "F04"


def test_a_safetensors_header_cut_short_is_f22() -> None:
    text = "safetensors_rust.SafetensorError: Error while deserializing header: MetadataIncompleteBuffer\n"
    assert _diagnosed(text).id == "F22"


def test_a_count_of_no_capacity_failures_is_f12_and_a_plan_naming_the_metric_is_not() -> None:
    counted = (
        "IC at zero copies overnight. CloudWatch: NoCapacityInvocationFailures = 12, CurrentCopyCount = 0.\n"
    )
    assert _diagnosed(counted).id == "F12"
    plan = "Steps:\n1. step scaling on NoCapacityInvocationFailures.\n2. min copies 0.\n"
    assert _diagnosed(plan).id != "F12"


def test_a_scale_in_timed_in_one_sentence_is_f13() -> None:
    text = "e5-ic idle cost: traffic stopped 01:10, CopyCount hit 0 at 01:41. Policy is target tracking.\n"
    assert _diagnosed(text).id == "F13"


def test_a_later_call_answered_without_parentheses_or_said_in_words() -> None:
    timeout = (
        "botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "
        '"https://runtime.sagemaker.us-east-1.amazonaws.com/endpoints/bge-sls/invocations"\n'
    )
    assert _diagnosed(timeout + '{"embedding": [0.01, 0.2]}  233 ms\n').id == "F15"
    assert _diagnosed(timeout + "serverless. Only the first call after idle fails.\n").id == "F15"


def test_a_log_export_without_times_keeps_its_order() -> None:
    text = (
        "@timestamp,@message\n"
        '2025-01-02 08:00:01.000,"Starting load test (endpoint InService at 08:00:00)"\n'
        '2025-01-02 08:00:30.000,"W-9002-model Model loaded"\n'
        '2025-01-02 08:01:00.000,"summary: p99 far above the rerun, see the dashboard"\n'
        "real-time endpoint on ml.c6i.xlarge, not serverless.\n"
    )
    assert _diagnosed(text).id == "F33"


def test_a_benchs_samples_called_too_short_are_f32() -> None:
    assert (
        _diagnosed("운영 p95 가 벤치의 4배. 결론: 벤치 샘플이 너무 짧았음, 긴 입력으로 재측정.\n").id == "F32"
    )
    assert _diagnosed(
        "Prod p99 180 ms, bench p99 14 ms. So the bench numbers never measured long inputs.\n"
    ).id == ("F32")


def test_someone_elses_quoted_issue_and_no_problem_on_our_side_name_nothing() -> None:
    text = (
        '다른 사람이 올린 이슈: "Creating 50분 후 Failed, FailureReason empty"\n'
        "우리는 오늘 8분 만에 InService. 우리 쪽 문제 없음.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_stream_rolled_off_or_logs_nobody_read_leave_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "retention is 1 day and the stream rolled off.\n").id == "unknown"
    assert _diagnosed(PING + "Nobody has looked at the container logs yet.\n").id == "unknown"
