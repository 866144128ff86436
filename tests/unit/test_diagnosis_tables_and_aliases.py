"""Titles and closing words that settle; a run's first call by its table column; TensorRT's engine build logged; a
component put on another team's endpoint; "should" and another repository's issue; a metric table one percentile a
row; a collapse in one cell, in columns or in Korean; a shell comment after a command; the loaded model's path; a
--query's aliases; a space-aligned table with empty cells under a length column of averages."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(line: str, mention: str) -> str:
    start = line.index(mention)
    return polarity(line, start, start + len(mention)).polarity


def test_titles_and_closing_words_that_settle() -> None:
    korean = "[회고] co-host 500 에러 (해결됨)\n- 4/02: nli 컨테이너 Worker died 반복 → workers=1 로 재배포\n- 현재 InService, 정상"
    assert _diagnosed(korean).id == "unknown"
    english = (
        "Follow-up (#412, closed)\nin #400 the first b=8 call timed out while the TensorRT EP was building an engine.\n"
        "Prebuilt plans since; re-checked today. Closing; nothing left to do."
    )
    assert _diagnosed(english).id == "unknown"


def test_a_runs_first_call_by_its_table_column_is_no_batch_cost() -> None:
    text = "\n".join(
        [
            "ORT TensorRT EP on ml.g5.xlarge",
            "| step | batch | call# | latency |",
            "| 1 | 1 | 1 | 44.0 s |",
            "| 1 | 1 | 2..100 | 15 ms |",
            "| 2 | 16 | 1 | 57.2 s |",
        ]
    )
    assert _diagnosed(text).id != "F31"


def test_tensorrts_engine_build_logged_at_a_new_shape() -> None:
    text = "\n".join(
        [
            "TensorrtExecutionProvider on ml.g6.xlarge; first b=8 call came back as ModelError after 60 s",
            "container log: [TensorRT EP] TensorRT subgraph for the new shape; building engine",
        ]
    )
    assert _diagnosed(text).id == "F21"


def test_a_component_put_on_another_teams_endpoint_leaves_memory_open() -> None:
    record = (
        '{"InferenceComponentName": "nli-ic", "InferenceComponentStatus": "InService",'
        ' "RuntimeConfig": {"DesiredCopyCount": 3, "CurrentCopyCount": 1}}'
    )
    assert _diagnosed(f"{record}\nThe endpoint runs one ml.g5.xlarge.").id == "F09"
    assert _diagnosed(record).id == "unknown"
    assert (
        _diagnosed(f"{record}\nput on another team's endpoint; its instance type is unknown to us").id
        == "unknown"
    )


def test_what_should_happen_and_another_repositorys_issue() -> None:
    line = (
        'at 15:00 one request SHOULD fail with "Inference Component has no capacity to process this request"'
    )
    assert _reading(line, "Inference Component has no capacity to process this request") == "hypothetical"
    line = 'Re: vllm-project/vllm#1234 "404 on /score for cross-encoder"'
    assert _reading(line, "404 on /score") == "other"


def test_invocations_at_zero_start_the_scale_in() -> None:
    text = "\n".join(
        [
            "  17:00  Invocations 0",
            "  17:15  IC CurrentCopyCount 1 -> 0",
            "  17:29  CurrentInstanceCount 1 -> 0",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_metric_table_one_percentile_a_row_on_serverless() -> None:
    text = "\n".join(
        [
            "serverless endpoint minilm-sls (MemorySizeInMB=4096), warmup=3",
            "| metric | value |",
            "|---|---|",
            "| p50 | 37 ms |",
            "| p90 | 45 ms |",
            "| p99 | 28,870 ms |",
        ]
    )
    assert _diagnosed(text).id == "F16"


def test_a_collapse_in_one_cell_in_columns_or_in_korean() -> None:
    cell = "\n".join(
        [
            "quantize_dynamic QInt8",
            "| model | accuracy | predictions |",
            "| fp32 | 0.86 | ent 330 / neu 340 / con 330 |",
            "| int8 | 0.34 | ent 0 / neu 1000 / con 0 |",
        ]
    )
    assert _diagnosed(cell).id == "F29"
    columns = "\n".join(
        [
            "quantize_dynamic, QInt8, 500 samples",
            "                fp32      int8",
            "entailment       170         0",
            "neutral          160       500",
            "contradiction    170         0",
        ]
    )
    assert _diagnosed(columns).id == "F29"
    assert _diagnosed("QInt8 동적 양자화 후 검증: 전부 neutral 로만 나옴").id == "F29"


def test_a_shell_comment_after_a_command_is_a_persons_note() -> None:
    text = "\n".join(
        [
            "$ olive run --config olive_mdeberta.json",
            "[INFO] [engine.py:873:_run_pass] Running pass transformers_optimization:OrtTransformersOptimization",
            "... (이후 로그 없음)",
            "",
            "$ top -p 4821    # 10:40 기준 (22분 경과)",
            " 4821 ubuntu 99.8 40.1 30.2g 26.1g python",
        ]
    )
    assert _diagnosed(text).id == "F34"


def test_the_loaded_models_path_beside_a_quantized_graph() -> None:
    text = "\n".join(
        [
            "$ ls out/",
            "model.onnx  model_quantized.onnx  config.json",
            ">>> m.model_path",
            "PosixPath('out/model.onnx')",
        ]
    )
    assert _diagnosed(text).id == "F30"


def test_a_querys_aliases_are_a_components_fields() -> None:
    text = "\n".join(
        [
            "endpoint: ml.g5.xlarge x1 (one GPU)",
            '{"s": "InService", "r": {"DesiredCopyCount": 2, "CurrentCopyCount": 1},',
            ' "spec": {"NumberOfAcceleratorDevicesRequired": 1.0, "MinMemoryRequiredInMb": 1024}}',
        ]
    )
    assert _diagnosed(text).id == "F09"


def test_a_space_aligned_table_with_empty_cells_under_a_length_column_of_averages() -> None:
    text = "\n".join(
        [
            "dataset           tokens(avg)  batch  p50 ms   req/s",
            "faq-titles        41           8      23.1     335",
            "padded-to-512     512          1      25.9     -",
            "padded-to-512     512          8      101.7    79",
        ]
    )
    assert _diagnosed(text).id == "F32"
