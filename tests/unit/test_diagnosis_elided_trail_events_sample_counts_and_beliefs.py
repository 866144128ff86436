"""A lookup-events entry whose CloudTrailEvent a writer elided ("...") is read field by field; "n" beside a latency
distribution's percentiles counts samples, not inputs; what a writer thought a row would take ("... 나올 줄 알았음") is
no measurement; "batch_size 를 안 넘김" passes none; a pack's minutes are read within one sentence; the GPU cap is shown
only where the memory fits; a dismissal by linking for the record, or as unrelated to our endpoints; the SDK's 200
after a read timeout; long inputs' cost "가려졌던" (hidden)."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.batching import passes_batch_size
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.report_columns import header


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_an_elided_trail_event_is_read_field_by_field() -> None:
    event = (
        '{"eventVersion":"1.09","userIdentity":{"type":"AssumedRole",...},"eventName":"CreateModel",'
        '"errorCode":"AccessDenied","errorMessage":"User: arn:aws:sts::111122223333:assumed-role/deployer/x is not '
        "authorized to perform: sagemaker:CreateModel on resource: arn:aws:sagemaker:eu-west-1:111122223333:model/m "
        'with an explicit deny in a service control policy"}'
    )
    text = json.dumps({"Events": [{"EventName": "CreateModel", "CloudTrailEvent": event}]}, indent=2)
    assert _diagnosed(text).id == "F38"


def test_n_beside_percentiles_counts_samples() -> None:
    assert "batch" not in (header(["payload", "n", "p50 ms", "p90 ms", "p99 ms"]) or {})
    assert header(["n", "p50 ms"]) == {"latency": 1, "batch": 0}


def test_a_row_the_writer_believed_is_no_measurement() -> None:
    text = (
        "ml.g6e.xlarge (L40S), HF DLC.\n"
        'payload A: {"inputs": "<one premise>"}\npayload B: {"inputs": [24 premises]}\n'
        "| payload | n | p50 ms | p90 ms | p99 ms |\n| A | 400 | 14.0 | 15.1 | 17.0 |\n| B | 200 | 330.2 | 335.0 | 341.9 |\n"
        "배치면 B 가 20ms 근처로 나올 줄 알았음. 기본 핸들러가 pipeline 에 batch_size 를 안 넘김.\n"
    )
    assert _diagnosed(text).id == "F31"
    assert not passes_batch_size("기본 핸들러가 pipeline 에 batch_size 를 안 넘김.")


def test_a_packs_minutes_are_read_within_one_sentence() -> None:
    text = "upload → CreateEndpoint → InService 6분, 첫 호출 200. 혹시 다른 팀 CI 에 GZIP=-9 남아 있으면 바꿔 주세요.\n"
    assert _diagnosed(text).id == "unknown"
    assert _diagnosed("[pack] tar czf model.tar.gz (GZIP=-9) model/ ...\n[pack] elapsed 63.2 s\n").id == "F24"


def test_the_gpu_cap_is_shown_only_where_the_memory_fits() -> None:
    record = (
        "endpoint: 1 x ml.g5.xlarge\n"
        'FailureReason: "SageMaker was unable to deploy the requested ... (truncated)"\n'
        '{"InferenceComponentName": "ic-b", "Specification": {"ComputeResourceRequirements": '
        '{"NumberOfAcceleratorDevicesRequired": 1, "MinMemoryRequiredInMb": MEMORY}},\n'
        ' "RuntimeConfig": {"DesiredCopyCount": 2, "CurrentCopyCount": 0}}\n'
    )
    assert _diagnosed(record.replace("MEMORY", "1024")).id == "F09"
    assert _diagnosed(record.replace("MEMORY", "12288")).id == "unknown"


def test_dismissals_by_linking_for_the_record_or_as_unrelated_to_our_endpoints() -> None:
    arch = "`Model architectures ['DebertaV2ForSequenceClassification'] are not supported`\n"
    assert (
        _diagnosed(arch + "We never tried vLLM; just linking the upstream issue for the record.\n").id
        == "unknown"
    )
    quota = '{"alert": {"message": "ResourceLimitExceeded: ml.p4d.24xlarge for training job usage"}}\n'
    assert _diagnosed(quota + "우리 inference 쪽 (nli-prod) 과는 무관. 잘못 라우팅된 알림.\n").id == "unknown"


def test_the_sdks_200_after_a_read_timeout_is_a_cold_start() -> None:
    text = (
        "서버리스 엔드포인트 MemorySizeInMB=4096.\n"
        'ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1.amazonaws.com/'
        'endpoints/e5-sls/invocations"\n'
        "{'ResponseMetadata': {'HTTPStatusCode': 200}, 'ContentType': 'application/json'}\n"
    )
    assert _diagnosed(text).id == "F15"


def test_long_inputs_cost_hidden_in_korean() -> None:
    assert _diagnosed("벤치 p50 24ms, 운영 100ms. 짧은 샘플 때문에 긴 입력 비용이 가려졌던 것.\n").id == "F32"
