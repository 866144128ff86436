"""A run across Regions with instance pools over CPU and GPU types: the move to the next Region stages every
device's artifact there, each Model of that Region reads its own device's copy, and teardown deletes them all."""

from __future__ import annotations

from typing import Any

from tests.handlers.test_pools_across_devices import BOTH, CPU_ARTIFACT, MIXED
from tests.support.aws import Aws
from tests.support.hosting import ARTIFACT, BUCKET, request, stubbed
from workflows.aws.clients import split_s3_uri
from workflows.hosting.region_staging import delete_staged, region_bucket, staged_left
from workflows.settings import Settings
from workflows.steps.deploy_endpoint import deploy

OTHER = "us-west-2"
ARN = f"arn:aws:sagemaker:{OTHER}:123456789012:endpoint/db-run-1-a2"
SETTINGS = Settings(bucket=BUCKET, sagemaker_role_arn="arn:aws:iam::123456789012:role/sm", region="us-east-1")


def test_every_devices_artifact_is_staged_in_the_next_region_and_teardown_deletes_every_copy(
    aws: Aws,
) -> None:
    # Given the GPU artifact and the CPU artifact packed in the primary Region's bucket
    for uri, body in ((ARTIFACT, b"gpu artifact"), (CPU_ARTIFACT, b"cpu artifact")):
        aws.s3.put_object(Bucket=BUCKET, Key=split_s3_uri(uri)[1], Body=body)
    hosting = {
        "mode": "realtime",
        "instance_type_fallbacks": MIXED,
        "regions": ["us-east-1", OTHER],
        "cross_region": {"max_invocations_per_instance": 40},
    }
    req = request(hosting, attempt=2).model_copy(update={"pack": BOTH})
    req = req.model_copy(update={"attempt": req.attempt.model_copy(update={"region_index": 1})})
    models: list[dict[str, Any]] = []
    # When the attempt deploys in the next Region
    with stubbed("sagemaker") as (away, stub):
        for _ in range(2):
            stub.add_response("create_model", {"ModelArn": ARN}, None)
        stub.add_response("create_endpoint_config", {"EndpointConfigArn": ARN}, None)
        stub.add_response("create_endpoint", {"EndpointArn": ARN}, None)
        away.meta.events.register(
            "provide-client-params.sagemaker.CreateModel", lambda params, **_: models.append(params)
        )
        result = deploy(req, sagemaker=aws.sagemaker, settings=SETTINGS, s3=aws.s3, regional=lambda _: away)
    # Then each device's Model reads its own device's copy, in that Region's bucket
    assert result.region == OTHER and result.device_models == {
        "gpu": "db-run-1-a2-m0",
        "cpu": "db-run-1-a2-m1",
    }
    copies = [m["PrimaryContainer"]["ModelDataUrl"] for m in models]
    assert len(set(copies)) == 2
    assert all(split_s3_uri(uri)[0] == region_bucket(BUCKET, OTHER) for uri in copies)
    bodies = [aws.s3.get_object(Bucket=b, Key=k)["Body"].read() for b, k in map(split_s3_uri, copies)]
    assert bodies == [b"gpu artifact", b"cpu artifact"]
    # And teardown's deletion of the run's staged objects leaves no copy in that Region
    assert sorted(staged_left(aws.s3, BUCKET, [OTHER], "run-1")) == sorted(copies)
    delete_staged(aws.s3, BUCKET, [OTHER], "run-1")
    assert staged_left(aws.s3, BUCKET, [OTHER], "run-1") == []
