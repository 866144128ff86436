"""A test plan's expectations are no findings; a load generator's stop starts a scale-in; a collapse told as a Korean
tally or as bare counts under their labels; both graphs in a folder loaded without file_name; an ordinal request
table; a block opened by a leading label; a component record a table prints without its name."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_a_test_plans_expected_behaviour_is_no_finding() -> None:
    text = "\n".join(
        [
            "Scale-to-zero drill for bge-ic, next Tuesday",
            "Expected behaviour we will verify (not yet run):",
            '1. a request at zero copies returns "Inference Component has no capacity to process this request"',
            "2. the client retries with backoff until a copy is up",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_load_generators_stop_starts_the_scale_in() -> None:
    text = "\n".join(
        [
            "time      copies(cur/des)  instances  note",
            "07:00:00  1/1              1          load generator stopped",
            "07:15:20  0/0              1          AlarmLow fired",
            "07:29:05  0/0              0          instance released",
        ]
    )
    assert _diagnosed(text).id == "F13"


def test_a_collapse_told_as_a_korean_tally_or_as_bare_counts() -> None:
    korean = "quantize_dynamic QInt8 적용 후 검증: 모든 예측이 neutral 로 몰림, fp32 는 정상"
    assert _diagnosed(korean).id == "F29"
    counts = "\n".join(
        [
            "           accuracy   predictions (entailment / neutral / contradiction)",
            "fp32       0.86       170 / 160 / 170",
            "int8-dyn   0.33       0 / 500 / 0",
        ]
    )
    assert _diagnosed(counts).id == "F29"
    # Counts spread over the labels are no collapse.
    assert _diagnosed(counts.replace("0 / 500 / 0", "150 / 190 / 160")).id != "F29"


def test_both_graphs_in_the_folder_loaded_without_file_name() -> None:
    text = "\n".join(
        [
            ">>> os.listdir('/opt/ml/model')",
            "['config.json', 'model.onnx', 'model_quantized.onnx', 'tokenizer.json']",
            ">>> m = ORTModelForSequenceClassification.from_pretrained('/opt/ml/model')",
            "latency unchanged after quantization: 51.9 ms against 52.1 ms",
        ]
    )
    assert _diagnosed(text).id == "F30"
    named = text.replace(
        "from_pretrained('/opt/ml/model')",
        "from_pretrained('/opt/ml/model', file_name='model_quantized.onnx')",
    )
    assert _diagnosed(named).id != "F30"


def test_an_ordinal_request_table_on_tensorrt() -> None:
    text = "\n".join(
        [
            'providers=["TensorrtExecutionProvider", "CUDAExecutionProvider"], ml.g5.xlarge',
            "| call | latency |",
            "|---|---|",
            "| 1st, batch 1 | 44.1 s |",
            "| 2nd..20th, b=1 | 14-16 ms |",
        ]
    )
    assert _diagnosed(text).id == "F21"


def test_a_leading_label_opens_the_benchmarks_block() -> None:
    text = "\n".join(
        [
            "Benchmark (pre-launch): locust, b=8, samples from the FAQ set",
            "mean token length 41",
            "p50 22.8 ms, throughput 340 req/s",
            "re-ran the benchmark padded to 512: p50 99.5 ms at b=8",
        ]
    )
    assert _diagnosed(text).id == "F32"


def test_a_component_record_printed_without_its_name() -> None:
    text = "\n".join(
        [
            "$ aws sagemaker describe-inference-component --inference-component-name nli-ic --output table",
            "---------------------------------------------------",
            "|           DescribeInferenceComponent            |",
            "+--------------------------+----------------------+",
            "|  InferenceComponentStatus|  InService           |",
            "+--------------------------+----------------------+",
            "||                 RuntimeConfig                 ||",
            "|+-----------------------------+-----------------+|",
            "||  CurrentCopyCount           |  1              ||",
            "||  DesiredCopyCount           |  3              ||",
            "|+-----------------------------+-----------------+|",
            "endpoint on ml.g5.2xlarge (one GPU), each copy asks for one device",
        ]
    )
    assert _diagnosed(text).id == "F09"


def test_a_component_that_placed_no_copy_on_an_unknown_instance_leaves_memory_open() -> None:
    record = (
        '{"InferenceComponentName": "rerank-ic", "InferenceComponentStatus": "Failed",'
        ' "FailureReason": "SageMaker was able to deploy 0 out of 1 requested copies.",'
        ' "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 0}}'
    )
    assert _diagnosed(
        f"{record}\nthe platform team owns the endpoint; its instance type is not known to us"
    ).id == ("unknown")
    # On a one-GPU instance already holding another component's device, the GPU cap is the limit.
    shown = f"{record}\nendpoint: 1 x ml.g5.xlarge, emb-ic (1 copy, 1 device) InService on it"
    assert _diagnosed(shown).id == "F09"
