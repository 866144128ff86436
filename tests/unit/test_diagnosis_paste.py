"""Pasted evidence: forms found in one text, and the context they carry weighing the ranking."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from workflows.diagnosis import diagnose
from workflows.diagnosis.paste import evidence_from_paste

WORKER_DIED = (
    "2026-09-09T11:05:51,330 [WARN ] W-9000-model com.amazonaws.ml.mms.wlm.BatchAggregator - "
    "Load model failed: model, error: Worker died."
)


def described(**fields: object) -> str:
    return json.dumps({"EndpointName": "e", "EndpointConfigName": "e-cfg", **fields}, indent=2)


def test_a_failed_endpoints_describe_output_alone_names_the_capacity_stall() -> None:
    # Given only DescribeEndpoint of an endpoint that failed with no instance and no reason
    text = described(
        EndpointStatus="Failed",
        CreationTime="2026-10-02T13:20:45+00:00",
        LastModifiedTime="2026-10-02T14:11:02+00:00",
    )
    # When it is pasted
    evidence = evidence_from_paste(text, origin="paste")
    diagnosis = diagnose(evidence)
    # Then it is read as a describe output and named F06, with the next-instance-type remedy
    assert evidence.forms == ["describe-endpoint"]
    assert (diagnosis.id, diagnosis.action) == ("F06", "next_instance_type")


def test_a_creating_endpoint_is_a_stall_only_past_the_threshold_from_when_it_was_observed() -> None:
    created = datetime(2026, 11, 28, 8, 14, 3, tzinfo=UTC)
    text = described(
        EndpointStatus="Creating",
        CreationTime=created.isoformat(),
        LastModifiedTime=(created + timedelta(seconds=1)).isoformat(),
    )
    # Given the same output observed 4 and 30 minutes after creation
    early = evidence_from_paste(text, origin="p", observed_at=created + timedelta(minutes=4))
    late = evidence_from_paste(text, origin="p", observed_at=created + timedelta(minutes=30))
    # Then only the late one is a stall
    assert diagnose(early).id == "unknown"
    assert diagnose(late).id == "F06"


def test_worker_died_is_serverless_oom_or_worker_memory_by_the_describe_output_beside_it() -> None:
    serverless = described(
        EndpointStatus="InService",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "CurrentServerlessConfig": {"MemorySizeInMB": 2048}}
        ],
    )
    instances = described(
        EndpointStatus="InService",
        ProductionVariants=[
            {"VariantName": "AllTraffic", "CurrentInstanceCount": 1, "DesiredInstanceCount": 1}
        ],
    )
    # Given the same model-server line next to a serverless and an instance endpoint's description
    on_serverless = diagnose(evidence_from_paste(f"{serverless}\n{WORKER_DIED}", origin="p"))
    on_instances = diagnose(evidence_from_paste(f"{instances}\n{WORKER_DIED}", origin="p"))
    alone = diagnose(evidence_from_paste(WORKER_DIED, origin="p"))
    on_an_instance = diagnose(
        evidence_from_paste(f"AllTraffic/i-0a1b2c3d4e5f60718 {WORKER_DIED}", origin="p")
    )
    # Then the context decides: F14 (more memory) vs F02 (one worker); a log stream naming an EC2
    # instance is no serverless endpoint; alone, neither is named and both are the candidates
    assert (on_serverless.id, on_serverless.action) == ("F14", "next_memory_size")
    assert (on_instances.id, on_instances.action) == ("F02", "single_worker")
    assert on_an_instance.id == "F02"
    assert alone.id == "unknown"
    assert {a.id for a in alone.alternatives} == {"F02", "F14"}
    assert any(line.startswith("[candidate] F02") for line in alone.evidence)


def test_co_hosted_containers_weigh_for_the_worker_memory_entry() -> None:
    model = json.dumps(
        {"ModelName": "m", "Containers": [{"ContainerHostname": "a"}, {"ContainerHostname": "b"}]}
    )
    # Given the worker death with and without the two-container model
    alone = diagnose(evidence_from_paste(WORKER_DIED, origin="p"))
    co_hosted = diagnose(evidence_from_paste(f"{model}\n{WORKER_DIED}", origin="p"))
    # Then the co-host raises F02's confidence and says why
    assert co_hosted.id == "F02"
    assert co_hosted.confidence > alone.confidence
    assert any(line.startswith("[fact] co_hosted") for line in co_hosted.evidence)


def test_a_missing_transformers_is_the_lmi_entry_only_on_lmi() -> None:
    text = "ModuleNotFoundError: No module named 'transformers'"
    # Given the same import error on an LMI image, on the HF DLC, and with no context
    lmi = diagnose(evidence_from_paste(f"INFO  PyProcess W-1-model-stdout: djl_python\n{text}", origin="p"))
    hf = diagnose(evidence_from_paste(text, origin="p", hosting_mode="realtime"))
    # Then LMI names F17 (the LMI package set); the DLC names F01 (add the module)
    assert lmi.id == "F17"
    assert (hf.id, hf.details["module"]) == ("F01", "transformers")


def test_an_execution_history_gives_the_failed_states_phase() -> None:
    history = {
        "events": [
            {"type": "TaskStateEntered", "stateEnteredEventDetails": {"name": "ConvertToOnnx"}},
            {
                "type": "LambdaFunctionTimedOut",
                "lambdaFunctionTimedOutEventDetails": {"error": "States.Timeout"},
            },
        ]
    }
    # Given a timeout in the convert state's history, and the same timeout in warm-up
    evidence = evidence_from_paste(json.dumps(history), origin="p")
    warm = json.dumps(history).replace("ConvertToOnnx", "WarmUpShapes")
    # Then the phase is read from the history, and decides whether it is the optimizer bound
    assert (evidence.phase, evidence.error_names, evidence.forms) == (
        "convert",
        ["States.Timeout"],
        ["step-functions-error"],
    )
    assert diagnose(evidence).id == "F34"
    assert diagnose(evidence_from_paste(warm, origin="p")).id == "unknown"


def test_the_step_functions_console_pair_with_a_lambda_payload() -> None:
    payload = {
        "errorType": "CapacityStall",
        "errorMessage": "endpoint e on ml.g5.12xlarge is Creating with no ProductionVariants",
    }
    # Given the console's Error / Cause labels, the cause a Lambda error payload
    evidence = evidence_from_paste(f"Error\nCapacityStall\nCause\n{json.dumps(payload)}\n", origin="p")
    # Then it is one Step Functions error with its message
    assert evidence.forms == ["step-functions-error"]
    assert evidence.error_names == ["CapacityStall"]
    assert diagnose(evidence).id == "F06"


def test_text_that_is_no_known_form_is_read_as_text_and_broken_json_is_not_lost() -> None:
    # Given JSON cut off mid-way and a line of prose quoting a signature
    text = '{"EndpointStatus": "Fail\nthe log said: Error parsing text-format inference.ModelConfig: 3:1: Expected ","'
    # When it is pasted
    evidence = evidence_from_paste(text, origin="p")
    # Then both lines are read as text, and the signature still names its entry
    assert evidence.forms == ["text"]
    assert diagnose(evidence).id == "F19"


def test_a_record_whose_list_fields_hold_text_is_read_without_a_crash() -> None:
    # Given a describe-endpoint record typed by hand: ProductionVariants and InstancePools as text
    pasted = (
        "EndpointName: emb-prod\n"
        "EndpointStatus: InService\n"
        "ProductionVariants: see the console\n"
        "CreationTime: '2026-11-02T10:00:00Z'\n"
        "LastModifiedTime: '2026-11-02T10:09:00Z'\n"
    )
    # When it is diagnosed, Then it answers (an InService endpoint names no failure) instead of raising
    assert diagnose(evidence_from_paste(pasted, origin="paste")).id == "unknown"


def test_a_chat_export_with_iso_times_keeps_its_thread_order() -> None:
    # Given a chat export whose exporter wrote ISO times instead of Slack's seconds, newest first
    messages = [
        {"ts": "2026-10-11T08:20:00", "user": "bo", "text": "never mind, it came back InService"},
        {"ts": "2026-10-11T08:14:02", "user": "al", "text": "endpoint emb-prod still Creating after 50 min?"},
        {"ts": "someday", "user": "cy", "text": "thanks"},
    ]
    # When it is read, Then it is a chat, in time order, not a traceback
    evidence = evidence_from_paste(json.dumps({"messages": messages[:2]}), origin="chat")
    texts = [item.text for item in evidence.items]
    assert texts.index(next(t for t in texts if "still Creating" in t)) < texts.index(
        next(t for t in texts if "came back" in t)
    )
    # And a time that is neither keeps the export's own order
    assert diagnose(evidence_from_paste(json.dumps({"messages": messages}), origin="chat")).id


def test_a_comment_between_log_lines_is_read_as_a_person_s_prose() -> None:
    # Given healthy MMS log lines with a reviewer's comment that asks about, then denies, a failure
    text = (
        "2026-10-04T09:00:01,100 [INFO ] main com.amazonaws.ml.mms.ModelServer - Number of workers: 1\n"
        "2026-10-04T09:00:09,220 [INFO ] W-9000-model-stdout com.amazonaws.ml.mms.wlm.WorkerLifeCycle - Model loaded\n"
        '2026-10-04T09:01:00,010 [INFO ] W-9000-model ACCESS_LOG - /10.0.1.7:40110 "POST /invocations HTTP/1.1" 200 19\n'
        "# on-call: Worker died? not once this week.\n"
    )
    # When it is diagnosed
    diagnosis = diagnose(evidence_from_paste(text, origin="paste"))
    # Then the comment is no log line: its question names nothing
    assert diagnosis.id == "unknown"
