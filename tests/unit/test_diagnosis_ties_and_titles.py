"""Two entries held as well name neither; "don't know which" and "Expected:"; our side unaffected; a guidance title
frames the text; a padded run states its length; timed events on one line; a block label's padding; a bare GPU type;
an empty model file as a listing or as onnxruntime says it; a space-aligned percentile table; a count-of-inputs
column and named request formats; pandas' value_counts."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_two_entries_held_as_well_name_neither() -> None:
    text = "\n".join(
        [
            "GPU endpoint on ml.g5.xlarge: the first request after each deploy takes 48 s, then 16 ms",
            "asked the platform team which serving stack it is (LMI or ORT+TensorRT); no reply yet",
        ]
    )
    found = _diagnosed(text)
    assert found.id == "unknown"
    assert "F18" in found.title and "F21" in found.title


def test_a_writer_who_does_not_know_which() -> None:
    text = "\n".join(
        [
            'FailureReason: "The primary container for production variant AllTraffic did not pass the ping health check."',
            "[WARN ] W-9002-model_1.0 org.pytorch.serve.wlm.BatchAggregator - Load model failed: model, error: Worker died.",
            "[INFO ] W-9002-model_1.0 org.pytorch.serve.wlm.WorkerThread - Retry worker: 9002 in 1 seconds.",
            "raj: don't know which container that worker is from, honestly",
            "dana: the instance is ml.c6i.xlarge with two containers",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_expected_results_are_supposed() -> None:
    line = 'Expected: "Inference Component has no capacity to process this request", then the alarm fires'
    start = line.index("Inference")
    assert polarity(line, start, start + 40).polarity == "hypothetical"


def test_our_side_unaffected_after_a_parenthesis() -> None:
    text = "\n".join(
        [
            '> 저희 계정에서 "is not authorized to perform: sagemaker:CreateEndpoint ... with an explicit deny in a'
            ' service control policy" 에러가 납니다.',
            "답장: 저희 쪽 (search-ml 계정) 은 해당 SCP 적용 대상이 아니라서 영향 없습니다.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_guidance_title_frames_the_whole_text() -> None:
    text = "\n".join(
        [
            "[테스트 계획] emb-s2z scale to zero 검증 (다음 주)",
            "",
            "목표: 0 copies 상태 확인",
            '1. 0 copies 에서 invoke → "Inference Component has no capacity to process this request" 가 정상 동작',
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_padded_run_states_its_length_and_a_max_latency_is_none() -> None:
    text = "\n".join(
        [
            "serverless bench, natural text samples, warmup=5",
            "p50 41.8 ms",
            "max 33,407 ms",
        ]
    )
    assert _diagnosed(text).id != "F32"
    korean = "지난주 보고서는 샘플 문장 평균 59토큰으로 측정 (b=8 p50 23.9ms).\n운영은 512토큰 청크라 다시 돌리니 b=8 p50 102.8ms."
    assert _diagnosed(korean).id == "F32"


def test_timed_events_on_one_line_and_a_time_inside_the_stop() -> None:
    text = "\n".join(
        [
            "scale to zero 결과. 트래픽 14:00 에 끊음",
            "14:13 CurrentCopyCount 1 -> 0, 14:27 CurrentInstanceCount 1 -> 0",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_block_labels_padding_reaches_rows_without_a_length() -> None:
    text = "\n".join(
        [
            "Published (sample set: support tickets, median 59 tokens):",
            "  b=8 p50 23.9 ms",
            "Re-run, inputs padded to 512 tokens:",
            "  b=8 p50 102.8 ms",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_a_gpu_type_written_without_ml() -> None:
    text = "\n".join(
        [
            "IC 3개를 g5.xlarge 한 대에 올리는 중, 세 번째가 안 뜸",
            '{"InferenceComponentName": "ic-bge", "InferenceComponentStatus": "Failed",',
            ' "FailureReason": "SageMaker was able to deploy 0 out of 1 requested copies.",',
            ' "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 0}}',
            "앞의 두 IC 는 InService, 각각 accelerator 1",
        ]
    )
    assert _diagnosed(text).id == "F09"


def test_an_empty_model_file_as_a_listing_or_as_onnxruntime_says_it() -> None:
    listing = "tar 안 내용:\n    nli/config.pbtxt        1.2K\n    nli/1/model.onnx           0"
    assert _diagnosed(listing).id == "F22"
    said = "failed to load 'nli' version 1: Invalid argument: ModelProto does not have a graph."
    assert _diagnosed(said).id == "F22"


def test_a_space_aligned_percentile_table() -> None:
    text = "\n".join(
        [
            "real-time endpoint ml.c6i.2xlarge, SAGEMAKER_MODEL_SERVER_WORKERS=4",
            "run  warmup  requests  p50     p99",
            "r1   3       1000      18.1ms  1587ms",
            "r2   20      1000      17.5ms  20.9ms",
        ]
    )
    assert _diagnosed(text).id == "F33"


def test_a_count_of_inputs_column_and_named_request_formats() -> None:
    text = "\n".join(
        [
            "nli-l40s (ml.g6e.xlarge)",
            '요청 형식 A: {"inputs": [32개 문장]}',
            '요청 형식 B: {"inputs": [32개 문장], "parameters": {"batch_size": 32}}',
            "| 형식 | 입력 수 | p50 |",
            "|------|--------|-----|",
            "| 단건 | 1 | 16 ms |",
            "| A | 32 | 505 ms |",
            "| B | 32 | 26 ms |",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_pandas_value_counts_of_the_quantized_predictions() -> None:
    text = "\n".join(
        [
            "quantize_dynamic(weight_type=QuantType.QInt8), 200 validation pairs",
            "In [23]: df.pred_int8.value_counts()",
            "Out[23]:",
            "neutral    200",
            "Name: count, dtype: int64",
        ]
    )
    assert _diagnosed(text).id == "F29"
