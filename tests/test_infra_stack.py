"""The synthesized stack: one function per FUNCTIONS row, the bucket's protections, outputs, alarms, triggers."""

from __future__ import annotations

import json
from typing import Any

import pytest

import state_machines
from tests.infra_support import Synthesized, synthesize
from workflows.naming import (
    OUTPUT_BUCKET,
    OUTPUT_DEPLOY_PIPELINE_ARN,
    STACK_NAME,
    function_name,
    state_machine_name,
)


@pytest.fixture(scope="module")
def synth() -> Synthesized:
    return synthesize()


def functions_by_name(synth: Synthesized) -> dict[str, dict[str, Any]]:
    return {
        r["Properties"]["FunctionName"]: r["Properties"]
        for r in synth.of_type("AWS::Lambda::Function").values()
    }


def test_every_function_of_the_table_is_deployed_with_its_handler_and_limits(synth: Synthesized) -> None:
    # Given the synthesized functions
    deployed = functions_by_name(synth)
    # Then there is exactly one per FUNCTIONS row, named like the local engine names it
    assert set(deployed) == {function_name(f.placeholder) for f in state_machines.FUNCTIONS}
    for row in state_machines.FUNCTIONS:
        props = deployed[function_name(row.placeholder)]
        assert props["MemorySize"] == row.memory_mb
        assert props["Timeout"] == row.timeout_s
        assert props["TracingConfig"] == {"Mode": "Active"}
        # And container rows run the image with their handler as the command; zip rows name it as Handler
        if row.container:
            assert props["PackageType"] == "Image"
            assert props["ImageConfig"]["Command"] == [row.handler]
            assert props["EphemeralStorage"] == {"Size": 10240}
        else:
            assert props["Handler"] == row.handler
            assert props["Runtime"] == "python3.11"


def test_zip_functions_share_one_code_asset_and_container_functions_one_image(synth: Synthesized) -> None:
    deployed = functions_by_name(synth).values()
    zip_keys = {json.dumps(p["Code"]["S3Key"]) for p in deployed if p.get("PackageType") != "Image"}
    images = {json.dumps(p["Code"]["ImageUri"]) for p in deployed if p.get("PackageType") == "Image"}
    assert len(zip_keys) == 1
    assert len(images) == 1


def test_functions_get_powertools_and_deploybench_settings_from_their_environment(synth: Synthesized) -> None:
    bucket, _ = artifact_bucket(synth)
    for name, props in functions_by_name(synth).items():
        env = props["Environment"]["Variables"]
        assert env["POWERTOOLS_SERVICE_NAME"] == "deploybench", name
        assert env["POWERTOOLS_METRICS_NAMESPACE"] == "deploybench", name
        assert env["POWERTOOLS_LOG_LEVEL"] == "INFO", name
        assert env["DEPLOYBENCH_BUCKET"] == {"Ref": bucket}, name
        assert "Fn::GetAtt" in env["DEPLOYBENCH_SAGEMAKER_ROLE_ARN"], name
    assert (
        "DEPLOYBENCH_REDEPLOY_STATE_MACHINE_ARN"
        in functions_by_name(synth)["deploybench-start-redeploy"]["Environment"]["Variables"]
    )
    assert (
        "DEPLOYBENCH_ALERT_TOPIC_ARN"
        in functions_by_name(synth)["deploybench-janitor"]["Environment"]["Variables"]
    )


def test_outputs_the_cli_reads_exist(synth: Synthesized) -> None:
    # The CLI finds the deployed pipeline and bucket through these outputs of the Deploybench stack.
    outputs = synth.template["Outputs"]
    assert (synth.outdir / f"{STACK_NAME}.template.json").exists()
    assert outputs[OUTPUT_DEPLOY_PIPELINE_ARN]["Value"]["Ref"] in synth.of_type(
        "AWS::StepFunctions::StateMachine"
    )
    assert outputs[OUTPUT_BUCKET]["Value"]["Ref"] in synth.of_type("AWS::S3::Bucket")


def artifact_bucket(synth: Synthesized) -> tuple[str, dict[str, Any]]:
    [(logical_id, resource)] = [
        (k, v)
        for k, v in synth.of_type("AWS::S3::Bucket").items()
        if "LoggingConfiguration" in v["Properties"]
    ]
    return logical_id, resource["Properties"]


