"""The artifact bucket: staging folders, model artifacts, results, sweep reports, uploaded models.

Encrypted with the stack's KMS key (SSE-KMS, bucket keys on; its access-log bucket stays SSE-S3, the
only encryption S3 server access logging delivers to), TLS only, public access blocked, versioned (a model upload's version names
its redeploy), access-logged, with lifetimes for what is temporary. EventBridge notifications
are switched on in the bucket's own CloudFormation properties, not through CDK's notification
custom resource (a Lambda function that would need its own role and exemptions).
"""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_kms as kms
from aws_cdk import aws_s3 as s3
from constructs import Construct

from infra.constants import (
    ABORT_MULTIPART_DAYS,
    NONCURRENT_EXPIRY_DAYS,
    SOURCES_EXPIRY_DAYS,
    SOURCES_PREFIX,
    STAGING_EXPIRY_DAYS,
    STAGING_PREFIX,
)

ACCESS_LOG_DAYS = 90


class ArtifactBucket(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, key: kms.IKey) -> None:
        super().__init__(scope, construct_id)
        self.access_logs = self._build_access_logs()
        self.bucket = s3.Bucket(
            self,
            "Bucket",
            encryption=s3.BucketEncryption.KMS,
            encryption_key=key,
            bucket_key_enabled=True,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            versioned=True,
            server_access_logs_bucket=self.access_logs,
            server_access_logs_prefix="artifact-bucket/",
            lifecycle_rules=self._lifecycle(),
            # Results and uploaded models outlive the stack; delete the bucket by hand when done.
            removal_policy=RemovalPolicy.RETAIN,
        )
        cfn = self.bucket.node.default_child
        assert isinstance(cfn, s3.CfnBucket)
        cfn.add_property_override(
            "NotificationConfiguration.EventBridgeConfiguration.EventBridgeEnabled", True
        )

    def _build_access_logs(self) -> s3.Bucket:
        return s3.Bucket(
            self,
            "AccessLogs",
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            lifecycle_rules=[
                s3.LifecycleRule(id="ExpireAccessLogs", expiration=Duration.days(ACCESS_LOG_DAYS))
            ],
            removal_policy=RemovalPolicy.RETAIN,
        )

    @staticmethod
    def _lifecycle() -> list[s3.LifecycleRule]:
        return [
            # Teardown deletes a run's staging folder and the janitor removes stale ones; this is the backstop.
            s3.LifecycleRule(
                id="ExpireStaging", prefix=STAGING_PREFIX, expiration=Duration.days(STAGING_EXPIRY_DAYS)
            ),
            # Model folders uploaded for a run or snapshotted by a redeploy are needed only while it runs.
            s3.LifecycleRule(
                id="ExpireSources", prefix=SOURCES_PREFIX, expiration=Duration.days(SOURCES_EXPIRY_DAYS)
            ),
            # Versioning keeps every overwritten artifact; old versions matter only for a while.
            s3.LifecycleRule(
                id="ExpireNoncurrentVersions",
                noncurrent_version_expiration=Duration.days(NONCURRENT_EXPIRY_DAYS),
                expired_object_delete_marker=True,
            ),
            s3.LifecycleRule(
                id="AbortIncompleteUploads",
                abort_incomplete_multipart_upload_after=Duration.days(ABORT_MULTIPART_DAYS),
            ),
        ]
