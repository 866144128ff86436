"""Where a reading's scope ends and what context decides: a shell comment after a traceback is a person's line; a
Korean trigger glued to its verb reaches as far back as a free one; a forwarded problem of another account leaves
nothing to do; a cut-off placement cause, a real-time endpoint's read timeout and an image written with a space leave
causes open; the sentence that names the requirements file is the one that lists; OCR's misread words are put back;
the Korean collapse with its quantifier first; a contracted negation, a checklist box, a ticket closed as concluded, a
search that found none, serverless named beside another kind, and copies short on several GPUs."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.ocr import corrected
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


_TIMEOUT = [
    "Traceback (most recent call last):",
    '  File "probe.py", line 12, in <module>',
    '    rt.invoke_endpoint(EndpointName="sls-e5", Body=b"{}")',
    'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.eu-west-1'
    '.amazonaws.com/endpoints/sls-e5/invocations"',
]


def test_a_shell_comment_after_a_traceback_is_read_as_a_persons_line() -> None:
    text = "\n".join(
        [
            "$ python probe.py   # serverless endpoint sls-e5, MemorySizeInMB 6144",
            *_TIMEOUT,
            "# 로그 그룹 봤는데 Worker died 같은 건 없고 모델 로딩만 80초 걸림",
            "# read_timeout=300 으로 다시 부르니 85초에 200, 그 뒤로는 30ms",
        ]
    )
    # The comment denies the dying worker: the timeout is the cold start's, not serverless memory's.
    assert _diagnosed(text).id == "F15"


def test_a_korean_past_perfect_glued_to_its_verb_recalls_a_mention_five_words_back() -> None:
    text = "\n".join(
        [
            "Execution deploy-e5-r3 SUCCEEDED",
            '  TaskSucceeded  WaitInService  {"EndpointStatus":"InService"}',
            "지난 실행 r2 는 ResourceLimitExceeded (ml.g5.2xlarge endpoint usage 1) 로 실패했었음 → 증액 후 재실행 성공.",
        ]
    )
    assert _diagnosed(text).id != "F39"


def test_another_accounts_quota_forwarded_for_information_leaves_nothing_to_do() -> None:
    text = "\n".join(
        [
            "---------- Forwarded message ---------",
            "> The account-level service limit 'ml.g6.xlarge for endpoint usage' is 1 Instances, with current "
            "utilization of 1 Instances and a request delta of 1 Instances.",
            "",
            "FYI from the platform channel. That is another team's account, not ours; our endpoint is InService.",
            "Nothing for us to do.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_placement_reason_cut_off_at_its_cause_leaves_memory_open() -> None:
    reason = "FailureReason: SageMaker was able to deploy 0 out of 2 requested copies. Cause: "
    assert _diagnosed(reason + "[truncated]").id == "unknown"
    assert _diagnosed(reason.removesuffix(" Cause: ")).id == "F09"


def test_a_read_timeout_on_a_real_time_endpoint_leaves_the_servers_first_call_work_open() -> None:
    text = "\n".join(["endpoint bge-rt on ml.g5.2xlarge, real-time, InService since 09:10", *_TIMEOUT])
    found = _diagnosed(text)
    assert found.id == "unknown"
    candidates = " ".join(line for line in found.evidence if line.startswith("[candidate]"))
    assert "F18" in candidates and "F21" in candidates
    assert "F14" not in candidates  # serverless memory needs a serverless endpoint


def test_an_image_written_with_a_space_for_its_colon_is_checked_against_the_driver() -> None:
    text = "\n".join(
        [
            '{"EndpointName": "nli-g6", "EndpointStatus": "Failed", "FailureReason": "",',
            ' "CreationTime": "2026-11-02T01:00:00Z", "LastModifiedTime": "2026-11-02T01:00:01Z"}',
            "Creating 하다가 58분 만에 Failed. ml.g6.xlarge, 이미지 tritonserver 26.05-py3, AMI 지정 안 함.",
        ]
    )
    found = _diagnosed(text)
    assert found.id == "unknown"
    assert any("F20" in line for line in found.evidence)


def test_the_requirements_file_is_read_only_in_the_sentence_that_names_it() -> None:
    text = "\n".join(
        [
            "ModelError: An error occurred (ModelError) when calling the InvokeEndpoint operation: Received client "
            "error (400) from primary with message \"No module named 'onnxruntime'\"",
            "model_fn does `import onnxruntime`. The requirements.txt holds only tokenizers.",
        ]
    )
    assert _diagnosed(text).id == "F01"


def test_ocrs_misread_words_are_put_back_where_the_paste_says_it_came_through_ocr() -> None:
    line = "onnxruntime.capi.onnxruntime_pybind11_state.InvalidArgument: [ONNXRuntimeError] : 2 : INVALID_ARGUMENT :"
    misread = f"{line} lnvalid input narne: token_type_ids"
    fixed, changes = corrected(misread)
    assert "Invalid input name: token_type_ids" in fixed
    assert changes == ["lnvalid→Invalid", "narne→name"]
    assert _diagnosed(f"(console screenshot, OCR)\n{misread}").id == "F03"
    assert _diagnosed(misread).id != "F03"  # without the word that it came through OCR, nothing is put back
    assert corrected("the model returned normal output")[1] == []


def test_a_korean_collapse_with_its_quantifier_before_the_label() -> None:
    text = "quantize_dynamic 후 검증셋 300건 전부 contradiction 예측. fp32 는 정상 (0.85)."
    assert _diagnosed(text).id == "F29"


def test_a_contracted_negation_denies_what_follows_it() -> None:
    text = "\n".join(
        [
            "aws_sagemaker_endpoint.emb: Creation complete after 8m2s [id=emb-g5]",
            "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.",
            "# pinned InferenceAmiVersion so we don't hit error 803 like the dev stack did",
        ]
    )
    assert _diagnosed(text).id != "F20"


def test_a_checklist_box_opens_a_persons_line() -> None:
    text = "\n".join(
        [
            "Inference component emb-ic: InService, copies 2 of 2, accelerator devices 1",
            '[v] "Number of accelerator devices required must be specified" 에러 재발 없음',
            "[x] smoke test 10건 200",
        ]
    )
    assert _diagnosed(text).id != "F08"


def test_a_korean_ticket_closed_as_concluded_recalls_its_cause_at_the_time() -> None:
    text = "\n".join(
        [
            "[종결] 엔드포인트 생성 실패 건",
            "1. 접수 당시 원인: ResourceLimitExceeded ('ml.g6.xlarge for endpoint usage' 0 Instances)",
            "2. 증설 승인 후 재배포, InService. 티켓 종결합니다.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_what_a_search_found_none_of_is_denied_across_its_list() -> None:
    from workflows.diagnosis.polarity import polarity

    line = "로그 그룹에서 `Worker died` / `Killed` / `OutOfMemory` 전부 검색했는데 0건."
    at = line.index("Worker")
    assert polarity(line, at, at + len("Worker died")).polarity == "negated"


def test_serverless_named_beside_another_kind_of_endpoint_does_not_say_which_one_failed() -> None:
    text = "\n".join(
        [
            "2026-12-01T10:00:07,112 [WARN ] W-9000-model_1.0 org.pytorch.serve.wlm.BatchAggregator - Load model "
            "failed: model, error: Worker died.",
            "이 모델은 serverless 하나랑 c6i 코호스트 하나에 떠 있어서 어느 쪽 로그인지 확인 중",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_copies_short_on_several_gpus_leave_memory_open_and_on_one_gpu_stay_the_gpu_cap() -> None:
    reason = 'FailureReason: "SageMaker was able to deploy 1 out of 3 requested copies."'
    assert _diagnosed(f"{reason}\nendpoint on ml.g6.12xlarge").id == "unknown"
    assert _diagnosed(f"{reason}\nendpoint on ml.g5.xlarge").id == "F09"
