"""Recaps, shared endpoints and causes left open: a closed postmortem and a forwarded warning that leaves nothing to
do dismiss what they quote; the past perfect, a past sprint and another project's tracker recall or report someone
else's; a component short on an endpoint it shares with others leaves memory open; a worker's death shown where the
endpoint's kind is unknown leaves serverless memory open under a read timeout; NGC's Triton image is SageMaker's; a
stall under an image beyond the driver leaves F20 open; copies short on an instance they fit leave F10 open; a
closed ticket and a status "as of" a date settle or date the recap before them."""

from __future__ import annotations

import json

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _diagnosed_id(text: str) -> str:
    return _diagnosed(text).id


def test_a_closed_postmortem_quotes_a_settled_failure() -> None:
    text = "\n".join(
        [
            "Postmortem PM-88 (closed): start failures after the image bump",
            'every instance printed "System has unsupported display driver / cuda driver combination (error 803)"',
            "Fix: InferenceAmiVersion set, redeployed; 0 errors since.",
        ]
    )
    assert _diagnosed(text).id == "unknown"
    # An alert mail in its resolved state settles what it quotes, but not a failure that ends by itself each time: a
    # slow scale-in's idle-cost alert resolves when the instances reach zero, half an hour late, as it will next time
    timeline = "\n".join(
        [
            "Subject: [RESOLVED] idle-cost (ep=emb)",
            "  21:00:05 last request",
            "  21:14:20 DesiredCopyCount 1 -> 0",
            "  21:27:48 CurrentInstanceCount 1 -> 0",
        ]
    )
    assert _diagnosed(timeline).id == "F13"
    assert _diagnosed(timeline.replace("[RESOLVED]", "[FIRING:1]")).id == "F13"


