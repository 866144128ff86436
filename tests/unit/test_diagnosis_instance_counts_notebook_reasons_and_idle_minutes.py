"""More copies placed than the instances' GPUs hold leaves the GPU cap in doubt, counting the instances as the paste
writes them; a notebook's empty "Reason: ." is the capacity stall; TorchServe's "Backend worker process died" on
serverless is F14; a fast `real` after a read timeout is an answer; "CurrentInstanceCount 계속 1" is F11 unless the
idle time shown is under the half hour a working scale-in takes; Triton's "Could not find model file" beside
another file is F23; a scale-in's last zero in one sentence counts; label counts on one line under the quantizing
call are F29."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _component(desired: int, current: int) -> str:
    return (
        "InferenceComponentName: emb-ic\nInferenceComponentStatus: InService\n"
        "Specification:\n  ComputeResourceRequirements:\n    NumberOfAcceleratorDevicesRequired: 1\n"
        f"    MinMemoryRequiredInMb: 2048\nRuntimeConfig:\n  DesiredCopyCount: {desired}\n"
        f"  CurrentCopyCount: {current}\n"
    )


def test_more_copies_placed_than_gpus_leave_the_cap_in_doubt() -> None:
    assert _diagnosed(_component(3, 2) + "(instance: ml.g5.2xlarge x1)\n").id == "unknown"
    # Two one-GPU instances hold two copies: the cap is the GPUs, however the count is written.
    for written in (
        "2 x ml.g5.xlarge",
        "ml.g5.xlarge (GPU 1개) x 2대",
        "ml.g5.xlarge, InitialInstanceCount 2",
    ):
        assert _diagnosed(_component(4, 2) + f"endpoint: {written}\n").id == "F09", written


def test_a_notebooks_empty_reason_is_the_capacity_stall() -> None:
    text = (
        'In [3]: predictor = model.deploy(initial_instance_count=1, instance_type="ml.g6.2xlarge")\n'
        "--------------------------------------------------*\n"
        "UnexpectedStatusException: Error hosting endpoint hf-emb-2025-03-01-10-00-00-000: Failed. Reason: .\n"
    )
    assert _diagnosed(text).id == "F06"


def test_backend_worker_process_died_on_serverless_is_f14() -> None:
    text = (
        "serverless endpoint emb-sls (MemorySizeInMB=1024)\n"
        "2025-01-01T00:00:09 [INFO ] W-9000-model_1.0 - Backend worker process died.\n"
    )
    assert _diagnosed(text).id == "F14"


def test_a_fast_real_after_a_read_timeout_is_an_answer() -> None:
    text = (
        'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.'
        'us-east-1.amazonaws.com/endpoints/emb-sls/invocations"\nreal    1m0.80s\n'
        "$ python call.py --endpoint emb-sls\n[[0.02, -0.04]]\nreal    0m0.52s\n"
    )
    assert _diagnosed(text).id == "F15"


def test_an_instance_count_that_stays_is_f11_unless_idle_under_half_an_hour() -> None:
    base = "ManagedInstanceScaling: {MinInstanceCount: 0, MaxInstanceCount: 2}\n"
    assert _diagnosed(base + "- 트래픽 0 으로 이틀 지남\n- CurrentInstanceCount 계속 1\n").id == "F11"
    assert _diagnosed(base + "- 트래픽 0 된 지 20분\n- CurrentInstanceCount 계속 1\n").id == "unknown"


def test_tritons_could_not_find_model_file_beside_another_name_is_f23() -> None:
    text = (
        "$ tar tzf model.tar.gz\nrepo/bge/config.pbtxt\nrepo/bge/1/bge-base.onnx\n"
        "E0101 00:00:01.000 1 model_lifecycle.cc:638] failed to load 'bge' version 1: Internal: Could not find "
        "model file /models/bge/1/model.onnx\n"
    )
    assert _diagnosed(text).id == "F23"


def test_the_last_zero_of_a_sentence_times_the_scale_in() -> None:
    text = "load test ended 09:00. CurrentCopyCount went 1 -> 0 at 09:12, instance count 1 -> 0 at 09:31\n"
    assert _diagnosed(text).id == "F13"


def test_label_counts_on_one_line_under_the_quantizing_call_are_f29() -> None:
    text = (
        "quantize_dynamic(model_input='m.onnx', model_output='m_int8.onnx', weight_type=QuantType.QInt8)\n"
        "크기 1.1GB → 300MB\n"
        "검증 200건: contradiction 200 / entailment 0 / neutral 0\n"
    )
    assert _diagnosed(text).id == "F29"
