"""Teardown step: delete everything the run created, verify nothing is left.

Resources are found by the run's name prefix, not by what earlier steps returned, so a deploy
that failed half-way (model created, endpoint config rejected; components placed, scaling not yet
registered) is cleaned up too. Order follows dependencies, as the table of resource kinds lists
them (``workflows/hosting/resources.py``): scaling targets and policies, alarms, inference
components, endpoints, endpoint configs, models, then the staging folder (engine model repositories
included). The hosting mode says which kinds it may have created.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from workflows import clock
from workflows.aws.clients import aws_errors
from workflows.aws.storage import get_text, list_keys, put_text
from workflows.contracts import PipelineState, TeardownResult
from workflows.errors import ResourceBusy, TeardownIncomplete
from workflows.hosting import resources, routed
from workflows.hosting.modes import strategy_for
from workflows.hosting.region_staging import delete_staged, staged_left
from workflows.hosting.tagged import tagged_leftovers
from workflows.naming import TAG_KEEP, resource_prefix, results_prefix, staging_prefix
from workflows.settings import Settings

if TYPE_CHECKING:
    from types_boto3_application_autoscaling import ApplicationAutoScalingClient
    from types_boto3_cloudwatch import CloudWatchClient
    from types_boto3_resourcegroupstaggingapi import ResourceGroupsTaggingAPIClient
    from types_boto3_s3 import S3Client
    from types_boto3_sagemaker import SageMakerClient
# Each pass's deletions, kept beside the run's results: the state machine retries ResourceBusy by
# invoking the step again with the same input, so without it the result would list only the last
# pass's deletions (often nothing but the endpoint config, after the endpoint went on pass 1).
LEDGER_FILE = "teardown-passes.json"
# The SageMaker kinds deleted once the components are (an endpoint cannot go before its components).
_AFTER_COMPONENTS = tuple(
    k for k in resources.sagemaker_kinds(teardown=True) if k is not resources.INFERENCE_COMPONENT
)


def run_prefix(run_id: str) -> str:
    """``db-<run id>-``: with the dash, run ``r-1`` never matches the resources of run ``r-10``."""
    return f"{resource_prefix(run_id)}-"


class Kept:
    """What the user asked to keep: a successful run's endpoint, with everything it runs on."""

    def __init__(self, state: PipelineState) -> None:
        deploy = state.deploy
        if not state.spec.keep_endpoint or state.error is not None or deploy is None:
            self.names: set[str] = set()
            self.components: tuple[str, ...] = ()
            self.prefixes: tuple[str, ...] = ()
            return
        self.names = {deploy.endpoint_name, deploy.endpoint_config_name, *deploy.model_names}
        self.components = tuple(deploy.inference_components)
        self.names |= set(self.components)
        self.prefixes = tuple(deploy.staging_uris)

    def __call__(self, name: str) -> bool:
        """A kept name, or a scaling policy or alarm named after a kept component."""
        return name in self.names or any(name.startswith(f"{c}-") for c in self.components)

    def keeps_object(self, uri: str) -> bool:
        return any(uri.startswith(prefix) for prefix in self.prefixes)


def mark_kept(state: PipelineState, *, sagemaker: SageMakerClient) -> list[str]:
    """Tag what the user kept ``deploybench:keep=true`` so the leak janitor never deletes it.

    Every run's resources carry an expiry tag (``naming.tags``) for the janitor; only here, once
    the run has succeeded, is it known that the user asked to keep them.
    """
    deploy = state.deploy
    if not Kept(state).names or deploy is None:
        return []
    wanted = [
        (resources.ENDPOINT, deploy.endpoint_name),
        (resources.ENDPOINT_CONFIG, deploy.endpoint_config_name),
        *((resources.MODEL, m) for m in deploy.model_names),
        *((resources.INFERENCE_COMPONENT, c) for c in deploy.inference_components),
    ]
    marked = []
    for kind, name in wanted:
        with aws_errors(f"tag kept {kind.name} {name}"):
            arn = resources.arn_of(sagemaker, kind, name)
            sagemaker.add_tags(ResourceArn=arn, Tags=[{"Key": TAG_KEEP, "Value": "true"}])
        marked.append(kind.label(name))
    return marked


