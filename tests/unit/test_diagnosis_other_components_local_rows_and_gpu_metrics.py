"""Another component already on the endpoint leaves a copies shortfall open between GPUs and memory; what a team
named by its name met ("검색팀에서 ... 났다고 물어보네요") is theirs, and "우리는 HF DLC 라 해당 없음" dismisses it; a row
measured locally is no run of the endpoint's list; the labels' counts with the rest at zero after INT8; the GPU's
utilisation metric shows a GPU."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.facts import gpu_instance
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


REFUSED = (
    "FailureReason: SageMaker was able to deploy 0 out of 1 requested copies of the inference component.\n"
)


def test_another_component_already_on_the_endpoint_leaves_the_shortfall_open() -> None:
    assert _diagnosed(
        REFUSED + "Another IC (ic-rerank) is already on this endpoint; specs not at hand.\n"
    ).id == ("unknown")


def test_what_a_team_named_by_its_name_met_is_theirs() -> None:
    quoted = "데이터팀에서 vLLM 쓰다가 `Model architectures ['DebertaV2ForSequenceClassification'] are not supported` 났다고 물어보네요\n"
    assert _diagnosed(quoted).id == "unknown"
    # Said as one's own, it is the failure
    assert _diagnosed(quoted.replace("데이터팀에서 ", "").replace("났다고 물어보네요", "남")).id == "F25"
    dismissed = (
        "vLLM 에서 `Model architectures ['DebertaV2ForSequenceClassification'] are not supported` 남.\n"
    )
    assert _diagnosed(dismissed + "우리는 HF DLC 라 해당 없음.\n").id == "unknown"


def test_a_row_measured_locally_is_no_run_of_the_endpoints_list() -> None:
    text = (
        "ml.g5.xlarge, HF DLC pipeline, no parameters sent.\n"
        "| case | p50 ms |\n| 1 sentence | 15.0 |\n| 16 sentences (list) | 231.0 |\n"
        "| 16 sentences, 로컬 ORT 직접 batch | 14.2 |\n"
    )
    assert _diagnosed(text).id == "F31"


def test_the_labels_counts_with_the_rest_at_zero_after_int8() -> None:
    text = "quantize_dynamic QInt8 후: accuracy 0.33, 라벨 분포 contradiction 500 / 나머지 0\n"
    assert _diagnosed(text).id == "F29"


def test_the_gpus_utilisation_metric_shows_a_gpu() -> None:
    assert gpu_instance(evidence_from_paste("GPU util 도 10% 미만.\n", origin="t")) is True
    assert gpu_instance(evidence_from_paste("GPUUtilization 4 %\n", origin="t")) is True
    assert gpu_instance(evidence_from_paste("CPUUtilization 390 %\n", origin="t")) is None
