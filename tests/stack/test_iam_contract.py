"""IAM evaluated offline: the modes the local engine cannot run, through their real handlers and steps.

Every other handler and path test is checked by the ``tests/support/iam.py`` plugin after it
runs; these tests make the requests of Triton, LMI, the GPU benchmark job, scale to zero and
component logs themselves and assert on the evaluation, so each defect it guards is named here.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest

from state_machines import FUNCTIONS
from tests.conftest import fast_spec
from tests.support.aws import Aws
from tests.support.hosting import BUCKET, ROLE, request, stubbed
from tests.support.iam import SAGEMAKER_ROLE, Binding, Denial, allowed, denials, principal, sagemaker_role_id
from tests.support.iam_actions import Access, Where
from tests.support.iam_recording import RECORDER, acting_as
from tests.support.iam_sagemaker import image_pull, log_writes, sagemaker_accesses
from tests.support.infra import synthesize
from workflows import clock, naming
from workflows.aws import clients as aws
from workflows.aws.storage import upload_folder
from workflows.cli import images as images_command
from workflows.contracts import BenchmarkJobRequest, BenchmarkPlan, DeployOverrides, DeployResult
from workflows.conversion.manifest import MANIFEST_FILE
from workflows.diagnosis.collect import add_component_log_events
from workflows.diagnosis.evidence import Evidence
from workflows.hosting import resources
from workflows.hosting.scale_to_zero import register_scaling, scaling_plan
from workflows.hosting.triton_repository import TOKENIZER_WHEEL
from workflows.images.table import image_table
from workflows.local.lambda_seam import LocalLambdaContext

REGION = "us-east-1"
STEP_ARN = "arn:aws:autoscaling:us-east-1:123456789012:scalingPolicy:2:resource/x:policyName/step"
COMPONENT = "db-run-1-a1-ic0"
# A GPU type moto's SageMaker accepts.
GPU = "ml.g4dn.xlarge"
SETTINGS_ENV = (("DEPLOYBENCH_BUCKET", BUCKET), ("DEPLOYBENCH_SAGEMAKER_ROLE_ARN", ROLE))


def sagemaker_role(region: str = REGION) -> Any:
    """The stack's SageMaker role as deployed with the test settings in ``region``."""
    return principal(sagemaker_role_id(synthesize()), Binding("123456789012", region, SETTINGS_ENV))


def context(placeholder: str) -> LocalLambdaContext:
    row = next(f for f in FUNCTIONS if f.placeholder == placeholder)
    name = naming.function_name(placeholder)
    return LocalLambdaContext(
        name, f"arn:aws:lambda:{REGION}:123456789012:function:{name}", row.memory_mb, row.timeout_s
    )


def handed_to_sagemaker(action: str) -> list[Access]:
    """What SageMaker did with the execution role for the requests recorded so far."""
    found = []
    for recorded in RECORDER.peek():
        if recorded.function:
            found += sagemaker_accesses(recorded, Where(REGION, "123456789012"))[1]
    return [a for a in found if a.action == action]


def test_a_denial_names_the_action_the_resource_and_the_role() -> None:
    # Given a request the SageMaker role has no grant for (a prefix the pipeline never hands it)
    role = sagemaker_role()
    outside = Access("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": "sweeps/x/"})
    inside = Access("s3:ListBucket", f"arn:aws:s3:::{BUCKET}", {"s3:prefix": "artifacts/x/"})
    # Then the evaluator allows the granted prefix, refuses the other and a missing s3:prefix key
    assert allowed(role, inside)
    assert not allowed(role, outside)
    assert not allowed(role, Access("s3:ListBucket", f"arn:aws:s3:::{BUCKET}"))
    # And a denial says who, what and where
    text = str(Denial(SAGEMAKER_ROLE, outside))
    assert "s3:ListBucket" in text and f"arn:aws:s3:::{BUCKET}" in text and SAGEMAKER_ROLE in text


