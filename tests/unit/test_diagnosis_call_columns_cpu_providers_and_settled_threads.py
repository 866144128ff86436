"""A table that numbers each call in a column of its own shows a first call per shape; a session's providers that
hold the CPU's alone on a GPU instance are the silent fallback; a thread marked resolved in a ticket's idiom is
settled; a template said to enable network isolation leaves F37 open; someone's report by their handle is theirs;
a Catch branch never taken names no failure; "Protobuf parsing failed" said of model.onnx is a truncated file; a
benchmark measured on short samples said in Korean to hide long inputs' cost."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.call_columns import call_column_first_cold
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


REPORT = [
    "len  bs  call#  p50",
    "128  4   1      38,410 ms",
    "128  4   2      9 ms",
]


def test_call_one_in_seconds_and_call_two_in_milliseconds_of_one_shape() -> None:
    assert call_column_first_cold(REPORT) == REPORT[1]
    # Two shapes: call 2 of another shape says nothing of this one's first call.
    other_shape = [REPORT[0], REPORT[1], "256  4   2      9 ms"]
    assert call_column_first_cold(other_shape) == ""
    # Without a call-number column, rows that lead with 1 and 2 are not call numbers.
    assert call_column_first_cold(["len  bs  p50", "1  1  38,410 ms", "1  2  9 ms"]) == ""


def test_a_call_number_table_on_tensorrt_is_the_engine_built_per_shape() -> None:
    text = "bge-m3 on ml.g5.2xlarge, onnxruntime with TensorrtExecutionProvider\n" + "\n".join(REPORT) + "\n"
    assert _diagnosed(text).id == "F21"


def test_cpu_provider_alone_on_a_gpu_instance_is_the_silent_fallback() -> None:
    line = "MODEL_LOG - session providers: ['CPUExecutionProvider']\n"
    assert _diagnosed("instance: ml.g5.xlarge, GPUUtilization 0 %\n" + line).id == "F36"
    # On a CPU instance the CPU provider is the one expected.
    assert _diagnosed("instance: ml.c6i.xlarge\n" + line).id == "unknown"


def test_a_thread_marked_resolved_in_a_tickets_idiom_is_settled() -> None:
    text = (
        "nli 엔드포인트 500 나요. 로그에 `Worker died.` 계속 찍힘\n"
        "real-time ml.m5.xlarge, `Default workers per model: 4`\n"
        "WORKERS=1 로 바꿔서 재배포했더니 사라짐. 원인 그거였음\n"
        "2시간 모니터링 후 resolved 처리합니다\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_template_said_to_enable_network_isolation_leaves_the_install_open() -> None:
    text = (
        "ModelError: Received client error (400) from primary with message \"No module named 'onnxruntime'\"\n"
        "The model came from the locked-down template; some of its variants enable network isolation.\n"
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown"
    assert {a.id for a in diagnosis.alternatives} >= {"F01"}
    assert "F37" in diagnosis.title


def test_someones_report_by_their_handle_is_theirs() -> None:
    text = (
        "@dev-kim reported `POST /score HTTP/1.1 404 Not Found` from their vLLM build.\n"
        "On our side every call goes to /classify and answers 200, so no issue for us.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_catch_branch_never_taken_names_no_failure() -> None:
    text = (
        "33  ExecutionSucceeded  2025-04-11T01:07:44.100Z\n"
        "(the Catch branches for ResourceLimitExceeded / CapacityStall were never taken)\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_protobuf_parsing_failed_said_of_the_model_file_is_a_truncated_file() -> None:
    text = (
        'Triton: "error: creating server: Internal - failed to load all models"\n'
        'config.pbtxt parses fine. The log also had "Protobuf parsing failed" for 1/model.onnx.\n'
    )
    assert _diagnosed(text).id == "F22"


def test_a_benchmark_on_short_samples_hid_long_inputs_in_korean() -> None:
    text = "벤치 p50 20ms, 운영 p50 95ms. 결론: 짧은 문장으로 잰 벤치가 긴 입력 비용을 숨김.\n"
    assert _diagnosed(text).id == "F32"
