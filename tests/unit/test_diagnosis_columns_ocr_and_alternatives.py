"""A spaced header's "p99_ms" (F16); a field's name with Korean after it; OCR's split words and lettered digits; "별개
문제"; a dict of the quantized model's label counts (F29); a header's "latency_ms (p50)" and "n" (F31); a quoted module
name cut off; a bullet after log lines; a reply that offers another cause; requirements that list an LMI package;
a table's first-call column (F21)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.latency import first_call_column_cold
from workflows.diagnosis.machine_lines import is_machine_line
from workflows.diagnosis.ocr import corrected
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_spaced_headers_percentile_columns_with_their_unit() -> None:
    text = "\n".join(
        [
            "serverless endpoint emb-sls (MemorySizeInMB 3072)",
            "run  warmup  p50_ms  p90_ms  p99_ms",
            "1    3       17      22      28,904",
            "2    20      17      21      240",
        ]
    )
    assert _diagnosed(text).id == "F16"


def test_a_fields_name_with_korean_after_it_is_a_persons_line() -> None:
    assert not is_machine_line("CloudWatch: Model loaded 시각 확인함. Worker died 없음")
    assert is_machine_line("FailureReason: The primary container did not pass the ping health check.")


def test_ocr_split_words_and_lettered_digits_are_put_back() -> None:
    fixed, changes = corrected("System has unsupported disp lay driver / cuda driver combination (error 8O3)")
    assert "display driver" in fixed and "error 803" in fixed and "disp lay→display" in changes
    assert corrected("the word stays as it is")[0] == "the word stays as it is"


def test_a_separate_matter_is_denied() -> None:
    line = "/score 404 는 별개 문제에요"
    assert polarity(line, 0, 10).polarity == "negated"


def test_a_dict_of_the_quantized_models_label_counts() -> None:
    one = "int8  acc=0.33  label dist: {'contradiction': 400}"
    assert _diagnosed(one).id == "F29"
    spread = "int8  acc=0.80  label dist: {'entailment': 130, 'neutral': 140, 'contradiction': 130}"
    assert _diagnosed(spread).id != "F29"
    record = '{"artifact": "s3://b/int8/model_quantized.onnx", "size_mb": 33}'
    assert _diagnosed(record).id != "F29"
    assert _diagnosed('int8 (quantize_dynamic): every single prediction is "neutral".').id == "F29"


def test_a_headers_latency_ms_p50_and_its_n_column() -> None:
    text = "\n".join(
        [
            "HF DLC pipeline on ml.g5.xlarge (A10G)",
            "payload                                   n   latency_ms (p50)",
            '{"inputs": "one text"}                    1   14',
            '{"inputs": [16 texts]}                   16   230',
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_a_quoted_module_name_cut_off_names_no_module() -> None:
    assert _diagnosed("ModuleNotFoundError: No module named 'onnx").id == "unknown"
    assert _diagnosed("ModuleNotFoundError: No module named 'sentence_transformers'").id == "F01"


def test_a_bullet_after_log_lines_is_a_persons_note() -> None:
    text = "\n".join(
        [
            "on-call notes:",
            "- startup log:",
            "  2026-01-02 02:14:09.552 [W:onnxruntime:Default, onnxruntime_pybind_state.cc:965 "
            "CreateExecutionProvider] Failed to create CUDAExecutionProvider. Require cuDNN 9.* and CUDA 12.*.",
            "- no error 803 in the log, nvidia-smi sees the A10G on ml.g5.xlarge",
        ]
    )
    assert _diagnosed(text).id == "F36"


def test_a_reply_that_offers_another_cause_supposes_it() -> None:
    assert polarity("priya 11:06  or TRT building an engine for it", 17, 20).polarity == "hypothetical"
    assert polarity("아니면 803 인가", 4, 7).polarity == "hypothetical"


def test_requirements_that_list_an_lmi_package_leave_the_install_open() -> None:
    text = "\n".join(
        [
            "djl-inference cpu-full, EnableNetworkIsolation=true",
            "requirements.txt: transformers, torch",
            "INFO PyProcess W-7-model-stdout: ModuleNotFoundError: No module named 'transformers'",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_tables_first_call_column() -> None:
    lines = ["| batch | first call | after p50 |", "|---|---|---|", "| 1 | 44.0 s | 15 ms |"]
    assert first_call_column_cold(lines) == lines[2]
    assert first_call_column_cold(["| batch | first call | after p50 |", "| 1 | 90 ms | 15 ms |"]) == ""
    text = "\n".join(["TensorRT EP on ml.g5.xlarge", *lines])
    assert _diagnosed(text).id == "F21"