def test_the_gpu_benchmark_job_inputs_are_listed_and_read_by_the_sagemaker_role(aws: Aws) -> None:
    # Given the StartBenchmarkJob handler on a GPU run (its code and config inputs are S3Prefix
    # folders under staging/<run>/, defect 1)
    from lambdas.start_benchmark_job import handler

    spec = fast_spec("bundled", benchmark={"runner": "processing-job"})
    deployed = DeployResult(endpoint_name="db-run-1-a1", endpoint_config_name="db-run-1-a1",
                            model_names=["db-run-1-a1-m0"], instance_type=GPU, created_at=clock.now())  # fmt: skip
    plan = BenchmarkPlan(runner="processing-job", reason="gpu", planned_s=60, job_name="db-run-1-bench",
                         job_instance_type=GPU)  # fmt: skip
    event = BenchmarkJobRequest(run_id="run-1", spec=spec, deploy=deployed, plan=plan)
    # When it starts the job
    handler(event.model_dump(mode="json"), context("StartBenchmarkJobFunctionArn"))
    # Then SageMaker lists each input folder under staging/, and every call is allowed
    listed = [a.context["s3:prefix"] for a in handed_to_sagemaker("s3:ListBucket")]
    assert listed and all(p.startswith(naming.staging_prefix("run-1")) for p in listed)
    assert [str(d) for d in denials(RECORDER.peek())] == []


@pytest.mark.parametrize("mode", ["triton", "lmi"])
def test_triton_and_lmi_model_folders_are_listed_and_read_by_the_sagemaker_role(
    mode: str, aws: Aws, tiny_artifact: Path, tiny_bert: Path
) -> None:
    # Given the run's converted folder in staging/ and its model folder in sources/
    upload_folder(aws.s3, tiny_artifact, f"s3://{BUCKET}/{naming.staging_prefix('run-1')}")
    upload_folder(aws.s3, tiny_bert, f"s3://{BUCKET}/{naming.source_prefix('run-1')}")
    aws.s3.put_object(
        Bucket=BUCKET, Key=f"staging/run-1/{MANIFEST_FILE}", Body=(tiny_artifact / MANIFEST_FILE).read_bytes()
    )
    if mode == "triton":  # what pack stages for the tokenizer ensemble (the real wheel: tests/models)
        aws.s3.put_object(Bucket=BUCKET, Key=f"staging/run-1/{TOKENIZER_WHEEL}", Body=b"PK wheel bytes")
    hosting = {"mode": mode, "instance_type_fallbacks": [GPU]}
    event = request(hosting, source=f"s3://{BUCKET}/sources/run-1/", overrides=DeployOverrides())
    from lambdas.deploy_endpoint import handler

    # When the Deploy handler writes the mode's folder and creates the model (ModelDataSource S3Prefix)
    handler(event.model_dump(mode="json"), context("DeployEndpointFunctionArn"))
    # Then SageMaker lists and reads that folder under staging/<run>/, and every call is allowed
    listed = [a.context["s3:prefix"] for a in handed_to_sagemaker("s3:ListBucket")]
    assert listed == [f"{naming.staging_prefix('run-1')}a1/{mode}/"]
    assert [str(d) for d in denials(RECORDER.peek())] == []


def test_scale_to_zero_may_create_and_remove_the_target_tracking_alarms() -> None:
    # Given a scale-to-zero component's scaling plan (the calls the wait loop makes, defect 6), on
    # clients that check each call against the service model (moto has no component dimension)
    hosting = request(
        {"mode": "scale-to-zero", "instance_type_fallbacks": ["ml.g6.12xlarge"], "max_copies": 2}
    ).spec.hosting
    plan = scaling_plan(hosting, COMPONENT)
    target = plan["register_scalable_target"]
    policies = [plan["target_tracking"]["PolicyName"], plan["step_scaling"]["PolicyName"]]
    with stubbed("application-autoscaling") as (autoscaling, aas), stubbed("cloudwatch") as (cloudwatch, cw):
        aas.add_response("register_scalable_target", {})
        aas.add_response("put_scaling_policy", {"PolicyARN": STEP_ARN})
        aas.add_response("put_scaling_policy", {"PolicyARN": STEP_ARN})
        cw.add_response("put_metric_alarm", {})
        aas.add_response("describe_scalable_targets", {"ScalableTargets": [{
            "ServiceNamespace": "sagemaker", "ResourceId": target["ResourceId"],
            "ScalableDimension": target["ScalableDimension"], "MinCapacity": 0, "MaxCapacity": 2,
            "RoleARN": ROLE, "CreationTime": clock.now()}]})  # fmt: skip
        aas.add_response("describe_scaling_policies", {"ScalingPolicies": [{
            "PolicyARN": STEP_ARN, "PolicyName": name, "ServiceNamespace": "sagemaker",
            "ResourceId": target["ResourceId"], "ScalableDimension": target["ScalableDimension"],
            "PolicyType": "StepScaling", "CreationTime": clock.now()} for name in policies]})  # fmt: skip
        aas.add_response("delete_scaling_policy", {})
        aas.add_response("delete_scaling_policy", {})
        aas.add_response("deregister_scalable_target", {})
        cw.add_response("describe_alarms", {"MetricAlarms": [{"AlarmName": plan["alarm"]["AlarmName"]}]})
        cw.add_response("delete_alarms", {})
        # When PlaceInferenceComponents registers it and Teardown removes it
        with acting_as("PlaceInferenceComponentsFunctionArn"):
            register_scaling(
                plan,
                autoscaling=autoscaling,
                cloudwatch=cloudwatch,
                tags=naming.tags("run-1", fast_spec("bundled")),
            )
        sweep = resources.Sweep()
        with acting_as("TeardownEndpointFunctionArn"):
            resources.delete_scaling(sweep, autoscaling, naming.resource_prefix("run-1"), lambda _: False)
            resources.delete_alarms(sweep, cloudwatch, naming.resource_prefix("run-1"), lambda _: False)
    # Then Application Auto Scaling's TargetTracking-inference-component/... alarms are within the grant
    assert plan["target_tracking"]["PolicyType"] == "TargetTrackingScaling"
    assert [str(d) for d in denials(RECORDER.peek())] == []


