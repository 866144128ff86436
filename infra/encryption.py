"""The customer key of the artifact bucket and of everything deploybench writes.

The key is created (rotation on) or, with the ``deploybench:kmsKeyArn`` context, an existing one is
used. The bucket encrypts with it (SSE-KMS, bucket keys on, so S3 asks KMS once per bucket key rather
than once per object); the functions write every object with it (``workflows.aws.encryption``). Each
principal gets exactly the use it needs: the functions and the SageMaker role encrypt and decrypt
objects, and may let SageMaker create grants on the key for the volumes of the endpoints and jobs it
runs (``kms:GrantIsForAWSResource``), never grants of their own.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

OBJECT_USE = ("kms:Encrypt", "kms:Decrypt", "kms:GenerateDataKey", "kms:DescribeKey")
"""What reading and writing SSE-KMS objects takes (S3 calls KMS as the caller)."""
GRANT_FOR_SERVICE = ("kms:CreateGrant",)
"""CreateEndpointConfig/CreateProcessingJob with a key: SageMaker creates a grant as the caller."""


class ArtifactKey(Construct):
    """``self.key``: the key of the bucket and of everything deploybench writes."""

    def __init__(self, scope: Construct, construct_id: str, *, key_arn: str | None = None) -> None:
        super().__init__(scope, construct_id)
        self.imported = bool(key_arn)
        if key_arn:
            self.key: kms.IKey = kms.Key.from_key_arn(self, "Imported", key_arn)
        else:
            self.key = kms.Key(
                self,
                "Key",
                enable_key_rotation=True,
                description="deploybench: artifacts, results and the volumes of its endpoints and jobs",
                # Results and artifacts outlive the stack (the bucket is retained): so must their key.
                removal_policy=RemovalPolicy.RETAIN,
            )

    def grant_use(self, principal: iam.IGrantable, *, for_sagemaker: bool = True) -> None:
        """Encrypt and decrypt objects; with ``for_sagemaker``, let SageMaker create grants on the key for
        the volumes of the endpoints and jobs the principal creates or runs."""
        self.key.grant(principal, *OBJECT_USE)
        if not for_sagemaker:
            return
        principal.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(
                actions=list(GRANT_FOR_SERVICE),
                resources=[self.key.key_arn],
                conditions={"Bool": {"kms:GrantIsForAWSResource": "true"}},
            )
        )
