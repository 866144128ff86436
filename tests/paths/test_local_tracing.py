"""A traced local endpoint: its sampled requests land in the local logs' traces group, labelled as local, and
``diagnose --traces`` reads them as it reads SageMaker's."""

from __future__ import annotations

import contextlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from tests.support.local_sagemaker import (
    ONE_TEXT,
    ROLE,
    container,
    endpoint_settled,
    runtime,
    upload_artifact,
)
from workflows.diagnosis.evidence import Evidence
from workflows.diagnosis.traces import add_trace_events
from workflows.local.engine import LocalEngine
from workflows.local.sagemaker.tracing import LOCAL_SOURCE
from workflows.naming import endpoint_traces_log_group


def test_a_traced_local_endpoint_writes_its_sampled_requests_where_diagnose_reads_them(
    engine: LocalEngine, tiny_artifact: Path, tmp_path: Path
) -> None:
    # Given a local endpoint whose config traces half of its requests (sent through botocore's validation)
    model_uri = upload_artifact(engine, tiny_artifact, "models/tiny/model.tar.gz", tmp_path)
    sagemaker = engine.client("sagemaker")
    sagemaker.create_model(
        ModelName="ep-traced", ExecutionRoleArn=ROLE, PrimaryContainer=container(model_uri)
    )
    sagemaker.create_endpoint_config(
        EndpointConfigName="ep-traced",
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": "ep-traced",
                "InstanceType": "ml.c6i.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
        TracingConfig={"EnableTracing": True, "InitialSamplingPercentage": 50},
    )
    sagemaker.create_endpoint(EndpointName="ep-traced", EndpointConfigName="ep-traced")
    assert endpoint_settled(sagemaker, "ep-traced")[-1]["EndpointStatus"] == "InService"
    # When four requests are made, two of them with a body the model cannot read
    client = runtime(engine)
    for body in (ONE_TEXT, b"not json", ONE_TEXT, b"not json"):
        with contextlib.suppress(ClientError):  # the unreadable bodies answer a ModelError
            client.invoke_endpoint(EndpointName="ep-traced", Body=body, ContentType="application/json")
    # Then every second request was traced, each record saying it was written locally
    logs = engine.client("logs")
    events = logs.filter_log_events(logGroupName=endpoint_traces_log_group("ep-traced"))["events"]
    records = [json.loads(e["message"]) for e in events]
    assert len(records) == 2
    assert {r["source"] for r in records} == {LOCAL_SOURCE}
    assert all(r["request"]["payload"] == "not json" and r["statusCode"] >= 400 for r in records)
    # And the diagnosis reads them as the endpoint's error responses
    evidence = Evidence()
    read = add_trace_events(
        evidence, logs=logs, endpoint_name="ep-traced", since=datetime.now(UTC) - timedelta(minutes=5)
    )
    assert read == 2
    assert [i.source for i in evidence.items] == ["invocation", "invocation"]
    assert all(
        i.text.startswith(f"InvokeEndpoint returned {records[0]['statusCode']}") for i in evidence.items
    )


@pytest.mark.parametrize("percent", [0, 100])
def test_sampling_by_count_traces_none_or_every_request(percent: int) -> None:
    from workflows.local.sagemaker.tracing import LocalTracer

    tracer = LocalTracer(shipper=object())  # type: ignore[arg-type]
    config = {"TracingConfig": {"EnableTracing": True, "InitialSamplingPercentage": percent}}
    assert [tracer.sampled("ep", config) for _ in range(4)] == [percent == 100] * 4
