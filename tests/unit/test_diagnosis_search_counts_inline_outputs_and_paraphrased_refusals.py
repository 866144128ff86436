"""A search's count of none denies what it searched for; a reply in another repository's thread is someone else's;
a log said to be cut off leaves a failed ping open; onnxruntime missing on an LMI image is F01's and F17's alike; a
command's output written after an arrow is read; and refusals told in their reader's words (a GPU type "not
allowed" in Direct mode, no accelerator count, a component's memory in Korean, nothing that removes the instance,
copies at zero half an hour after the traffic, a call run again that answers, every row predicted one label, long
inputs the benchmark never measured) are named."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_search_with_no_lines_matching_denies_what_it_searched_for() -> None:
    text = (
        '{"EndpointName": "bge-rt", "EndpointStatus": "InService",\n'
        ' "ProductionVariants": [{"VariantName": "AllTraffic", "CurrentInstanceCount": 1}]}\n'
        "Logs Insights, last 12h: 0 lines matching /Error|Worker died|Traceback/. p99 9 ms.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_reply_in_another_repositorys_thread_is_someone_elses() -> None:
    text = (
        "Re: vllm-project/vllm \"Model architectures ['DebertaV2ForSequenceClassification'] are not supported\"\n"
        "Linking this so nobody retries it; our NLI endpoint runs on the HF DLC and has served fine for a month.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_log_said_to_be_cut_off_leaves_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "The log is truncated after model loading starts.\n").id == "unknown"
    assert _diagnosed(PING + "OOM 이 났는지 로그가 잘려서 모르겠음.\n").id == "unknown"
    # Read whole, the log decides nothing against the ping.
    assert _diagnosed(PING + "Logs show the model loading for 4 minutes, then nothing.\n").id == "F07"


def test_onnxruntime_missing_on_an_lmi_image_is_either_entry() -> None:
    log = "[INFO ] PyProcess - W-7-model-stdout: ModuleNotFoundError: No module named 'onnxruntime'\n"
    on_lmi = _diagnosed(
        "image: 763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.29.0-cpu-full\n" + log
    )
    assert on_lmi.id == "unknown"
    assert {a.id for a in on_lmi.alternatives} >= {"F01", "F17"}
    dlc_log = "W-9000-model_1.0-stdout MODEL_LOG - ModuleNotFoundError: No module named 'onnxruntime'\n"
    assert _diagnosed("image: huggingface-pytorch-inference:2.1-cpu\n" + dlc_log).id == "F01"


def test_a_commands_output_after_an_arrow_shows_the_file_under_another_name() -> None:
    text = (
        "E0704 09:21:13.004 1 model_lifecycle.cc:638] failed to load 'bge' version 1: Internal: unable to find "
        "'/opt/ml/model/bge/1/model.onnx' for model 'bge'\n"
        "$ ls /opt/ml/model/bge/1/  ->  bge-small-en.onnx\n"
    )
    assert _diagnosed(text).id == "F23"


def test_a_gpu_type_not_allowed_in_direct_mode_is_refused() -> None:
    text = (
        "CREATE_FAILED AWS::SageMaker::EndpointConfig: the GPU instance type ml.g5.xlarge is not allowed for "
        "this multi-container Direct model\n"
    )
    assert _diagnosed(text).id == "F04"


def test_a_component_refused_for_no_accelerator_count() -> None:
    text = (
        "An error occurred (ValidationException) when calling the CreateInferenceComponent operation: ...\n"
        "# the rest scrolled away; it said the request has no accelerator count for the ml.g5.2xlarge endpoint\n"
    )
    assert _diagnosed(text).id == "F08"


def test_a_components_memory_refusal_in_korean() -> None:
    text = "InferenceComponentStatus Failed: 요청한 메모리를 인스턴스에 올릴 여유가 부족하다고 나옴. 쿼터 아님.\n"
    assert _diagnosed(text).id == "F10"
    # A component that does not come up, then memory guessed in the next sentence, is no refusal for memory.
    guessed = (
        "ml.g5.xlarge, GPU 1장. 새 컴포넌트가 안 올라옴. 메모리 부족인가 해서 MinMemoryRequiredInMb 를 내렸는데 같음.\n"
        "FailureReason: SageMaker was able to deploy 0 out of 1 requested copies.\n"
    )
    assert _diagnosed(guessed).id != "F10"


def test_nothing_that_removes_the_instance_is_no_scale_in() -> None:
    text = (
        "ManagedInstanceScaling: {Status: ENABLED, MinInstanceCount: 0, MaxInstanceCount: 1}\n"
        "No traffic since yesterday evening. Only the component has target tracking; nothing removes the instance.\n"
    )
    assert _diagnosed(text).id == "F11"


def test_copies_at_zero_half_an_hour_after_the_traffic_is_slow_scale_in() -> None:
    text = "Scale-in policy is there (target tracking, min 0). CopyCount went to 0, about 31 min after the traffic stopped.\n"
    assert _diagnosed(text).id == "F13"


def test_a_call_run_again_that_answers_is_a_cold_start() -> None:
    text = (
        'ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-west-1.amazonaws.com/'
        'endpoints/bge-sls/invocations"\n'
        "# serverless, 3072 MB. Re-running the cell a minute later returns in 95 ms.\n"
    )
    assert _diagnosed(text).id == "F15"


def test_every_row_predicted_one_label_after_int8() -> None:
    text = "int8 model (quantize_dynamic QInt8): accuracy 0.34, every row predicted 'neutral'.\n"
    assert _diagnosed(text).id == "F29"


def test_long_inputs_the_benchmark_never_measured_in_korean() -> None:
    text = "벤치 p99 12ms, 운영 p99 110ms. 운영 입력은 평균 400토큰인데 긴 입력은 벤치에서 한 번도 측정되지 않았음.\n"
    assert _diagnosed(text).id == "F32"
