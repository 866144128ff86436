"""Preflight checks as functions of plain inputs, on the field's numbers: instances, memory,
accelerators, the artifact."""

from __future__ import annotations

import pytest

from tests.support.preflight import ids
from workflows.preflight import accelerators, artifact, memory
from workflows.preflight.instances import check_instance_types, instance

FIELD_MODEL_MB = 1137


# --- instance table ------------------------------------------------------------------------------


def test_instance_table_rows_used_by_the_field() -> None:
    # Then the rows the field relied on have the published figures
    c6i = instance("ml.c6i.2xlarge")
    assert c6i is not None and (c6i.vcpus, c6i.memory_gib, c6i.gpus) == (8, 16, 0)
    g5 = instance("ml.g5.12xlarge")
    assert g5 is not None and (g5.gpus, g5.accelerator_memory_gib, g5.default_driver) == (4, 24, 470)
    g6 = instance("ml.g6.12xlarge")
    assert g6 is not None and (g6.gpus, g6.default_driver) == (4, 535)
    g5x = instance("ml.g5.xlarge")
    assert g5x is not None and (g5x.memory_gib, g5x.gpus) == (16, 1)
    p4d = instance("ml.p4d.24xlarge")
    assert p4d is not None and (p4d.gpus, p4d.accelerator_memory_gib) == (8, 40)
    inf2 = instance("ml.inf2.xlarge")
    assert inf2 is not None and (inf2.accelerators, inf2.gpus) == (1, 0)
    assert instance("ml.c6i.3xlarge") is None


def test_unknown_instance_types_warn() -> None:
    # Given a misspelt size next to a real type
    findings = check_instance_types(["ml.c6i.xlarge", "ml.c6i.3xlarge"])
    # Then only the unknown one is reported, as a warning naming it
    assert ids(findings) == [("instance-type", "warning")]
    assert "ml.c6i.3xlarge" in findings[0].message


# --- memory: F02, F07, F14 -----------------------------------------------------------------------


def test_f02_field_numbers_block_and_one_worker_fits() -> None:
    c6i = instance("ml.c6i.2xlarge")
    assert c6i is not None
    # Given the field's mDeBERTa: 1137 MB x 8 workers x 2 containers on ml.c6i.2xlarge (16 GiB)
    field = memory.check_instance_memory(instance=c6i, model_mb=FIELD_MODEL_MB, workers=8, containers=2)
    # Then it is blocked as F02, with the figures and the fix
    assert ids(field) == [("F02", "blocking")]
    assert "1137 MB model x 8 worker(s) x 2 container(s)" in field[0].evidence
    assert "SAGEMAKER_MODEL_SERVER_WORKERS=1" in field[0].fix
    # And unset workers (one per vCPU, 8 here) is the same failure
    unset = memory.check_instance_memory(instance=c6i, model_mb=FIELD_MODEL_MB, workers=None, containers=2)
    assert ids(unset) == [("F02", "blocking")]
    assert "one per vCPU" in unset[0].evidence
    # And the field's fix, one worker per container, fits
    assert memory.check_instance_memory(instance=c6i, model_mb=FIELD_MODEL_MB, workers=1, containers=2) == []


def test_f07_when_even_one_worker_per_container_does_not_fit() -> None:
    c6i = instance("ml.c6i.2xlarge")
    assert c6i is not None
    # Given three containers of a 4 GB model on 16 GiB
    findings = memory.check_instance_memory(instance=c6i, model_mb=4000, workers=1, containers=3)
    # Then it is F07: a larger instance or fewer containers
    assert ids(findings) == [("F07", "blocking")]
    assert "fewer containers" in findings[0].fix


def test_f07_startup_health_check_must_cover_the_download() -> None:
    # Given the field's model and a 60 s startup health check
    short = memory.check_startup_timeout(model_mb=FIELD_MODEL_MB, startup_timeout_s=60, server_timeout_s=120)
    # Then it warns with the time needed; the default 600 s is enough
    assert ids(short) == [("F07", "warning")]
    assert (
        memory.check_startup_timeout(model_mb=FIELD_MODEL_MB, startup_timeout_s=600, server_timeout_s=120)
        == []
    )


