"""Which SageMaker resources a function may create, change or remove: deploybench's own, by name and tag.

Every statement is scoped to ``db-*`` names (``Scope.sagemaker_arns``). On top of the name:

- a create must carry ``deploybench:managed=true`` in its request (``aws:RequestTag``);
- a delete, update or stop acts only on a resource that already carries that tag
  (``aws:ResourceTag``). SageMaker's Service Authorization Reference lists ``aws:ResourceTag/${TagKey}``
  for the endpoint, endpoint-config, model, inference-component and processing-job resource types,
  so every Delete*, Update* and Stop* action on them honours it (cfn-lint's copy of the reference,
  ``cfnlint/data/AdditionalSpecs/Policies.json``, is checked by ``tests/stack/test_iam_tags.py``). A ``db-*`` resource someone else
  made, or made before it was tagged, cannot be removed by a function;
- reads (Describe*, ListTags, InvokeEndpoint) need the name only: teardown verifies and the janitor
  reads the tags of anything named ``db-*`` to decide whether it is deploybench's.

Tagging is where a tag condition could be undone: a function allowed to tag any ``db-*`` resource
``deploybench:managed=true`` could then delete it. SageMaker authorizes the Tags of a create call as
``sagemaker:AddTags`` on the new resource too (with ``aws:RequestTag``/``aws:TagKeys``; the resource
has no tags yet, so ``aws:ResourceTag`` cannot be asked for), so AddTags cannot be dropped. It is
granted twice, narrowly:

- in the create statement, under its condition (``deploybench:managed=true`` in the request): the
  create-time tagging. SageMaker offers no key that tells a create's AddTags from a later one, so a
  role that creates can also mark an existing untagged ``db-*`` resource managed. Only the
  pipeline-step profile creates (and a state machine with a processing-job task, ``infra/grants.py``);
  the janitor and the other profiles cannot tag at all, and the name prefix still bounds it;
- on a resource already tagged managed, with ``deploybench:keep`` as the only key: teardown's keep
  mark (``workflows/steps/teardown_endpoint.py``), which cannot make a foreign resource managed nor
  re-label one (no run id or expiry).

UpdateEndpoint is authorized on the endpoint and on the endpoint config it moves to; both are
deploybench's and tagged, so the one condition covers both.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import aws_iam as iam

from workflows.naming import TAG_KEEP, TAG_MANAGED

MANAGED_REQUEST = {"StringEquals": {f"aws:RequestTag/{TAG_MANAGED}": "true"}}
MANAGED_RESOURCE = {f"aws:ResourceTag/{TAG_MANAGED}": "true"}

# Create calls must tag what they create as deploybench's: the janitor finds leaks by that tag.
SAGEMAKER_CREATE = [
    "sagemaker:CreateModel",
    "sagemaker:CreateEndpointConfig",
    "sagemaker:CreateEndpoint",
    "sagemaker:CreateInferenceComponent",
    "sagemaker:CreateProcessingJob",
]
SAGEMAKER_READ = [
    "sagemaker:ListTags",
    "sagemaker:DescribeModel",
    "sagemaker:DescribeEndpointConfig",
    "sagemaker:DescribeEndpoint",
    "sagemaker:DescribeInferenceComponent",
    "sagemaker:DescribeProcessingJob",
    "sagemaker:InvokeEndpoint",
]
# Changing or removing a resource: only one tagged as deploybench's.
SAGEMAKER_CHANGE = [
    "sagemaker:DeleteModel",
    "sagemaker:DeleteEndpointConfig",
    "sagemaker:UpdateEndpoint",
    "sagemaker:UpdateEndpointWeightsAndCapacities",
    "sagemaker:DeleteEndpoint",
    "sagemaker:UpdateInferenceComponent",
    "sagemaker:UpdateInferenceComponentRuntimeConfig",
    "sagemaker:DeleteInferenceComponent",
    "sagemaker:StopProcessingJob",
]
SAGEMAKER_CLEANUP = [
    "sagemaker:DeleteModel",
    "sagemaker:DeleteEndpointConfig",
    "sagemaker:DeleteEndpoint",
    "sagemaker:DeleteInferenceComponent",
    "sagemaker:StopProcessingJob",
]


# Inference routers: the router security page of the developer guide lists aws:ResourceTag/${TagKey}
# for DescribeInferenceRouter, UpdateInferenceRouter, DeleteInferenceRouter and InvokeInferenceRouter
# (cfn-lint's copy of the Service Authorization Reference predates routers, so it is not checked there).
ROUTER_READ = ["sagemaker:DescribeInferenceRouter"]
ROUTER_CLEANUP = ["sagemaker:DeleteInferenceRouter"]


def creates(resources: list[str], actions: list[str] = SAGEMAKER_CREATE) -> iam.PolicyStatement:
    """``actions`` on ``resources`` only with ``deploybench:managed=true`` among the request's tags."""
    return iam.PolicyStatement(actions=actions, resources=resources, conditions=MANAGED_REQUEST)


def changes(resources: list[str], actions: list[str] = SAGEMAKER_CHANGE) -> iam.PolicyStatement:
    """``actions`` on ``resources`` only where the resource is tagged ``deploybench:managed=true``."""
    return iam.PolicyStatement(
        actions=actions, resources=resources, conditions={"StringEquals": MANAGED_RESOURCE}
    )


def keep_mark(resources: list[str]) -> iam.PolicyStatement:
    """AddTags of ``deploybench:keep`` alone, on a resource already deploybench's."""
    return iam.PolicyStatement(
        actions=["sagemaker:AddTags"],
        resources=resources,
        conditions={
            "StringEquals": MANAGED_RESOURCE,
            "ForAllValues:StringEquals": {"aws:TagKeys": [TAG_KEEP]},
        },
    )


def manage(resources: list[str]) -> list[iam.PolicyStatement]:
    """What a pipeline step may do to SageMaker resources named ``resources``."""
    return [
        # A create's tags are authorized as AddTags on the new resource, under the create's condition.
        creates(resources, [*SAGEMAKER_CREATE, "sagemaker:AddTags"]),
        keep_mark(resources),
        iam.PolicyStatement(actions=SAGEMAKER_READ, resources=resources),
        changes(resources),
    ]


def statement(
    actions: list[str], resources: list[str], **conditions: Mapping[str, object]
) -> iam.PolicyStatement:
    """``actions`` on ``resources``, under ``conditions`` (operator to condition block) where given."""
    return iam.PolicyStatement(actions=actions, resources=resources, conditions=conditions or None)