def test_component_logs_are_written_by_sagemaker_and_read_by_diagnosis(aws: Aws) -> None:
    # Given a component whose container logged to its own group (defect 5)
    logs = boto3.client("logs", region_name=REGION)
    group = naming.component_log_group(COMPONENT)
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName=f"{COMPONENT}/i-0a1b")
    logs.put_log_events(logGroupName=group, logStreamName=f"{COMPONENT}/i-0a1b",
                        logEvents=[{"timestamp": int(time.time() * 1000), "message": "CUDA out of memory"}])  # fmt: skip
    evidence = Evidence(hosting_mode="inference-component")
    evidence.inference_components.append({"InferenceComponentName": COMPONENT})
    # When diagnosis collects the endpoint's evidence
    with acting_as("DiagnoseFailureFunctionArn"):
        read = add_component_log_events(
            evidence, logs=logs, endpoint_name="db-run-1-a1", since=datetime.now(UTC) - timedelta(hours=1)
        )
    # Then it read the component's group, and was allowed to
    assert read == 1 and any("CUDA out of memory" in item.text for item in evidence.items)
    assert [str(d) for d in denials(RECORDER.peek())] == []
    # And SageMaker, creating the component, may write there as the execution role
    role = sagemaker_role()
    refused = [
        a.describe()
        for a in log_writes(Where(REGION, "123456789012"), group, f"{COMPONENT}/i-0a1b")
        if not allowed(role, a)
    ]
    assert refused == []


def deployed_images(region: str) -> list[str]:
    """Every image URI a mode deploys in ``region`` (``deploybench images``): each build, on each device."""
    table = images_command.deployed_images(region)
    uris = {table["benchmark_job"]} | {
        uri
        for devices in table["modes"].values()
        for entry in devices.values()
        for uri in entry["builds"].values()
    }
    return sorted(uri for uri in uris if uri)


def unpullable(region: str) -> list[str]:
    role = sagemaker_role(region)
    return [
        f"{a.describe()} ({image})"
        for image in deployed_images(region)
        for a in image_pull(image)
        if not allowed(role, a)
    ]


def test_every_image_is_pullable_by_the_sagemaker_role_in_the_default_registry_region() -> None:
    assert deployed_images(REGION)
    assert unpullable(REGION) == []


@pytest.mark.parametrize("region", sorted(image_table().get("accounts", {})))
def test_every_image_is_pullable_by_the_sagemaker_role_in_every_registry_region(region: str) -> None:
    assert unpullable(region) == []


def test_the_polling_and_deploy_functions_outlast_their_longest_call() -> None:
    # DescribeEndpoint's vLLM probe: one runtime call of read + connect timeout, no retry (defect 7)
    by_placeholder = {f.placeholder: f for f in FUNCTIONS}
    probe_s = aws.RUNTIME_READ_TIMEOUT_S + aws.RUNTIME_CONNECT_TIMEOUT_S
    assert by_placeholder["DescribeEndpointFunctionArn"].timeout_s >= probe_s + 30
    # Deploy copies whole model folders for LMI and Triton: Lambda's maximum, like PrepareRedeploy's copies
    assert (
        by_placeholder["DeployEndpointFunctionArn"].timeout_s
        == by_placeholder["ReadUploadedSpecFunctionArn"].timeout_s
        == 900
    )