def kept_resources(state: PipelineState) -> set[str]:
    """Names of what teardown keeps (endpoint, config, models, components)."""
    return set(Kept(state).names)


def _staging_objects(s3: S3Client, bucket: str, run_id: str, kept: Kept) -> list[str]:
    uri = f"s3://{bucket}/{staging_prefix(run_id)}"
    return [key for key in list_keys(s3, uri) if not kept.keeps_object(f"s3://{bucket}/{key}")]


def _delete_objects(s3: S3Client, bucket: str, keys: list[str]) -> None:
    for start in range(0, len(keys), 1000):
        batch = keys[start : start + 1000]
        with aws_errors(f"delete staging objects of s3://{bucket}"):
            s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in batch], "Quiet": True})


def ledger_uri(bucket: str, run_id: str) -> str:
    return f"s3://{bucket}/{results_prefix(run_id)}{LEDGER_FILE}"


def earlier_passes(s3: S3Client, bucket: str, run_id: str) -> list[dict[str, Any]]:
    """What the earlier passes of this run's teardown deleted (an empty list on the first)."""
    uri = ledger_uri(bucket, run_id)
    # Listed first: a GET of a missing key answers 403, not 404, under prefix-scoped ListBucket.
    if uri.removeprefix(f"s3://{bucket}/") not in list_keys(s3, uri):
        return []
    try:
        passes = json.loads(get_text(s3, uri)).get("passes", [])
    except (ValueError, AttributeError):
        return []
    return [p for p in passes if isinstance(p, dict)]


def _record_pass(s3: S3Client, bucket: str, run_id: str, passes: list[dict[str, Any]], sweep: Any) -> None:
    record = {"at": clock.now().isoformat(), "deleted": list(sweep.deleted), "busy": list(sweep.busy)}
    put_text(s3, ledger_uri(bucket, run_id), json.dumps({"passes": [*passes, record]}), "application/json")


def _all_deleted(passes: list[dict[str, Any]], last: list[str]) -> list[str]:
    """Every pass's deletions in the order they happened, each once."""
    seen: dict[str, None] = {}
    for deleted in [*(p.get("deleted", []) for p in passes), last]:
        seen.update(dict.fromkeys(str(d) for d in deleted))
    return list(seen)


