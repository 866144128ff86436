"""Short idle gaps that never reach zero (F13); a kind of endpoint not known in Korean; Triton's "failed to find model
file" (F23); runs labelled A and B and a truncation's length (F32); another repository's error; a title marked done
and no issue open; a first call with an aside (F18); "list of 32" (F31); a later figure read under its line's first;
a writer who does not know yet which; workers that finished loading after the run began on a real-time endpoint
(F33)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.batch_verdicts import hidden_by_samples, one_by_one
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.worker_loading import workers_loading_in_run


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def test_short_idle_gaps_that_never_reach_zero_are_a_slow_scale_in() -> None:
    text = "\n".join(
        [
            "last request at 10:00:00",
            "10:15:30 CurrentCopyCount 1 -> 0",
            "10:29:00 CurrentInstanceCount 1 -> 0",
            "it does reach zero, slowly. So for our 20-minute idle gaps it never scales to zero at all.",
        ]
    )
    assert _diagnosed(text).id == "F13"
    assert _diagnosed("MinInstanceCount 0 is set but the endpoint never scales to zero.").id != "F13"


def test_a_kind_of_endpoint_not_known_in_korean_leaves_the_first_call_open() -> None:
    text = "\n".join(
        [
            'botocore.exceptions.ReadTimeoutError: Read timeout on endpoint URL: "https://runtime.sagemaker.us-east-1.'
            'amazonaws.com/endpoints/rr/invocations"',
            "두 번째 호출은 40ms. 서버리스인지 GPU 인지도 모름.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_tritons_failed_to_find_model_file() -> None:
    text = "\n".join(
        [
            "e5s/1/model_quantized.onnx",
            "E0624 06:15:40.772 1 model_lifecycle.cc:654] failed to load 'e5s' version 1: Not found: unable to load "
            "model 'e5s', failed to find model file 'model.onnx' in /opt/ml/model/e5s/1",
        ]
    )
    assert _diagnosed(text).id == "F23"


def test_runs_labelled_a_and_b_and_a_truncations_length() -> None:
    lines = [
        "Run A (published): samples from the FAQ set, median 48 tokens",
        "  b=8  p50 20.0 ms",
        "Run B (today): production documents, truncation to 512",
        "  b=8  p50 88.0 ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[1].tokens == 512


def test_another_repositorys_error_is_someone_elses() -> None:
    text = "\n".join(
        [
            "Tokenizer class TokenizersBackend does not exist or is not currently imported.",
            'we had the "No module named onnxruntime" thing on the other repo.',
        ]
    )
    assert _diagnosed(text).id == "F35"


def test_a_title_marked_done_and_no_issue_open_settle() -> None:
    text = "\n".join(
        [
            "# 포스트모템 요약: 4월 배포 (완료)",
            "- 4/3 ResourceLimitExceeded: The account-level service limit 'ml.g5.xlarge for endpoint usage' is 0 "
            "Instances, with current utilization of 0 Instances and a request delta of 1 Instances.",
            "현재 진행 중인 이슈 없음.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_a_first_call_with_an_aside() -> None:
    text = "first call to the LMI endpoint (djl-inference lmi, ml.g5.xlarge, python engine) took 39s, then 30 ms."
    assert _diagnosed(text).id == "F18"


def test_a_list_of_n() -> None:
    lines = ["| case | p50 ms |", "| single (b=1) | 15.0 |", "| list of 16 | 240.0 |"]
    found = one_by_one(lines)
    assert found is not None and found[1].batch == 16


def test_a_later_figure_is_read_under_its_lines_first() -> None:
    lines = [
        "벤치마크: 샘플 문장 평균 45 토큰",
        "  b=1 p50 20.0ms / b=8 p50 21.0ms",
        "고정 512 로 다시 측정: b=1 p50 22.0ms / b=8 p50 90.0ms",
    ]
    found = hidden_by_samples(lines)
    assert found is not None and found[1].tokens == 512 and found[1].ms == 90.0


def test_a_writer_who_does_not_know_yet_which() -> None:
    text = "\n".join(
        [
            '"The primary container for production variant AllTraffic did not pass the ping health check."',
            "[INFO ] W-9002-model com.amazonaws.ml.mms.wlm.WorkerThread - Worker died.",
            "ml.c6i.2xlarge, 3 containers. Don't know yet whether to cut containers or pin workers.",
        ]
    )
    assert _diagnosed(text).id == "unknown"


def test_workers_that_finished_loading_after_the_run_began() -> None:
    lines = [
        "real-time endpoint, 4 workers. 벤치 시작 11:00:05. p99=1540ms",
        "11:00:03 W-9000-model MODEL_LOG - Model loaded",
        "11:00:14 W-9001-model MODEL_LOG - Model loaded",
    ]
    assert workers_loading_in_run(lines) == lines[2]
    assert workers_loading_in_run(lines[:2]) == ""
    assert _diagnosed("\n".join(lines)).id == "F33"