def test_the_benchmark_job_may_invoke_an_inference_component_as_the_reference_authorizes_it() -> None:
    # Given the Service Authorization Reference's InvokeEndpoint row: the endpoint and the component
    from tests.stack.test_iam_tags import authorization_facts

    actions = {k.lower(): v for k, v in authorization_facts()["sagemaker"]["Actions"].items()}
    assert actions["invokeendpoint"]["Resources"] == ["endpoint", "inference-component"]
    # When the benchmark job (the SageMaker role) invokes a component on its endpoint
    from tests.support.iam_actions import accesses
    from tests.support.iam_recording import Request

    invoked = accesses(
        Request(
            None,
            "sagemaker-runtime",
            "InvokeEndpoint",
            REGION,
            {"EndpointName": "db-run-1-a1", "InferenceComponentName": COMPONENT, "Body": b"{}"},
        ),
        Where(REGION, "123456789012"),
    )
    # Then the evaluator asks for both resources, and the role is allowed both
    assert sorted(a.resource.rsplit(":", 1)[1] for a in invoked) == [
        "endpoint/db-run-1-a1",
        f"inference-component/{COMPONENT}",
    ]
    role = sagemaker_role()
    assert [a.describe() for a in invoked if not allowed(role, a)] == []
    # But not a component outside the db-* names
    assert not allowed(
        role,
        Access(
            "sagemaker:InvokeEndpoint",
            Where(REGION, "123456789012").sagemaker("inference-component", "other"),
        ),
    )


def test_the_benchmark_jobs_customer_key_is_granted_to_its_role_and_no_other_key() -> None:
    # Given the job's volume and outputs encrypted with the stack's key (VolumeKmsKeyId, KmsKeyId)
    from tests.stack.test_encryption import key_arn
    from tests.support.iam_sagemaker import processing_key_use

    where = Where(REGION, "123456789012")
    stack_key = key_arn()
    params = {
        "ProcessingResources": {"ClusterConfig": {"VolumeKmsKeyId": stack_key}},
        "ProcessingOutputConfig": {"KmsKeyId": stack_key, "Outputs": []},
    }
    used = processing_key_use(where, params)
    # Then the job's role (the SageMaker role) may create the volume's grant, and encrypt and decrypt
    assert {a.action for a in used} == {"kms:CreateGrant", "kms:GenerateDataKey", "kms:Decrypt"}
    role = sagemaker_role()
    assert [a.describe() for a in used if not allowed(role, a)] == []
    # But a grant that is not for an AWS resource, and any other key, are refused
    assert not allowed(role, Access("kms:CreateGrant", stack_key, {"kms:GrantIsForAWSResource": "false"}))
    other = processing_key_use(
        where,
        {
            "ProcessingResources": {
                "ClusterConfig": {"VolumeKmsKeyId": "1234abcd-12ab-34cd-56ef-1234567890ab"}
            }
        },
    )
    assert other and not any(allowed(role, a) for a in other)


def test_the_report_may_read_the_endpoints_utilisation_and_checkspec_the_users_training_plan() -> None:
    # Given the utilisation query WriteReport sends for an instance-backed endpoint, and CheckSpec's
    # read of the training plan a spec names
    from tests.stack.test_iam_tags import role_of
    from tests.support.iam_actions import accesses
    from tests.support.iam_recording import Request

    where = Where(REGION, "123456789012")
    read = accesses(Request(None, "cloudwatch", "GetMetricData", REGION, {"MetricDataQueries": []}), where)
    plan = f"arn:aws:sagemaker:{REGION}:123456789012:training-plan/endpoints-g5"
    described = accesses(
        Request(None, "sagemaker", "DescribeTrainingPlan", REGION, {"TrainingPlanName": plan}), where
    )
    # Then each role is allowed what it sends, and the report no training plan
    report, check = role_of("WriteReportFunctionArn"), role_of("CheckSpecFunctionArn")
    assert [a.describe() for a in read if not allowed(report, a)] == []
    assert [a.describe() for a in described if not allowed(check, a)] == []
    assert not any(allowed(report, a) for a in described)
