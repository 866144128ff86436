"""Teardown against moto's SageMaker and S3: everything of the run goes, nothing else does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from botocore.exceptions import ClientError

from tests.conftest import fast_spec
from tests.support.aws import Aws
from workflows import clock
from workflows.contracts import DeployResult, ErrorInfo, PipelineState
from workflows.errors import ResourceBusy
from workflows.janitor.cleanup import find_and_remove
from workflows.naming import TAG_KEEP, endpoint_config_name, endpoint_name, model_name, staging_prefix
from workflows.reports.markdown import render_report
from workflows.settings import Settings
from workflows.steps.teardown_endpoint import teardown

ROLE = "arn:aws:iam::123456789012:role/sm"
SETTINGS = Settings(bucket="bench-bucket", sagemaker_role_arn=ROLE)


def create_run_resources(sagemaker: Any, run_id: str, attempt: int) -> DeployResult:
    model, config, endpoint = (
        model_name(run_id, attempt),
        endpoint_config_name(run_id, attempt),
        endpoint_name(run_id, attempt),
    )
    sagemaker.create_model(ModelName=model, PrimaryContainer={"Image": "img"}, ExecutionRoleArn=ROLE)
    sagemaker.create_endpoint_config(
        EndpointConfigName=config,
        ProductionVariants=[
            {
                "VariantName": "primary",
                "ModelName": model,
                "InstanceType": "ml.c5.xlarge",
                "InitialInstanceCount": 1,
            }
        ],
    )
    sagemaker.create_endpoint(EndpointName=endpoint, EndpointConfigName=config)
    return DeployResult(
        endpoint_name=endpoint,
        endpoint_config_name=config,
        model_names=[model],
        instance_type="ml.c5.xlarge",
        created_at=clock.now(),
    )


def names(sagemaker: Any) -> set[str]:
    return (
        {e["EndpointName"] for e in sagemaker.list_endpoints()["Endpoints"]}
        | {c["EndpointConfigName"] for c in sagemaker.list_endpoint_configs()["EndpointConfigs"]}
        | {m["ModelName"] for m in sagemaker.list_models()["Models"]}
    )


def test_teardown_deletes_every_attempt_and_the_staging_folder(aws: Aws) -> None:
    sagemaker, s3 = aws.sagemaker, aws.s3
    # Given two deploy attempts of the run, another run's resources, and a staging folder
    deploy = create_run_resources(sagemaker, "run-a", 1)
    create_run_resources(sagemaker, "run-a", 2)
    other = create_run_resources(sagemaker, "run-b", 1)
    s3.put_object(Bucket="bench-bucket", Key=staging_prefix("run-a") + "model.onnx", Body=b"x")
    state = PipelineState(run_id="run-a", spec=fast_spec("bundled"), deploy=deploy)
    # When the run is torn down
    result = teardown(state, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    # Then only the other run's resources remain, and the staging folder is gone
    assert names(sagemaker) == {other.endpoint_name, other.endpoint_config_name, *other.model_names}
    assert len([d for d in result.deleted if d.startswith("endpoint/")]) == 2
    assert s3.list_objects_v2(Bucket="bench-bucket", Prefix=staging_prefix("run-a"))["KeyCount"] == 0
    assert result.remaining == []


def test_keep_endpoint_keeps_it_only_when_the_run_succeeded(aws: Aws) -> None:
    sagemaker, s3 = aws.sagemaker, aws.s3
    deploy = create_run_resources(sagemaker, "run-k", 1)
    state = PipelineState(run_id="run-k", spec=fast_spec("bundled", keep_endpoint=True), deploy=deploy)
    result = teardown(state, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    assert set(result.kept) == {deploy.endpoint_name, deploy.endpoint_config_name, *deploy.model_names}
    assert names(sagemaker) == set(result.kept)
    # And each kept resource is tagged so that the leak janitor leaves it alone, even when expired
    arn = sagemaker.describe_endpoint(EndpointName=deploy.endpoint_name)["EndpointArn"]
    assert {"Key": TAG_KEEP, "Value": "true"} in sagemaker.list_tags(ResourceArn=arn)["Tags"]
    later = clock.now() + timedelta(days=30)
    report = find_and_remove(sagemaker=sagemaker, s3=s3, bucket="bench-bucket", now=later)
    assert report.leaks == []  # (moto lists no inference components: that kind reports an error)
    assert names(sagemaker) == set(result.kept)
    # A failed run's endpoint is deleted even with keep_endpoint.
    failed = state.model_copy(update={"error": ErrorInfo(Error="InvocationFailed", Cause="x")})
    teardown(failed, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    assert names(sagemaker) == set()


def test_teardown_is_idempotent(aws: Aws) -> None:
    sagemaker, s3 = aws.sagemaker, aws.s3
    state = PipelineState(run_id="run-i", spec=fast_spec("bundled"))
    create_run_resources(sagemaker, "run-i", 1)
    teardown(state, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    again = teardown(state, sagemaker=sagemaker, s3=s3, settings=SETTINGS)
    assert again.deleted == []


class BusyOnce:
    """moto's SageMaker, except that the first DeleteEndpointConfig answers ResourceInUse (as AWS
    does while the endpoint it served is still Deleting)."""

    def __init__(self, sagemaker: Any) -> None:
        self._sagemaker = sagemaker
        self.refused = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sagemaker, name)

    def delete_endpoint_config(self, **kwargs: Any) -> Any:
        if not self.refused:
            self.refused += 1
            raise ClientError(
                {"Error": {"Code": "ResourceInUse", "Message": "Cannot delete: endpoint is Deleting"}},
                "DeleteEndpointConfig",
            )
        return self._sagemaker.delete_endpoint_config(**kwargs)


def test_teardown_lists_what_every_pass_deleted_not_only_the_last(aws: Aws) -> None:
    sagemaker, s3 = aws.sagemaker, aws.s3
    # Given a run whose endpoint config is busy on the first pass (the state machine retries ResourceBusy)
    deploy = create_run_resources(sagemaker, "run-r", 1)
    s3.put_object(Bucket="bench-bucket", Key=staging_prefix("run-r") + "model.onnx", Body=b"x")
    state = PipelineState(run_id="run-r", spec=fast_spec("bundled"), deploy=deploy)
    busy = BusyOnce(sagemaker)
    # When the first pass deletes the endpoint, the model and the staging folder but not the config
    with pytest.raises(ResourceBusy, match=r"deleted so far \(pass 1\): \['endpoint/"):
        teardown(state, sagemaker=busy, s3=s3, settings=SETTINGS)
    # And the retry deletes the config
    result = teardown(state, sagemaker=busy, s3=s3, settings=SETTINGS)
    # Then the result lists everything, from both passes, in the order it went
    assert result.passes == 2
    assert result.deleted == [
        f"endpoint/{deploy.endpoint_name}",
        f"model/{deploy.model_names[0]}",
        f"s3://bench-bucket/{staging_prefix('run-r')}",
        f"endpoint-config/{deploy.endpoint_config_name}",
    ]
    assert names(sagemaker) == set()
    # And the report's teardown section shows them all with the number of passes
    report = render_report(
        {
            "run_id": "run-r",
            "status": "SUCCEEDED",
            "schema_version": 2,
            "teardown": result.model_dump(mode="json"),
        }
    )
    line = next(x for x in report.splitlines() if x.startswith("- deleted"))
    assert line.startswith("- deleted over 2 passes (ResourceBusy retries): endpoint/")
    assert all(d in line for d in result.deleted)
