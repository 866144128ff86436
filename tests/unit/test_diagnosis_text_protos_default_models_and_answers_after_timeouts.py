"""Triton's "failed to read text proto" is F19; memory short for a component is F10 in any wording; vLLM's older
default model is F26; Direct mode refused "for" a GPU type is F04; a call answered after a read timeout leaves the
cold start alone; onnxruntime's optimizer run for hours is F34; label counts one to a line are F29; a server log
loading model.onnx beside a quantized graph is F30; logs that cannot be read or hold nothing leave a failed ping
open; a plan's things to watch and a closed tracking issue name nothing."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"
TIMEOUT = (
    "$ python call.py --endpoint emb-sls\n"
    "botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "
    '"https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/emb-sls/invocations"\n'
)


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_tritons_text_proto_failure_on_config_pbtxt_is_f19() -> None:
    log = (
        "E1103 09:14:22.511 1 model_repository_manager.cc:1301] Poll failed for model directory 'nli': "
        "failed to read text proto from /opt/ml/model/nli/config.pbtxt\n"
        "error: creating server: Internal - failed to load all models\n"
    )
    assert _diagnosed(log).id == "F19"


def test_memory_short_for_a_component_in_other_words_is_f10() -> None:
    record = (
        "InferenceComponentStatus: Failed\n"
        'FailureReason: "Insufficient memory on instances to satisfy MinMemoryRequiredInMb 20480 for inference '
        'component emb-ic."\n'
    )
    assert _diagnosed(record).id == "F10"


def test_vllms_older_default_model_served_is_f26() -> None:
    text = (
        "vLLM API server version 0.5.3 started\n"
        '$ curl -s localhost:8000/v1/models\n{"object":"list","data":[{"id":"facebook/opt-125m"}]}\n'
        "we passed BAAI/bge-m3 through the env only\n"
    )
    assert _diagnosed(text).id == "F26"


def test_direct_mode_refused_for_a_gpu_type_is_f04() -> None:
    error = (
        "An error occurred (ValidationException) when calling the CreateEndpointConfig operation: Inference "
        "Execution Mode 'Direct' is not supported for GPU instance type ml.g6.2xlarge.\n"
    )
    assert _diagnosed(error).id == "F04"


def test_a_call_answered_after_the_read_timeout_is_the_cold_start() -> None:
    assert _diagnosed(TIMEOUT + "$ python call.py --endpoint emb-sls\nok 200 latency=97ms\n").id == "F15"
    assert _diagnosed(TIMEOUT + "두 번째 호출부터는 정상. 서버리스.\n").id == "F15"
    # Without it, a worker that dies loading is as likely from the client's side.
    assert _diagnosed(TIMEOUT + "서버리스 엔드포인트.\n").id == "unknown"


def test_onnxruntimes_optimizer_run_for_hours_is_f34() -> None:
    command = "$ python -m onnxruntime.transformers.optimizer --input nli.onnx --output nli.opt.onnx --model_type bert\n"
    assert _diagnosed(command + "still running after 4h, one core at 100%, no output\n").id == "F34"
    assert _diagnosed("$ time " + command[2:] + "^C\nreal    96m12.004s\n").id == "F34"
    # A run that ended in seconds says nothing of a bound.
    assert _diagnosed("$ time " + command[2:] + "real    0m41.310s\n").id != "F34"


def test_label_counts_one_to_a_line_after_quantizing_are_f29() -> None:
    text = (
        "quantize_dynamic(model_input='nli.onnx', model_output='nli.int8.onnx', weight_type=QuantType.QInt8)\n"
        "dev set 300 pairs:\n"
        "  entailment      0\n"
        "  neutral       300\n"
        "  contradiction   0\n"
    )
    assert _diagnosed(text).id == "F29"
    # A load test's counters are not a classifier's labels.
    counters = "int8 model, 5 minute load test:\n  requests 3000\n  errors 0\n  timeouts 0\n"
    assert _diagnosed(counters).id != "F29"


def test_a_server_log_loading_model_onnx_beside_a_quantized_graph_is_f30() -> None:
    text = (
        "model dir: model.onnx (436 MB), model_int8.onnx (110 MB), tokenizer.json\n"
        "[INFO ] W-9000-model-stdout MODEL_LOG - loading /opt/ml/model/model.onnx\n"
        "latency is the same as fp32; we meant to serve the int8 graph\n"
    )
    assert _diagnosed(text).id == "F30"


def test_logs_not_reachable_or_empty_leave_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "I don't have access to the log group in their account yet.\n").id == "unknown"
    assert _diagnosed(PING + "The log group exists but the log streams are empty.\n").id == "unknown"


def test_instances_that_stay_up_in_korean_with_min_zero_are_f11() -> None:
    text = (
        "ManagedInstanceScaling MinInstanceCount 0, MaxInstanceCount 2 로 설정.\n"
        "밤새 요청 0 인데 ml.g5.xlarge 1대 계속 떠 있음. scale-in 정책은 안 붙였음.\n"
    )
    assert _diagnosed(text).id == "F11"


def test_a_bench_of_short_queries_only_said_by_its_reader_is_f32() -> None:
    text = (
        "벤치 p99 20 ms 인데 운영 p99 350 ms.\n"
        "운영 요청은 평균 300 토큰. 벤치 데이터가 짧은 쿼리만이라 긴 입력 비용을 못 봄.\n"
    )
    assert _diagnosed(text).id == "F32"


def test_a_plans_things_to_watch_name_nothing() -> None:
    plan = (
        "OPS-77 [Plan] scale-to-zero trial for the embedding endpoint\n"
        "Things to watch:\n"
        "  - scale-in to 0 takes ~30 min after idle\n"
        "  - requests at 0 copies fail at once\n"
    )
    assert _diagnosed(plan).id == "unknown"


def test_closing_our_tracking_issue_dismisses_what_it_quotes() -> None:
    text = (
        "For context: \"Model architectures ['DebertaV2ForSequenceClassification'] are not supported for now\".\n"
        "We serve the NLI model on the HF DLC instead and it is InService. Closing our tracking issue.\n"
    )
    assert _diagnosed(text).id == "unknown"