def test_f14_field_numbers_2048_fails_6144_works() -> None:
    # Given the field's 1137 MB ONNX model on serverless
    at_2048 = memory.check_serverless_memory(memory_mb=2048, model_mb=FIELD_MODEL_MB)
    at_6144 = memory.check_serverless_memory(memory_mb=6144, model_mb=FIELD_MODEL_MB)
    # Then 2048 is blocked (several times the model size is needed), 6144 passes
    assert ids(at_2048) == [("F14", "blocking")]
    assert at_6144 == []
    assert 2048 < memory.serverless_memory_needed(FIELD_MODEL_MB) <= 6144
    assert f"{memory.serverless_memory_needed(FIELD_MODEL_MB)} MB" in at_2048[0].fix


def test_f14_rejects_sizes_serverless_does_not_accept_and_models_too_big() -> None:
    # Then 1500 MB is not an accepted size, and a 5 GB model fits no size
    assert (
        "1024, 2048, 3072, 4096, 5120, 6144"
        in memory.check_serverless_memory(memory_mb=1500, model_mb=90)[0].fix
    )
    too_big = memory.check_serverless_memory(memory_mb=6144, model_mb=5000)
    assert ids(too_big) == [("F14", "blocking")]
    assert "real-time" in too_big[0].fix


# --- accelerators: F04, F08, F09 ------------------------------------------------------------------


@pytest.mark.parametrize("instance_type", ["ml.g5.xlarge", "ml.g5.2xlarge", "ml.g4dn.xlarge"])
def test_f04_gpu_direct_is_rejected_as_in_the_field(instance_type: str) -> None:
    # Given two containers in Direct mode on a GPU type the field saw rejected
    findings = accelerators.check_direct_mode(
        instance_type=instance_type, execution_mode="Direct", containers=2
    )
    # Then it is blocked
    assert ids(findings) == [("F04", "blocking")]


def test_f04_cpu_direct_serial_gpu_and_single_container_pass() -> None:
    assert (
        accelerators.check_direct_mode(instance_type="ml.c6i.2xlarge", execution_mode="Direct", containers=2)
        == []
    )
    assert (
        accelerators.check_direct_mode(instance_type="ml.g5.xlarge", execution_mode="Serial", containers=2)
        == []
    )
    assert (
        accelerators.check_direct_mode(instance_type="ml.g5.xlarge", execution_mode="Direct", containers=1)
        == []
    )


def test_f08_accelerator_devices() -> None:
    # Then a GPU component needs a whole number of devices >= 1; a CPU one does not
    assert ids(accelerators.check_accelerator_devices(instance_type="ml.g5.xlarge", devices=None)) == [
        ("F08", "blocking")
    ]
    assert ids(accelerators.check_accelerator_devices(instance_type="ml.g5.xlarge", devices=0.5)) == [
        ("F08", "blocking")
    ]
    assert accelerators.check_accelerator_devices(instance_type="ml.g5.xlarge", devices=1) == []
    assert accelerators.check_accelerator_devices(instance_type="ml.c6i.xlarge", devices=None) == []


def test_f09_copies_times_devices_against_gpus() -> None:
    three = [accelerators.ComponentPlacement(name, 1, 1) for name in ("minilm", "mdeberta", "xlmr")]
    # Given the field's three models on one GPU
    one_gpu = accelerators.check_copies(instance_type="ml.g5.xlarge", instance_count=1, components=three)
    # Then blocked; on ml.g6.12xlarge (4 GPUs) they fit; two instances double the GPUs
    assert ids(one_gpu) == [("F09", "blocking")]
    assert accelerators.check_copies(instance_type="ml.g6.12xlarge", instance_count=1, components=three) == []
    two = [accelerators.ComponentPlacement("nli", 2, 1)]
    assert accelerators.check_copies(instance_type="ml.g5.xlarge", instance_count=2, components=two) == []


# --- artifact: F01, F03, F17, F28 ----------------------------------------------------------------

SERVING = "import json\nimport numpy as np\nimport onnxruntime as ort\n\ndef model_fn(d):\n    from transformers import AutoTokenizer\n"