def test_artifact_bucket_is_encrypted_private_versioned_and_logged(synth: Synthesized) -> None:
    _, props = artifact_bucket(synth)
    rules = props["BucketEncryption"]["ServerSideEncryptionConfiguration"]
    # SSE-KMS with the stack's key, bucket keys on (tests/test_encryption.py checks the key and its use)
    assert rules[0]["ServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    assert rules[0]["BucketKeyEnabled"] is True
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["VersioningConfiguration"] == {"Status": "Enabled"}
    assert "DestinationBucketName" in props["LoggingConfiguration"]
    # And it sends its events to EventBridge (the redeploy trigger) without a notification custom resource
    assert props["NotificationConfiguration"]["EventBridgeConfiguration"] == {"EventBridgeEnabled": True}
    assert not [r for r in synth.resources.values() if r["Type"] == "Custom::S3BucketNotifications"]


def test_artifact_bucket_refuses_requests_without_tls(synth: Synthesized) -> None:
    logical_id, _ = artifact_bucket(synth)
    [policy] = [
        p
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical_id}
    ]
    denies = [s for s in policy["Properties"]["PolicyDocument"]["Statement"] if s["Effect"] == "Deny"]
    assert any(s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in denies)


def test_temporary_prefixes_expire_and_failed_uploads_are_aborted(synth: Synthesized) -> None:
    _, props = artifact_bucket(synth)
    rules = {r["Id"]: r for r in props["LifecycleConfiguration"]["Rules"]}
    assert rules["ExpireStaging"]["Prefix"] == "staging/"
    assert rules["ExpireStaging"]["ExpirationInDays"] <= 7
    assert rules["ExpireSources"]["Prefix"] == "sources/"
    assert rules["ExpireNoncurrentVersions"]["NoncurrentVersionExpiration"]["NoncurrentDays"] > 0
    assert rules["AbortIncompleteUploads"]["AbortIncompleteMultipartUpload"]["DaysAfterInitiation"] == 1
    assert all(r["Status"] == "Enabled" for r in rules.values())


def test_state_machines_are_named_traced_and_log_everything(synth: Synthesized) -> None:
    machines = synth.of_type("AWS::StepFunctions::StateMachine").values()
    assert {m["Properties"]["StateMachineName"] for m in machines} == {
        state_machine_name(n) for n in state_machines.names()
    }
    for machine in machines:
        props = machine["Properties"]
        assert props["TracingConfiguration"] == {"Enabled": True}
        assert props["LoggingConfiguration"]["Level"] == "ALL"
        assert props["StateMachineType"] == "STANDARD"


def test_scheduler_starts_the_sweep_with_the_validated_sweep_file(synth: Synthesized) -> None:
    from workflows.sweeps.spec import load_sweep

    schedules = synth.of_type("AWS::Scheduler::Schedule").values()
    rules = synth.of_type("AWS::Events::Rule").values()
    assert not [r for r in rules if "ScheduleExpression" in r["Properties"]], "no legacy scheduled rules"
    sweep_machine = next(
        k
        for k, v in synth.of_type("AWS::StepFunctions::StateMachine").items()
        if v["Properties"]["StateMachineName"] == state_machine_name("benchmark_sweep")
    )
    [sweep] = [
        s["Properties"] for s in schedules if s["Properties"]["Target"]["Arn"] == {"Ref": sweep_machine}
    ]
    assert sweep["ScheduleExpression"].startswith("cron(")
    assert sweep["Target"]["RetryPolicy"]["MaximumRetryAttempts"] == 3
    assert "DeadLetterConfig" in sweep["Target"]
    payload = json.loads(sweep["Target"]["Input"])
    assert payload["sweep"] == load_sweep("examples/sweep-nightly.yaml").model_dump(
        mode="json", exclude_none=True
    )
    # And the janitor has its own schedule
    janitor = [s for s in schedules if "Janitor" in json.dumps(s["Properties"]["Target"]["Arn"])]
    assert janitor and janitor[0]["Properties"]["ScheduleExpression"] == "rate(1 hour)"


def test_alarms_cover_failed_executions_leaks_endpoint_errors_and_dead_letters(synth: Synthesized) -> None:
    alarms = [a["Properties"] for a in synth.of_type("AWS::CloudWatch::Alarm").values()]
    text = json.dumps(alarms)
    for name in state_machines.names():
        assert f"{name}: an execution failed" in text
    leaked = [a for a in alarms if a.get("MetricName") == "LeakedResources"]
    assert leaked and leaked[0]["Namespace"] == "deploybench"
    assert leaked[0]["Dimensions"] == [{"Name": "service", "Value": "deploybench"}]
    assert "Invocation5XXErrors" in text
    assert "ApproximateNumberOfMessagesVisible" in text
    # And every alarm notifies the encrypted alert topic
    [topic] = synth.of_type("AWS::SNS::Topic")
    assert all(a["AlarmActions"] == [{"Ref": topic}] for a in alarms)
    assert "KmsMasterKeyId" in synth.props(topic)
    assert synth.of_type("AWS::CloudWatch::Dashboard")


def test_the_stack_is_composed_of_one_construct_per_concern(synth: Synthesized) -> None:
    tree = json.loads((synth.outdir / "tree.json").read_text())
    children = set(tree["tree"]["children"][STACK_NAME]["children"])
    assert {
        "Artifacts",
        "SageMaker",
        "Alerts",
        "Functions",
        "StateMachines",
        "Triggers",
        "Monitoring",
    } <= children
