"""A writer who finds both readings possible ("둘 다 가능해 보임") leaves them open; a mail that only copied us, and "no
impact on the SageMaker side", dismiss what it quotes; CloudWatch not yet read leaves a failed ping open; a writer who
cannot tell what a p99's tail shows leaves it open with no runner-up named; what must be sent ("넣어야") is not
sent; a settled earlier issue ("이전 이슈 재발 아님") does not dismiss the current one; an endpoint named real-time
("-rt") is not serverless."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batching import passes_batch_size
from workflows.diagnosis.endpoint_kind import serverless
from workflows.diagnosis.paste import evidence_from_paste


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


PING = "FailureReason: The primary container for production variant AllTraffic did not pass the ping health check.\n"


def test_a_writer_who_finds_both_readings_possible_leaves_them_open() -> None:
    text = (
        "ml.g5.2xlarge 1대, 먼저 뜬 IC 가 GPU 1 + MinMemoryRequiredInMb 16384.\n"
        '{"InferenceComponentName": "ic-b", "InferenceComponentStatus": "Failed",\n'
        ' "RuntimeConfig": {"DesiredCopyCount": 1, "CurrentCopyCount": 0}}\n'
        "GPU 부족인지 메모리 부족인지, 둘 다 가능해 보임.\n"
    )
    assert _diagnosed(text).id == "unknown"


def test_a_mail_that_only_copied_us_dismisses_what_it_quotes() -> None:
    quoted = (
        "> An error occurred (AccessDeniedException) when calling the StartJobRun operation: User: "
        "arn:aws:sts::111122223333:assumed-role/etl/x is not authorized to perform: glue:StartJobRun\n"
    )
    assert _diagnosed(quoted + "위 건은 ETL팀 job 이고 우리 쪽은 CC 로만 들어감.\n").id == "unknown"
    assert _diagnosed(quoted + "SageMaker 쪽엔 영향 없음, endpoint InService.\n").id == "unknown"
    assert _diagnosed(quoted).id == "F38"


def test_cloudwatch_not_yet_read_leaves_a_failed_ping_open() -> None:
    assert _diagnosed(PING + "c6i.2xlarge 에 컨테이너 3개. CloudWatch 는 아직 안 봤음.\n").id == "unknown"


def test_a_writer_who_cannot_tell_what_a_tail_shows_leaves_it_open() -> None:
    run = "nli-rt on ml.c6i.4xlarge, workers 1 -> 4 today. run 7: p50 25 ms, p99 1,402 ms. No errors.\n"
    assert _diagnosed(run).id == "F33"
    undecided = _diagnosed(
        run + "No per-request timestamps, so we can't tell whether the slow calls came first.\n"
    )
    assert undecided.id == "unknown"
    assert "F33 or another cause" in undecided.title


def test_what_must_be_sent_is_not_sent() -> None:
    assert not passes_batch_size("batch_size 를 넣어야 배치가 적용됨.")
    assert passes_batch_size("batch_size 를 넣었음.")


def test_a_settled_earlier_issue_does_not_dismiss_the_current_one() -> None:
    text = (
        "1) config.pbtxt 파싱 정상 (이전 이슈 재발 아님)\n"
        "E0903 01:02:10.771 1 model_lifecycle.cc:654] failed to load 'e5' version 1: Internal: onnx runtime error 7: "
        "Load model from /opt/ml/model/e5/1/model.onnx failed:Protobuf parsing failed.\n"
    )
    assert _diagnosed(text).id == "F22"


def test_an_endpoint_named_real_time_is_not_serverless() -> None:
    assert (
        serverless(evidence_from_paste("Labels: alertname=p99, endpoint=nli-rt-c6i\n", origin="mail"))
        is False
    )
    assert (
        serverless(evidence_from_paste("Labels: alertname=p99, endpoint=nli-sls-4g\n", origin="mail")) is True
    )
    assert serverless(evidence_from_paste("Labels: alertname=p99, endpoint=nli-art\n", origin="mail")) is None