def test_a_forwarded_warning_that_leaves_us_nothing_to_do() -> None:
    text = "\n".join(
        [
            "FYI from the search team: their vLLM reranker got 404 on /score.",
            "우리 reranker 는 HF DLC 라 해당 없고 pair 호출 200/200 통과. 우리가 할 건 없음.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_the_past_perfect_and_a_past_sprint_recall() -> None:
    assert (
        _diagnosed('v7 은 "did not pass the ping health check" 로 실패했었음. v8 은 ping 200.').id
        == "unknown"
    )
    text = "# 배포 전 체크 (지난 스프린트에 \"No module named 'onnxruntime'\" 당해서 추가)\n$ curl ... -> 200"
    assert _diagnosed(text).id == "unknown"


def test_an_error_quoted_from_another_projects_tracker_under_its_label() -> None:
    text = "\n".join(
        [
            "Context: huggingface/transformers 쪽 issue 에서 아래 에러가 많이 보고됨:",
            "> ValueError: Tokenizer class TokenizersBackend does not exist or is not currently imported.",
            "우리는 아직 안 겪었지만 체크 추가. CI green.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_copy_not_placed_on_an_endpoint_shared_with_other_components() -> None:
    text = "\n".join(
        [
            "InferenceComponentStatus: Failed",
            "FailureReason: SageMaker was able to deploy 0 out of 1 requested copies.",
            "The endpoint is shared with three other components whose specs we cannot see.",
        ]
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F10") for line in diagnosis.evidence)
    assert _diagnosed("\n".join(text.splitlines()[:2])).id == "F09"


def test_a_workers_death_with_the_endpoints_kind_unknown_leaves_serverless_memory_open() -> None:
    timeout = 'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-west-1.amazonaws.com/endpoints/e/invocations"'
    died = "2026-12-03T21:14:02,771 [WARN ] W-9000-model_1.0 com.amazonaws.ml.mms.wlm.BatchAggregator - Load model failed: model, error: Worker died."
    diagnosis = _diagnosed(f"{died}\n{timeout}")
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F14") for line in diagnosis.evidence)
    assert _diagnosed(f"{timeout}\nfirst request after idle").id == "F15"


def test_ngcs_triton_image_is_read_as_sagemakers_build_of_the_release() -> None:
    text = "\n".join(
        [
            "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.",
            "ml.g4dn.xlarge, nvcr.io/nvidia/tritonserver:26.05-py3 based image, InferenceAmiVersion not set.",
        ]
    )
    diagnosis = _diagnosed(text)
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F20") for line in diagnosis.evidence)


def test_a_check_that_records_the_failure_as_absent() -> None:
    assert (
        _diagnosed(
            'CheckQuota {"quota":"ml.g6.xlarge for endpoint usage","limit":4,"ResourceLimitExceeded":false}'
        ).id
        == "unknown"
    )
    assert _diagnosed('PreflightScp {"check":"AccessDenied","result":"PASS"}').id == "unknown"


def test_an_incident_the_tool_resolved_is_settled() -> None:
    body = {
        "event": {
            "event_type": "incident.resolved",
            "data": {
                "type": "incident",
                "status": "resolved",
                "title": "ALARM: ic-zero-nocap",
                "body": {
                    "details": "Alarm returned to OK. Original error: ValidationError: Inference Component has no capacity to process this request."
                },
            },
        }
    }
    assert _diagnosed(json.dumps(body)).id == "unknown"
    body["event"]["event_type"] = "incident.triggered"
    body["event"]["data"]["status"] = "triggered"
    assert _diagnosed(json.dumps(body)).id == "F12"


def test_last_weekday_a_past_heading_and_other_peoples_reports_recall() -> None:
    assert (
        _diagnosed("# last Tuesday this stack died with ResourceLimitExceeded; quota raised since.").id
        == "unknown"
    )
    runbook = "과거 장애 (참고용):\n- 기본 AMI 드라이버가 오래돼서 error 803 → InferenceAmiVersion 고정\n오늘 점검: 전부 통과"
    assert _diagnosed(runbook).id == "unknown"
    assert (
        _diagnosed(
            "Saw discussions where people get `POST /score 404` on vLLM; our endpoint uses /classify."
        ).id
        == "unknown"
    )


def test_a_stall_with_an_image_beyond_the_default_drivers_cuda_leaves_the_driver_open() -> None:
    record = "\n".join(
        [
            '{"EndpointName": "xnli", "EndpointStatus": "Creating",',
            ' "CreationTime": "2026-12-01T10:00:00Z", "LastModifiedTime": "2026-12-01T10:00:01Z"}',
            "Still Creating after 55 minutes on ml.g5.2xlarge, no log group.",
        ]
    )
    newer = f"{record}\nImage: sagemaker-tritonserver:26.05-py3, no InferenceAmiVersion in the config."
    diagnosis = diagnose(evidence_from_paste(newer, origin="ticket"))
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F20") for line in diagnosis.evidence)
    # With an AMI whose driver runs that CUDA, or with no image named, the stall stands
    fixed = newer.replace(
        "no InferenceAmiVersion in the config", "InferenceAmiVersion al2023-ami-sagemaker-inference-gpu-4-1"
    )
    assert _diagnosed_id(fixed) == "F06"
    assert _diagnosed_id(record) == "F06"


def test_a_closed_recap_that_leaves_nothing_to_do_names_nothing() -> None:
    text = "\n".join(
        [
            "[회고] 최적화 경로 정리",
            "- 그때 olive OrtTransformersOptimization 을 돌렸을 때 19분 동안 결과물이 안 나왔음.",
            "- optimum 경로로 전환, 변환 23초. 추가 작업 없음.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_a_status_as_of_a_date_dates_the_recap_before_it() -> None:
    text = "\n".join(
        [
            "[사후 보고] 이전 작업 회고",
            "- 11/08: Triton 이미지 올리면서 error 803 발생 → InferenceAmiVersion 지정으로 해결.",
            "현재 상태 (12/04 기준): 모든 엔드포인트 InService, 5XX 0건",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_copies_short_of_an_instance_they_fit_leave_memory_open() -> None:
    component = {
        "InferenceComponentName": "ic",
        "Specification": {
            "ComputeResourceRequirements": {
                "NumberOfAcceleratorDevicesRequired": 1.0,
                "MinMemoryRequiredInMb": 8192,
            }
        },
        "RuntimeConfig": {"DesiredCopyCount": 3, "CurrentCopyCount": 1},
        "InferenceComponentStatus": "InService",
    }
    shared = (
        f"{json.dumps(component)}\nThe endpoint runs on one ml.g5.12xlarge shared with two other components."
    )
    diagnosis = diagnose(evidence_from_paste(shared, origin="ticket"))
    assert diagnosis.id == "unknown"
    assert any(line.startswith("[candidate] F10") for line in diagnosis.evidence)
    # Three copies of one GPU on a one-GPU instance cannot fit: the GPUs are the limit (one copy placed, on its GPU)
    assert _diagnosed_id(shared.replace("ml.g5.12xlarge", "ml.g5.xlarge")) == "F09"


def test_a_closed_ticket_is_a_settled_matter() -> None:
    text = "\n".join(
        [
            "OPS-88 \"No module named 'onnxruntime'\" on emb-cpu   Status: Closed",
            "Comment: added onnxruntime to code/requirements.txt, redeployed, 500 calls 0 errors.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"