def teardown(
    state: PipelineState,
    *,
    sagemaker: SageMakerClient,
    s3: S3Client,
    settings: Settings,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    tagging: ResourceGroupsTaggingAPIClient | None = None,
    regional: routed.Regional | None = None,
) -> TeardownResult:
    """Delete in dependency order, then verify that nothing of the run remains.

    With a ``tagging`` client (Resource Groups Tagging API) the verification also looks for
    resources tagged with the run's id under another name (``workflows/hosting/tagged.py``). A run
    across Regions (``hosting.regions``) loses its router first and its other Regions' resources
    last, each Region's through ``regional`` (``workflows/hosting/routed.py``).

    Raises:
        ResourceBusy: something cannot be deleted yet (an endpoint still Creating, components still
            being deleted); the state machine retries.
        TeardownIncomplete: something of the run is still there after deleting.
    """
    prefix = run_prefix(state.run_id)
    kept = Kept(state)
    mode = strategy_for(state.spec.hosting.mode)
    sweep = resources.Sweep()
    others = routed.other_regions(state.spec.hosting)
    if others and regional is None:
        raise ValueError(
            f"tearing down a run across Regions ({', '.join(others)}) needs their clients; pass regional"
        )
    if others:
        routed.delete_routers(sweep, sagemaker, prefix, kept)
    if mode.uses_scaling:
        if autoscaling is None or cloudwatch is None:
            raise ValueError(
                f"tearing down {mode.mode} needs the autoscaling and cloudwatch clients; pass both"
            )
        resources.delete_scaling(sweep, autoscaling, prefix, kept)
        resources.delete_alarms(sweep, cloudwatch, prefix, kept)
    holding = resources.delete_components(sweep, sagemaker, prefix, kept) if mode.uses_components else set()
    for kind in _AFTER_COMPONENTS:
        resources.delete_named(sweep, sagemaker, kind, prefix, kept, holding)
    if others and regional is not None:
        routed.delete_in_regions(sweep, others, regional, prefix, kept)
    sweep.deleted += delete_staged(s3, settings.bucket, others, state.run_id)
    keys = _staging_objects(s3, settings.bucket, state.run_id, kept)
    if keys:
        _delete_objects(s3, settings.bucket, keys)
        sweep.deleted.append(f"s3://{settings.bucket}/{staging_prefix(state.run_id)}")
    passes = earlier_passes(s3, settings.bucket, state.run_id)
    if sweep.busy:
        _record_pass(s3, settings.bucket, state.run_id, passes, sweep)
        deleted = _all_deleted(passes, sweep.deleted)
        raise ResourceBusy(
            f"cannot delete yet (still changing state): {', '.join(sweep.busy)}; deleted so far "
            f"(pass {len(passes) + 1}): {deleted}."
        )
    remaining = remaining_resources(
        state.run_id, sagemaker=sagemaker, kept=kept, s3=s3, bucket=settings.bucket,
        autoscaling=autoscaling if mode.uses_scaling else None,
        cloudwatch=cloudwatch if mode.uses_scaling else None,
        components=mode.uses_components,
    )  # fmt: skip
    if others and regional is not None:
        remaining += routed.remaining_routed(sagemaker, others, regional, prefix, kept)
    remaining += staged_left(s3, settings.bucket, others, state.run_id)
    if tagging is not None:
        remaining += tagged_leftovers(
            state.run_id,
            prefix=prefix,
            tagging=tagging,
            sagemaker=sagemaker,
            cloudwatch=cloudwatch,
            kept=kept,
        )
    if remaining:
        raise TeardownIncomplete(f"still present after teardown: {', '.join(remaining)}.")
    mark_kept(state, sagemaker=sagemaker)
    if passes:
        _record_pass(s3, settings.bucket, state.run_id, passes, sweep)
    return TeardownResult(
        deleted=_all_deleted(passes, sweep.deleted),
        kept=sorted(kept.names),
        remaining=[],
        passes=len(passes) + 1,
    )


def remaining_resources(
    run_id: str,
    *,
    sagemaker: SageMakerClient,
    kept: Kept,
    s3: S3Client | None = None,
    bucket: str | None = None,
    autoscaling: ApplicationAutoScalingClient | None = None,
    cloudwatch: CloudWatchClient | None = None,
    components: bool = False,
) -> list[str]:
    """Resources of the run that exist and are not being deleted, except those kept on purpose.

    Scaling targets, alarms, components and staging objects are checked when their clients (or
    ``components``) are given.
    """
    prefix = run_prefix(run_id)
    remaining: list[str] = []
    if autoscaling is not None:
        remaining += [
            resources.SCALABLE_TARGET.label(r)
            for r in resources.scaling_targets(autoscaling, prefix)
            if not kept(r.removeprefix(resources.IC_RESOURCE))
        ]
    if cloudwatch is not None:
        remaining += [resources.ALARM.label(a) for a in resources.alarms(cloudwatch, prefix) if not kept(a)]
    for kind in resources.sagemaker_kinds(teardown=True):
        if components or kind is not resources.INFERENCE_COMPONENT:
            remaining += resources.remaining_named(sagemaker, kind, prefix, kept)
    if s3 is not None and bucket is not None:
        remaining += [f"s3://{bucket}/{key}" for key in _staging_objects(s3, bucket, run_id, kept)]
    return remaining
