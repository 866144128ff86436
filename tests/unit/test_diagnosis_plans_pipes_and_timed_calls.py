"""A plan's heading; the Korean retrospective "-던 건" after any stem; percentiles parted by pipes with no header (F16);
batches side by side on one line (F31); the shell's `time` around the same call twice (F18); the existential's denial
bounded by a time set before it; the serving code the writer has not seen (F31 doubted)."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.latency import runs
from workflows.diagnosis.paste import evidence_from_paste
from workflows.diagnosis.polarity import polarity


def _diagnosed(text: str):  # noqa: ANN202 - the Diagnosis model
    return diagnose(evidence_from_paste(text, origin="ticket"))


def _reading(text: str, mention: str) -> str:
    at = text.index(mention)
    return polarity(text, at, at + len(mention)).polarity


def test_a_plan_names_what_it_will_check_for() -> None:
    text = "\n".join(
        [
            "### Plan: test scale-to-zero for the e5 component",
            "1. set MinCapacity=0 and a step policy on NoCapacityInvocationFailures",
            '2. send one request at zero and confirm we get "Inference Component has no capacity to process this request"',
            "Not started yet.",
        ]
    )
    assert _diagnosed(text).id != "F12"


def test_what_used_to_occur_is_the_past() -> None:
    text = "이전 2048MB 에서 Worker died 나던 건 4096 으로 올리고 해결. 지금은 정상."
    assert _reading(text, "Worker died") == "historical"


def test_percentiles_parted_by_pipes_with_no_header_are_a_run() -> None:
    line = "p50  38 ms | p90  70 ms | p99 30,950 ms | max 33,100 ms | errors 0"
    assert [run.percentiles for run in runs([line])] == [{50: 38.0, 90: 70.0, 99: 30950.0}]
    text = "\n".join(
        [
            "Load test: e5-serverless (MemorySizeInMB 3072), locust 40 users",
            "warmup_requests: 5",
            line,
        ]
    )
    assert _diagnosed(text).id == "F16"


def test_batches_side_by_side_on_one_line() -> None:
    text = "\n".join(
        [
            "HF DLC zero-shot, ml.g6e.xlarge",
            '요청 바디: {"inputs": [문장 24개]}',
            "batch 1: 16 ms / batch 24: 380 ms  → 거의 24배. GPU 사용률 10% 미만.",
            "parameters 에 batch_size 넣으니 22 ms.",
        ]
    )
    assert _diagnosed(text).id == "F31"


def test_the_shells_time_around_the_same_call_twice() -> None:
    text = "\n".join(
        [
            "$ time python invoke.py --endpoint lmi-rerank --n 1",
            "real    0m38.910s",
            "$ time python invoke.py --endpoint lmi-rerank --n 1",
            "real    0m0.388s",
            "# djl-inference lmi, ml.c6i.2xlarge real-time. no errors.",
        ]
    )
    assert _diagnosed(text).id == "F18"


def test_the_existentials_denial_is_bounded_by_a_time_set_before_it() -> None:
    text = '# djl 로그: InService 시점엔 "Loading model" 없음'
    assert _reading(text, "djl") == "affirmed"
    assert _reading(text, "Loading model") == "negated"
    assert _reading("Worker died 로그도 없음", "Worker died") == "negated"


def test_serving_code_not_yet_seen_leaves_the_loop_open() -> None:
    text = "\n".join(
        [
            "ml.g5.xlarge, e5-base, custom inference.py",
            "batch 1: 12 ms / batch 32: 400 ms",
            "inference.py 는 다른 팀 코드라 아직 못 봤음. GPU 메트릭도 안 봄.",
        ]
    )
    assert _diagnosed(text).id == "unknown"
