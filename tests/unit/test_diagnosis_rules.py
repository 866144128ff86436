"""Rule tests: each catalogue entry on its field text, on variants, and healthy logs on none."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import field_texts as ft
from workflows.diagnosis import diagnose, evidence_from_text
from workflows.diagnosis.matcher import Matcher
from workflows.diagnosis.rules import default_rules

# (expected id, expected action, text, hosting mode the evidence states or None)
FIELD_CASES = [
    ("F01", "add_requirement", ft.F01_FIELD, None),
    ("F02", "single_worker", ft.F02_FIELD, "realtime"),
    ("F03", "fail", ft.F03_FIELD, None),
    ("F04", "fail", ft.F04_FIELD, None),
    ("F05", "fail", ft.F05_FIELD, None),
    ("F07", "larger_instance", ft.F07_FIELD, None),
    ("F08", "fail", ft.F08_FIELD, None),
    ("F09", "fail", ft.F09_FIELD, None),
    ("F10", "lower_ic_memory", ft.F10_FIELD, None),
    ("F12", "retry_with_backoff", ft.F12_FIELD, None),
    ("F14", "next_memory_size", ft.F14_FIELD_LOG, "serverless"),
    ("F17", "add_requirement", ft.F17_FIELD, "lmi"),
    ("F17", "add_requirement", ft.F17_FIELD_PEFT, "lmi"),
    ("F19", "fail", ft.F19_FIELD, None),
    ("F20", "newer_ami", ft.F20_FIELD, None),
    ("F23", "fail", ft.F23_FIELD, None),
    ("F25", "fail", ft.F25_FIELD, None),
    ("F28", "fail", ft.F28_FIELD, None),
    ("F30", "fail", ft.F30_FIELD, None),
]

VARIANT_CASES = [
    *[("F01", text, None) for text in ft.F01_VARIANTS],
    *[("F02", text, "realtime") for text in ft.F02_VARIANTS],
    *[("F03", text, None) for text in ft.F03_VARIANTS],
    *[("F04", text, None) for text in ft.F04_VARIANTS],
    *[("F05", text, None) for text in ft.F05_VARIANTS],
    *[("F07", text, None) for text in ft.F07_VARIANTS],
    *[("F08", text, None) for text in ft.F08_VARIANTS],
    *[("F09", text, None) for text in ft.F09_VARIANTS],
    *[("F10", text, None) for text in ft.F10_VARIANTS],
    *[("F12", text, None) for text in ft.F12_VARIANTS],
    *[("F14", text, "serverless") for text in ft.F14_VARIANTS],
    *[("F19", text, None) for text in ft.F19_VARIANTS],
    *[("F20", text, None) for text in ft.F20_VARIANTS],
    *[("F22", text, None) for text in ft.F22_VARIANTS],
    *[("F23", text, None) for text in ft.F23_VARIANTS],
    *[("F25", text, None) for text in ft.F25_VARIANTS],
    *[("F28", text, None) for text in ft.F28_VARIANTS],
    *[("F30", text, None) for text in ft.F30_VARIANTS],
]


def text_diagnosis(text: str, mode: str | None = None):  # type: ignore[no-untyped-def]
    return diagnose(evidence_from_text(text, origin="field", hosting_mode=mode))


@pytest.mark.parametrize(("expected", "action", "text", "mode"), FIELD_CASES, ids=lambda v: str(v)[:30])
def test_field_text_names_its_entry_and_action(
    expected: str, action: str, text: str, mode: str | None
) -> None:
    # Given the exact text the field saw
    # When it is diagnosed
    diagnosis = text_diagnosis(text, mode)
    # Then it names the entry, its remediation, and quotes the text it rests on
    assert (diagnosis.id, diagnosis.action) == (expected, action)
    assert diagnosis.confidence >= 0.5
    assert diagnosis.fix
    assert any(line.startswith("[text") for line in diagnosis.evidence)


@pytest.mark.parametrize(("expected", "text", "mode"), VARIANT_CASES, ids=lambda v: str(v)[:30])
def test_variants_with_other_names_numbers_whitespace_and_noise(
    expected: str, text: str, mode: str | None
) -> None:
    # Given the same failure with other names and numbers, re-wrapped, inside a healthy log
    # When it is diagnosed
    diagnosis = text_diagnosis(text, mode)
    # Then the stable fragment still names the entry
    assert diagnosis.id == expected, diagnosis.evidence


@pytest.mark.parametrize("log", ft.HEALTHY_LOGS, ids=lambda p: p.stem)
def test_healthy_logs_match_no_rule(log: Path) -> None:
    # Given a healthy start-up and request log of a serving stack
    evidence = evidence_from_text(log.read_text(encoding="utf-8"), origin=log.name)
    # When every rule is evaluated
    matches = Matcher(evidence, default_rules()).matches()
    diagnosis = diagnose(evidence)
    # Then none applies and nothing is named
    assert matches == []
    assert diagnosis.id == "unknown"
    assert diagnosis.alternatives == []


def test_healthy_vllm_log_with_the_requested_architecture_is_not_a_wrong_model() -> None:
    # Given vLLM resolved the architecture the run converted
    evidence = evidence_from_text(ft.healthy("vllm_pooling"), origin="vllm", hosting_mode="vllm")
    evidence.expected_architecture = "XLMRobertaForSequenceClassification"
    # When diagnosed
    # Then nothing matches (F26 needs a mismatch)
    assert diagnose(evidence).id == "unknown"


def test_captures_give_the_action_what_it_needs() -> None:
    # Given failures whose messages name a module, an input, an instance type, copy counts
    cases = {
        "No module named 'onnxruntime'": {"module": "onnxruntime"},
        "ModuleNotFoundError: No module named 'peft'": {"module": "peft"},
        ft.F03_VARIANTS[0]: {"input": "position_ids"},
        ft.F04_VARIANTS[0]: {"instance_type": "ml.g4dn.xlarge"},
        ft.F09_VARIANTS[0]: {"current": "1", "desired": "3"},
        ft.F19_FIELD: {"position": "11:3"},
        ft.F25_FIELD: {"architecture": "DebertaV2ForSequenceClassification"},
    }
    for text, expected in cases.items():
        # When diagnosed
        details = text_diagnosis(text).details
        # Then the details carry the captured values
        assert expected.items() <= details.items(), (text, details)


def test_a_missing_module_other_than_the_field_ones_is_f01_with_less_confidence() -> None:
    # Given a module the field never saw missing
    diagnosis = text_diagnosis("ModuleNotFoundError: No module named 'scipy'")
    # Then it is the same failure class (add the requirement), named with its module, less sure
    assert (diagnosis.id, diagnosis.action, diagnosis.details["module"]) == (
        "F01",
        "add_requirement",
        "scipy",
    )
    assert diagnosis.confidence < text_diagnosis(ft.F01_FIELD).confidence


def test_worker_died_is_f02_on_realtime_f14_on_serverless_and_ambiguous_without_mode() -> None:
    text = ft.F14_FIELD_LOG
    # When the mode is known, it decides
    assert text_diagnosis(text, "realtime").id == "F02"
    assert text_diagnosis(text, "serverless").id == "F14"
    # When it is not, neither is named: both are candidates, decided by the endpoint config
    unknown = text_diagnosis(text)
    assert unknown.id == "unknown"
    assert {a.id for a in unknown.alternatives} == {"F02", "F14"}
    assert any(line.startswith("[candidate] F14") for line in unknown.evidence)
    assert not text_diagnosis(text, "realtime").alternatives


def test_a_serverless_read_timeout_is_decided_by_the_endpoints_log_group() -> None:
    # Given only the client's read timeout
    text = 'ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-central-1.amazonaws.com/endpoints/emb/invocations"'
    # Then on a real-time endpoint it is no cold start, and the mode (the HF container, neither LMI nor TensorRT)
    # leaves no cause of its own open: unknown, serverless memory not among the candidates
    realtime = text_diagnosis(text, "realtime")
    assert realtime.id == "unknown"
    candidates = " ".join(line for line in realtime.evidence if line.startswith("[candidate]"))
    assert "F15" in candidates and "F14" not in candidates and "F18" not in candidates
    # And on serverless, pasted alone, it is unknown: a worker dying for memory leaves the client the same
    # timeout (F14), and the endpoint's log group decides
    pasted = text_diagnosis(text, "serverless")
    assert pasted.id == "unknown"
    assert {a.id for a in pasted.alternatives} >= {"F14", "F15"}
    # And where the run read that log group itself and no worker died there, it is the cold start (the
    # pipeline's retry with backoff)
    evidence = evidence_from_text(text, origin="field", hosting_mode="serverless")
    evidence.logs_read.append("/aws/sagemaker/Endpoints/emb")
    assert (diagnose(evidence).id, diagnose(evidence).action) == ("F15", "retry_with_backoff")
    # And with the model server's worker dying, serverless memory is the answer
    dying = text_diagnosis(text + "\nLoad model failed: model, error: Worker died.", "serverless")
    assert dying.id == "F14"


def test_a_missing_lmi_package_without_lmi_evidence_is_the_generic_missing_module() -> None:
    # Given a missing transformers with nothing saying the image is LMI
    text = "ModuleNotFoundError: No module named 'transformers'"
    # Then the generic entry names it, and F17 stays an alternative below the reporting threshold
    diagnosis = text_diagnosis(text)
    assert (diagnosis.id, diagnosis.details.get("module")) == ("F01", "transformers")
    assert [a.confidence for a in diagnosis.alternatives if a.id == "F17"] == [0.25]


def test_a_missing_module_outranks_the_worker_death_it_causes() -> None:
    # Given a worker that died because model_fn could not import onnxruntime
    text = in_noise_lines(
        "ModuleNotFoundError: No module named 'onnxruntime'",
        "[WARN ] W-9000-model com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died.",
    )
    # When diagnosed on a real-time endpoint
    diagnosis = text_diagnosis(text, "realtime")
    # Then the cause is named, the symptom kept as an alternative
    assert diagnosis.id == "F01"
    assert "F02" in [a.id for a in diagnosis.alternatives]


def in_noise_lines(*lines: str) -> str:
    return ft.in_noise("\n".join(lines))


def test_pbtxt_error_is_f19_not_a_truncated_artifact() -> None:
    # Given Triton's parse error followed by its generic 'failed to load all models'
    diagnosis = text_diagnosis(ft.F19_FIELD)
    # Then the config is named; F22 (valid config, missing file) is excluded by its own rule
    assert diagnosis.id == "F19"
    assert "F22" not in [a.id for a in diagnosis.alternatives]
    assert text_diagnosis(ft.F23_VARIANTS[0]).id == "F23"


def test_tritons_catch_all_alone_names_no_entry_and_keeps_f22_a_candidate() -> None:
    # Given only Triton's last line, which it prints whatever model failed to load, and why
    diagnosis = text_diagnosis(ft.F22_FIELD)
    # Then no entry is named (F22 is that line "with a valid config", which the line cannot show)
    assert diagnosis.id == "unknown"
    assert "F22" in [a.id for a in diagnosis.alternatives]


def test_a_failed_ping_under_tritons_catch_all_is_unknown_between_it_and_the_model_that_did_not_load() -> (
    None
):
    # Given the failed ping health check, with Triton's catch-all in the container's log
    diagnosis = text_diagnosis(f"{ft.F22_FIELD}\n{ft.F07_FIELD}")
    # Then the ping (F07) is not named over the load failure that may have caused it
    assert diagnosis.id == "unknown"
    assert "F07 or its cause F22" in diagnosis.title


@pytest.mark.parametrize(
    "text",
    [
        # onnxruntime's own words for a model.onnx cut short
        "onnxruntime.capi.onnxruntime_pybind11_state.InvalidProtobuf: [ONNXRuntimeError] : 7 : INVALID_PROTOBUF : "
        "Load model from /opt/ml/model/model.onnx failed:Protobuf parsing failed.",
        # what an engineer finds in the repository
        "Triton starts, then exits; ls -l shows /models/nli/1/model.onnx at 0 bytes.",
    ],
)
def test_a_weight_file_cut_short_names_f22(text: str) -> None:
    assert text_diagnosis(text).id == "F22"


def test_a_failed_ping_with_the_model_that_did_not_load_names_the_cause() -> None:
    # Given Triton's own line for the missing file, its catch-all and the failed ping
    diagnosis = text_diagnosis(f"{ft.F22_VARIANTS[0]}\n{ft.F07_FIELD}")
    # Then the cause is named, and the ping listed as its consequence
    assert diagnosis.id == "F22"
    assert any(line.startswith("[consequence] F07") for line in diagnosis.evidence)


def test_cuda_forward_compatibility_notice_is_not_error_803() -> None:
    # Given the success line of the F20 fix
    text = "NOTE: CUDA Forward Compatibility mode ENABLED.\n  Using CUDA 13.2 driver version 595.58.03"
    # Then it is no failure
    assert text_diagnosis(text).id == "unknown"


def test_first_call_timeout_depends_on_the_engine() -> None:
    timeout = (
        'Received server error (0) from primary with message "Your invocation timed out while waiting for a '
        'response from container primary. Review the latency metrics for each container in Amazon CloudWatch"'
    )
    # Given TensorRT building an engine in the logs (F21) or an LMI container (F18)
    trt = text_diagnosis(
        timeout + "\n[TensorRT EP] Building TensorRT engine for input shape batch=8, seq=128"
    )
    lmi = text_diagnosis(timeout + "\nINFO  PyProcess W-102-model-stdout: djl_python loading model")
    # Then both warm every shape; the engine names the entry
    assert (trt.id, trt.action) == ("F21", "warm_shapes")
    assert (lmi.id, lmi.action) == ("F18", "warm_shapes")
    # And on a plain real-time HF endpoint neither is claimed
    assert text_diagnosis(timeout, "realtime").id == "unknown"


def test_vllm_serving_a_default_model_is_f26() -> None:
    # Given vLLM resolved another architecture than the one converted
    log = ft.healthy("vllm_pooling").replace("XLMRobertaForSequenceClassification", "Qwen3ForCausalLM")
    evidence = evidence_from_text(log, origin="vllm", hosting_mode="vllm")
    evidence.expected_architecture = "XLMRobertaForSequenceClassification"
    # When diagnosed
    diagnosis = diagnose(evidence)
    # Then the wrong model is named with both architectures
    assert diagnosis.id == "F26"
    assert diagnosis.details == {
        "resolved": "Qwen3ForCausalLM",
        "expected": "XLMRobertaForSequenceClassification",
    }


def test_vllm_has_no_score_route() -> None:
    # Given a client hitting /score
    text = 'INFO:     10.0.11.7:51202 - "POST /score HTTP/1.1" 404 Not Found'
    # Then F27
    assert text_diagnosis(text).id == "F27"
