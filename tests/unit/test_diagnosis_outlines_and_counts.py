"""What a person's outline, a table's shape and a count say: a tag of several words and a ticket's key open a
person's line; another project's tracker, "unrelated to us", a case closed as handled and a closing report set a
failure aside; "안 남" denies; a column's name is no finding and a count of none after a name denies it; Olive's pass
that started and runs on for minutes is the optimizer's hang; a table of one percentile a line is a run; serverless
spoken of beside an instance type leaves the endpoint's kind open; a chat's minute opens a person's line; Triton on a
GPU type with its release unknown leaves the driver open; another team's channel reports someone else's error, and a
quoted message is one phrase in a window; a postmortem marked concluded in parentheses settles; a year is read from a
date; a named team's endpoint is someone else's, and "영향 없습니다" on its own line concludes; a stack's failure
followed by a completed update is its past, whatever the events' time format; an image's CUDA stated at a major version
past every default driver leaves the driver open; a time word inside a match dates it; quoted items listed before a
Korean denial are each denied; an incident closed and a note for the record settle."""

from __future__ import annotations

from workflows.diagnosis import diagnose
from workflows.diagnosis.facts import compute
from workflows.diagnosis.paste import evidence_from_paste


def _evidence(text: str):  # noqa: ANN202 - the Evidence model
    return evidence_from_paste(text, origin="ticket")


def _diagnosed_id(text: str) -> str:
    return diagnose(_evidence(text)).id