def test_f01_onnxruntime_must_be_in_requirements() -> None:
    # Then missing onnxruntime blocks; pinned (or the GPU build) passes
    assert ids(artifact.check_requirements(code=SERVING, requirements="")) == [("F01", "blocking")]
    assert ids(artifact.check_requirements(code=SERVING, requirements=None)) == [("F01", "blocking")]
    assert artifact.check_requirements(code=SERVING, requirements="onnxruntime==1.31.1\n") == []
    assert artifact.check_requirements(code=SERVING, requirements="onnxruntime-gpu>=1.28.0  # CUDA\n") == []


def test_f01_other_missing_modules_warn_and_local_modules_count() -> None:
    code = SERVING + "import scipy.special\nfrom helpers import pool\n"
    # Then scipy (neither shipped nor required) warns; helpers.py shipped in code/ is fine
    findings = artifact.check_requirements(
        code=code, requirements="onnxruntime==1.31.1", local_modules=frozenset({"helpers"})
    )
    assert ids(findings) == [("F01", "warning")]
    assert "scipy" in findings[0].message


def test_f28_optimum_is_never_a_serving_requirement() -> None:
    # Given requirements with optimum next to onnxruntime
    findings = artifact.check_requirements(
        code=SERVING, requirements="onnxruntime==1.31.1\noptimum[onnxruntime]>=1.20\n"
    )
    # Then it is blocked
    assert ids(findings) == [("F28", "blocking")]


def test_f17_lmi_cpu_needs_the_python_packages() -> None:
    cpu = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.35.0-cpu-full"
    gpu = "763104351884.dkr.ecr.us-east-1.amazonaws.com/djl-inference:0.35.0-lmi17.0.0-cu128"
    full = "transformers\ntorch\nsentencepiece\nprotobuf\npeft\naccelerate\n"
    # Then the CPU image without them is blocked, with them passes; GPU LMI images ship them
    assert ids(artifact.check_lmi_requirements(image=cpu, requirements=None)) == [("F17", "blocking")]
    assert artifact.check_lmi_requirements(image=cpu, requirements=full) == []
    assert artifact.check_lmi_requirements(image=gpu, requirements=None) == []


def test_f03_tokenizer_outputs_against_graph_inputs() -> None:
    bert = ["input_ids", "token_type_ids", "attention_mask"]
    graph = ["input_ids", "attention_mask"]
    # Then token_type_ids the graph lacks fails unless the serving code filters by session inputs
    unfiltered = artifact.check_input_names(tokenizer_outputs=bert, graph_inputs=graph, serving_filters=False)
    assert ids(unfiltered) == [("F03", "blocking")]
    assert "Invalid input name: token_type_ids" in unfiltered[0].message
    assert artifact.check_input_names(tokenizer_outputs=bert, graph_inputs=graph, serving_filters=True) == []
    # And a graph input the tokenizer never emits fails whatever the serving code does
    lacking = artifact.check_input_names(tokenizer_outputs=graph, graph_inputs=bert, serving_filters=True)
    assert ids(lacking) == [("F03", "blocking")]


def test_the_shipped_serving_code_filters_inputs() -> None:
    from workflows.conversion.build import SERVING_CODE

    # Then the artifact's inference.py is recognised as F03-safe and imports onnxruntime (F01 applies)
    code = (SERVING_CODE / "inference.py").read_text(encoding="utf-8")
    assert artifact.serving_code_filters_inputs(code)
    assert "onnxruntime" in artifact.imported_modules(code)


def test_an_openvino_serving_plan_needs_openvino_in_the_requirements() -> None:
    # Given an artifact whose serving plan names OpenVINO (the serving code imports it by name)
    lacking = artifact.check_runtime_requirement(runtime="openvino", requirements="onnxruntime==1.28.0\n")
    listed = artifact.check_runtime_requirement(
        runtime="openvino", requirements="onnxruntime==1.28.0\nopenvino==2026.4.1\n"
    )
    # Then it is F01 without the wheel, and nothing with it or on onnxruntime
    assert ids(lacking) == [("F01", "blocking")] and "openvino" in lacking[0].message
    assert listed == []
    assert artifact.check_runtime_requirement(runtime="onnxruntime", requirements=None) == []