def test_a_tag_of_several_words_opens_a_persons_note_that_recalls_and_dismisses() -> None:
    text = "\n".join(
        [
            '{"detail-type":"SageMaker Endpoint State Change","detail":{"EndpointName":"e5","EndpointStatus":"IN_SERVICE"}}',
            "[note from on-call] the retry after yesterday's ResourceLimitExceeded on ml.g5.xlarge came up. Nothing to do.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_a_ticket_key_opens_a_closing_report() -> None:
    text = "\n".join(
        [
            "[MLOPS-2210] 종료 보고: emb-cohost 500 에러 (Worker died)",
            "조치: SAGEMAKER_MODEL_SERVER_WORKERS=1 적용 후 재배포, 48시간 재시작 없음.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_another_projects_error_quoted_under_its_label_and_unrelated_to_us() -> None:
    quoted = "\n".join(
        [
            "saw this in another project's tracker:",
            "> ValueError: Model architectures ['DebertaV2ForSequenceClassification'] are not supported for now.",
            "Our HF DLC endpoint is fine.",
        ]
    )
    assert _diagnosed_id(quoted) == "unknown"
    chat = '회계팀 엔드포인트가 "did not pass the ping health check" 로 떨어졌대요. 그건 우리랑 무관, 우리 건 InService.'
    assert _diagnosed_id(chat) == "unknown"


def test_a_case_reported_as_handled_is_settled() -> None:
    text = 'emb-cohost (ml.c6i.2xlarge): "Worker died" 건은 조치 완료입니다. 재배포 후 MemoryUtilization 최대 52%.'
    assert _diagnosed_id(text) == "unknown"


def test_an_error_that_does_not_occur_in_korean() -> None:
    text = "[preflight] quota check ... OK\nResourceLimitExceeded 안 남. 예전에 quota 0 리전에 배포한 적 있어서 넣은 체크."
    assert _diagnosed_id(text) == "unknown"


def test_a_columns_name_is_no_finding_and_a_count_of_none_after_a_name_denies_it() -> None:
    export = "\n".join(
        [
            "weekly export, nli-router on ml.c6i.2xlarge x2",
            'day,invocations,5xx,memory_util_max,log_count("Worker died")',
            "2026-12-01,1190310,0,62.0,0",
            "2026-12-02,1204987,0,61.8,0",
        ]
    )
    assert _diagnosed_id(export) == "unknown"
    assert (
        _diagnosed_id("nli-router on ml.c6i.2xlarge: restarts 0, Worker died 0, 4xx from a client bug.")
        == "unknown"
    )
    assert _diagnosed_id("nli-router on ml.c6i.2xlarge: Worker died 3 times since 09:00") == "F02"


def test_an_olive_pass_that_started_and_runs_on_for_minutes_is_the_optimizers_hang() -> None:
    log = [
        "$ olive run --config olive_nli.json",
        "[2026-11-20 10:00:01,100] [INFO] [engine.py:869:_run_pass] Running pass opt:OrtTransformersOptimization",
        "$ ps -o pid,etime,%cpu,cmd -p 4410",
        "    PID     ELAPSED %CPU CMD",
        "   4410       24:10 99.9 python -m olive run --config olive_nli.json",
    ]
    assert _diagnosed_id("\n".join(log)) == "F34"
    assert _diagnosed_id("\n".join(log).replace("24:10", "02:10")) == "unknown"  # two minutes: still running
    finished = [
        *log[:2],
        "[2026-11-20 10:00:41,000] [INFO] Pass opt:OrtTransformersOptimization finished in 40.1 seconds",
    ]
    assert _diagnosed_id("\n".join([*finished, *log[2:]])) == "unknown"


def test_a_table_of_one_percentile_a_line_is_a_run() -> None:
    text = "\n".join(
        [
            "부하테스트 (ml.c6i.xlarge 실시간, WORKERS=4, warmup 3)",
            "p50       19.8 ms",
            "p90       23.9 ms",
            "p99       1,402 ms",
            "max       1,530 ms",
        ]
    )
    assert compute(_evidence(text))["cold_tail"] is True
    assert _diagnosed_id(text) == "F33"


def test_serverless_spoken_of_beside_an_instance_type_leaves_the_kind_open() -> None:
    both = "nightly bench: the job has two templates, serverless 4096 MB and ml.c6i.xlarge real-time; not logged which ran"
    assert compute(_evidence(both))["serverless"] is None
    assert compute(_evidence("bench on ml.c6i.xlarge, real-time"))["serverless"] is False


def test_a_chats_minute_opens_a_persons_line() -> None:
    text = "\n".join(
        [
            "[08:51] tae: quota 아님? 이번 달에 m5.large 많이 씀",
            "[08:52] harin: quota 면 CreateEndpoint 에서 바로 ResourceLimitExceeded 나와요. 이건 40분 돌다가 FAILED 라 아님",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_triton_on_a_gpu_type_with_its_release_unknown_leaves_the_driver_open() -> None:
    stall = "\n".join(
        [
            '{"EndpointName": "tr-g6e", "EndpointStatus": "Failed", "FailureReason": "",',
            ' "CreationTime": "2026-12-03T15:01:00Z", "LastModifiedTime": "2026-12-03T15:01:01Z"}',
            "로그 그룹 없음. instance ml.g6e.2xlarge, image: IMAGE. quota 는 OK.",
        ]
    )
    found = diagnose(_evidence(stall.replace("IMAGE", "custom triton build (베이스 태그 기억 안남)")))
    assert found.id == "unknown" and any("F20" in line for line in found.evidence)
    assert _diagnosed_id(stall.replace("IMAGE", "HF pytorch-inference gpu (Triton 아님)")) == "F06"


def test_another_teams_channel_and_a_quoted_message_as_one_phrase() -> None:
    text = (
        "search팀 채널에서 봤는데 그쪽 triton 엔드포인트가 `System has unsupported display driver / cuda driver "
        "combination (error 803)` 로 죽었대. 우리 건 InService."
    )
    assert _diagnosed_id(text) == "unknown"


def test_a_postmortem_marked_concluded_in_parentheses() -> None:
    text = "\n".join(
        [
            "[포스트모템] NLI INT8 검토 결과 (종결)",
            "결과: dynamic INT8 모델 예측이 전부 neutral 로 나옴. 배포하지 않음, 운영은 fp32.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_a_year_is_read_from_a_date_not_from_a_memory_size() -> None:
    from datetime import datetime

    from workflows.diagnosis.dating import latest_date

    lines = ["- 11/19: MemorySizeInMB=2048 로 배포", "- 11/26: 6144 로 변경 후 검증"]
    latest = latest_date(lines, datetime(2026, 12, 7))
    assert latest is not None and latest[0].year == 2026


def test_a_forwarded_notice_of_a_named_teams_endpoint_concluded_with_no_impact() -> None:
    text = "\n".join(
        [
            "---------- Forwarded message ---------",
            '결제팀 엔드포인트가 EnableNetworkIsolation=True 에서 "Could not find a version that satisfies the '
            'requirement onnxruntime (from versions: none)" 로 실패했습니다.',
            "---------",
            "우리 엔드포인트는 EnableNetworkIsolation=False, InService.",
            "영향 없습니다.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_a_stack_failure_followed_by_a_completed_update_is_the_stacks_past() -> None:
    events = [
        "2026-12-04T02:18:44.902Z  emb-prod  UPDATE_COMPLETE  None",
        '2026-12-03T11:40:02.778Z  Endpoint  UPDATE_FAILED  Resource handler returned message: "The primary container '
        'for production variant AllTraffic did not pass the ping health check."',
        "2026-12-03T11:21:44.015Z  emb-prod  UPDATE_IN_PROGRESS  User Initiated",
    ]
    assert _diagnosed_id("\n".join(events)) == "unknown"
    assert _diagnosed_id("\n".join(events[1:])) == "F07"  # the failure is the latest event: it stands


def test_an_images_cuda_stated_past_every_default_driver_leaves_the_driver_open() -> None:
    stall = "\n".join(
        [
            "still Creating after 40 min, no log group. Image: our Triton build (CUDA VERSION), no InferenceAmiVersion set.",
            "EndpointStatus: Creating",
            "CreationTime: '2026-12-05T01:10:07.902000+00:00'",
            "LastModifiedTime: '2026-12-05T01:10:08.611000+00:00'",
        ]
    )
    found = diagnose(_evidence(stall.replace("VERSION", "13.2")))
    assert found.id == "unknown" and any("F20" in line for line in found.evidence)
    # A 12.x image runs on any 12.x driver (CUDA's minor version compatibility): the stall stands.
    assert _diagnosed_id(stall.replace("VERSION", "12.4")) == "F06"


def test_stack_events_with_a_space_before_the_time_and_its_zone() -> None:
    events = [
        "2026-12-03 10:14:52 UTC+0900  ic-stack   UPDATE_COMPLETE  -",
        '2026-11-26 17:40:11 UTC+0900  Component  CREATE_FAILED   Resource handler returned message: "There is not '
        'enough memory available for this Inference Component."',
    ]
    assert _diagnosed_id("\n".join(events)) == "unknown"


def test_a_time_word_inside_a_long_match_dates_it() -> None:
    text = "\n".join(
        [
            "$ time tar -I 'gzip -1' -cf model.tar.gz -C build/nli .",
            "real    0m4.61s",
            "예전에 gzip -9 로 63초 걸리던 거 level 1 로 바꾼 뒤 확인. 배포 정상.",
        ]
    )
    assert _diagnosed_id(text) == "unknown"


def test_quoted_items_listed_before_a_korean_denial_are_each_denied() -> None:
    from workflows.diagnosis.polarity import polarity

    line = '"Worker died", "Retry worker" 로그 없음. MemorySizeInMB 6144 라 메모리 부족도 아님.'
    assert polarity(line, 1, 12).polarity == "negated"


def test_an_incident_closed_and_a_note_for_the_record_settle() -> None:
    rows = "\n".join(
        [
            '"2026-11-25 09:31:02.114","[ONNXRuntimeError] : 2 : INVALID_ARGUMENT : Invalid input name: token_type_ids"',
            '"2026-11-25 09:41:15.330","status=200 latency_ms=24"',
        ]
    )
    assert _diagnosed_id(rows + "\n# verified: 0 errors since 09:40. closing the incident.") == "unknown"
    assert _diagnosed_id(rows + "\nJust posting this for the record.") == "unknown"
    assert _diagnosed_id(rows) == "F03"
