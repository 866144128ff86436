"""``deploybench doctor``: this environment against the lock CI tested; with ``--aws``, read-only
checks, in your account, of what no offline test can prove.

The environment part names the versions that matter (the AWS SDK, the serving and conversion stacks,
the local engine) and every package installed at another version than ``requirements.lock``'s: what
runs is then not what the tests ran.

Offline, the tests prove the template's policies, the image table and the bundles against AWS's own
contracts. Only the account can say whether the deployed stack's roles exist and trust the right
service, whether IAM (with any boundary or SCP the account adds) allows the key calls, whether the
serving images are pullable in the region, and whether the instance types have endpoint quota.
Every call here is a read (Describe*, Get*, List*, SimulatePrincipalPolicy); nothing is created.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

from workflows.cli.lockfile import KEY_PACKAGES, PROJECT_LOCK, PackageState, installed_version, package_states
from workflows.cli.options import JsonOption, ProfileOption, RegionOption, StackOption
from workflows.cli.output import LOGIN, aws_session, fail, guarded, session_region
from workflows.naming import OUTPUT_BUCKET, PREFIX, STACK_NAME
from workflows.readiness.findings import FAIL, OK, UNVERIFIED, DoctorCheck

if TYPE_CHECKING:
    from boto3.session import Session
    from types_boto3_cloudformation import CloudFormationClient
    from types_boto3_iam import IAMClient
    from types_boto3_iam.type_defs import ContextEntryTypeDef, RoleTypeDef
    from types_boto3_service_quotas import ServiceQuotasClient

DEFAULT_INSTANCE_TYPES = "ml.c6i.xlarge,ml.g5.xlarge"


def _denied(error: Exception) -> str:
    code = getattr(error, "response", {}).get("Error", {}).get("Code", type(error).__name__)
    return f"could not be checked: {code} ({str(error)[:160]})"


def _trusts(role: Mapping[str, Any], service: str) -> bool:
    document = role.get("AssumeRolePolicyDocument") or {}
    if isinstance(document, str):
        document = json.loads(document)
    return service in json.dumps(document)


def stack_roles(cloudformation: CloudFormationClient, iam: IAMClient, stack_name: str) -> list[RoleTypeDef]:
    """The IAM roles of the stack (``describe_stack_resources``), as ``get_role`` returns them."""
    resources = cloudformation.describe_stack_resources(StackName=stack_name)["StackResources"]
    names = [r["PhysicalResourceId"] for r in resources if r["ResourceType"] == "AWS::IAM::Role"]
    return [iam.get_role(RoleName=name)["Role"] for name in names]


def check_roles(roles: Sequence[Mapping[str, Any]]) -> tuple[list[DoctorCheck], Mapping[str, Any] | None]:
    """The SageMaker execution role exists and trusts sagemaker.amazonaws.com; the others trust their service."""
    sagemaker = next((r for r in roles if _trusts(r, "sagemaker.amazonaws.com")), None)
    found = [
        DoctorCheck(
            "roles",
            "SageMaker execution role",
            OK if sagemaker else FAIL,
            f"{sagemaker['RoleName']} trusts sagemaker.amazonaws.com"
            if sagemaker
            else "no role of the stack trusts sagemaker.amazonaws.com: redeploy the stack (cdk deploy)",
        )
    ]
    lambdas = [r for r in roles if _trusts(r, "lambda.amazonaws.com")]
    found.append(
        DoctorCheck(
            "roles",
            "function roles",
            OK if lambdas else FAIL,
            f"{len(lambdas)} roles trust lambda.amazonaws.com"
            if lambdas
            else "no role of the stack trusts lambda.amazonaws.com: redeploy the stack (cdk deploy)",
        )
    )
    return found, sagemaker


def _split(uri: str) -> tuple[str, str, str, str]:
    """``(account, region, repository, tag)`` of ``<account>.dkr.ecr.<region>.<suffix>/<repo>:<tag>``."""
    host, _, rest = uri.partition("/")
    parts = host.split(".")
    repository, _, tag = rest.partition(":")
    return parts[0], parts[3], repository, tag


def key_permissions(
    *, bucket: str, images: list[str], partition: str
) -> list[tuple[str, str, dict[str, str]]]:
    """(action, resource, context) SageMaker performs as the execution role on a run's behalf."""
    logs = f"arn:{partition}:logs:{{region}}:{{account}}:log-group:/aws/sagemaker/Endpoints/{PREFIX}-doctor:*"
    wanted = [
        ("s3:GetObject", f"arn:{partition}:s3:::{bucket}/staging/doctor/model.tar.gz", {}),
        ("s3:ListBucket", f"arn:{partition}:s3:::{bucket}", {"s3:prefix": "staging/doctor/"}),
        ("logs:PutLogEvents", logs, {}),
    ]
    for uri in images:
        account, region, repository, _ = _split(uri)
        wanted.append(
            ("ecr:BatchGetImage", f"arn:{partition}:ecr:{region}:{account}:repository/{repository}", {})
        )
    return wanted


def check_permissions(
    iam: IAMClient, role: Mapping[str, Any], wanted: list[tuple[str, str, dict[str, str]]], *, region: str
) -> list[DoctorCheck]:
    """``iam simulate-principal-policy`` for each key call: what the account's IAM really decides."""
    account = role["Arn"].split(":")[4]
    found = []
    for action, template, context in wanted:
        resource = template.format(region=region, account=account)
        entries: list[ContextEntryTypeDef] = [
            {"ContextKeyName": k, "ContextKeyValues": [v], "ContextKeyType": "string"}
            for k, v in context.items()
        ]
        try:
            [result] = iam.simulate_principal_policy(
                PolicySourceArn=role["Arn"],
                ActionNames=[action],
                ResourceArns=[resource],
                ContextEntries=entries,
            )["EvaluationResults"]
        except Exception as error:  # a denied or unsupported simulation is reported, never fatal
            found.append(DoctorCheck("permissions", f"{action} {resource}", UNVERIFIED, _denied(error)))
            continue
        decision = result["EvalDecision"]
        found.append(
            DoctorCheck(
                "permissions",
                f"{action} {resource}",
                OK if decision == "allowed" else FAIL,
                f"{role['RoleName']}: {decision}"
                + (
                    ""
                    if decision == "allowed"
                    else " (a permissions boundary or SCP may deny it; see the IAM policy simulator)"
                ),
            )
        )
    return found


def check_images(ecr_for: Any, uris: list[str]) -> list[DoctorCheck]:
    """``ecr describe-images`` on each image, in its registry and region (where the registry lets you)."""
    found = []
    for uri in uris:
        account, region, repository, tag = _split(uri)
        try:
            ecr_for(region).describe_images(
                registryId=account, repositoryName=repository, imageIds=[{"imageTag": tag}]
            )
        except Exception as error:
            code = getattr(error, "response", {}).get("Error", {}).get("Code", "")
            missing = code in ("ImageNotFoundException", "RepositoryNotFoundException")
            found.append(
                DoctorCheck(
                    "images",
                    uri,
                    FAIL if missing else UNVERIFIED,
                    f"{code}: the image is not published there; pick another build (hosting.image_version) or region"
                    if missing
                    else _denied(error),
                )
            )
            continue
        found.append(DoctorCheck("images", uri, OK, "published"))
    return found


def check_quotas(
    quotas: ServiceQuotasClient, instance_types: list[str], *, region: str = "us-east-1"
) -> list[DoctorCheck]:
    """The account's SageMaker "<type> for endpoint usage" quota of each instance type (0 blocks a
    deploy: F39), read as preflight reads it (``workflows.preflight.quotas``), with the command that
    asks for more."""
    from workflows.preflight.quotas import endpoint_quota, increase_command, read_quotas

    names = {name: endpoint_quota(name) for name in instance_types}
    try:
        found_quotas = read_quotas(quotas, list(names.values()))
    except Exception as error:  # a denied or unsupported read is reported, never fatal
        return [DoctorCheck("quotas", t, UNVERIFIED, _denied(error)) for t in instance_types]
    found = []
    for name, quota_name in names.items():
        quota = found_quotas.get(quota_name)
        if quota is None:
            found.append(DoctorCheck("quotas", name, UNVERIFIED, f"no '{quota_name}' quota listed"))
            continue
        enough = quota.value > 0
        detail = f"'{quota_name}' ({quota.code}) {quota.value:g} instances"
        if not enough:
            detail += f": request an increase: {increase_command(quota, 1, region)}"
        found.append(DoctorCheck("quotas", name, OK if enough else FAIL, detail))
    if len(found) > 1 and all(check.status == FAIL for check in found):
        found.append(
            DoctorCheck(
                "quotas",
                "instance pools",
                FAIL,
                "every listed type has a zero endpoint quota: neither instance pools nor deploybench's "
                "fallbacks can find an instance (a quota limit, not a capacity stall, F06); request an "
                "increase for at least one type",
            )
        )
    return found


def _stack(cloudformation: CloudFormationClient, stack_name: str, region: str) -> Any:
    """The deployed stack, or exit 2 naming it, the region and the fix."""
    from botocore.exceptions import ClientError

    try:
        return cloudformation.describe_stacks(StackName=stack_name)["Stacks"][0]
    except ClientError as error:
        if "does not exist" not in str(error):
            raise
        fail(
            f"CloudFormation stack {stack_name} does not exist in {region}.",
            fix="deploy it (`npx aws-cdk@2 deploy`, README 'AWS quick start'), or pass --stack-name / --region",
            kind="StackNotFound",
        )


def doctor(
    session: Session,
    *,
    stack_name: str,
    instance_types: list[str],
    cloudformation: CloudFormationClient | None = None,
    spec: Any = None,
) -> list[DoctorCheck]:
    """Every check against the account and region of ``session`` (a boto3 Session).

    Args:
        cloudformation: a CloudFormation client (default: the session's).
        spec: a RunSpec whose VPC settings to check too (``workflows.readiness.network``).
    """
    from workflows.cli.images import deployed_images

    region = session.region_name
    cloudformation, iam = cloudformation or session.client("cloudformation"), session.client("iam")
    stack = _stack(cloudformation, stack_name, region)
    bucket = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}.get(OUTPUT_BUCKET, "")
    found, role = check_roles(stack_roles(cloudformation, iam, stack_name))
    modes = deployed_images(region)["modes"]
    images = sorted(
        {row["default"] for devices in modes.values() for row in devices.values() if row["default"]}
    )
    if role is not None:
        partition = session.get_partition_for_region(region)
        wanted = key_permissions(bucket=bucket, images=images, partition=partition)
        found += check_permissions(iam, role, wanted, region=region)
    found += check_images(lambda r: session.client("ecr", region_name=r), images)
    found += check_quotas(session.client("service-quotas"), instance_types, region=region)
    if spec is not None:
        from workflows.readiness.network import check_spec_network

        found += check_spec_network(session.client("ec2"), spec, region=region)
    return found


REINSTALL = "run `make setup` (it installs requirements.lock exactly)"


def _state_check(state: PackageState) -> DoctorCheck:
    if not state.drifted:
        return DoctorCheck("environment", state.name, OK, f"{state.installed}, as locked")
    return DoctorCheck(
        "environment",
        state.name,
        FAIL,
        f"{state.installed or 'not installed'}, the lock has {state.locked}: {REINSTALL}",
    )


def environment_checks(lock: Path = PROJECT_LOCK) -> list[DoctorCheck]:
    """The versions that matter here, and every package that differs from the lock CI tested."""
    if not lock.is_file():
        return [
            DoctorCheck(
                "environment",
                name,
                UNVERIFIED,
                f"{installed_version(name) or 'not installed'}; no {lock.name} beside this installation to "
                "compare with (installed from a wheel, not from a checkout)",
            )
            for name in KEY_PACKAGES
        ]
    checks = [_state_check(state) for state in package_states(lock, KEY_PACKAGES)]
    locked = package_states(lock)
    others = [s for s in locked if s.drifted and s.name not in KEY_PACKAGES]
    checks += [_state_check(state) for state in others]
    if not others:
        checks.append(
            DoctorCheck("environment", "locked packages", OK, f"all {len(locked)} at the lock's versions")
        )
    return checks


@guarded
def doctor_command(
    aws: Annotated[
        bool, typer.Option("--aws", help="Check the deployed stack in your AWS account (read-only).")
    ] = False,
    region: RegionOption = None,
    profile: ProfileOption = None,
    stack_name: StackOption = STACK_NAME,
    instance_types: Annotated[
        str, typer.Option("--instance-types", help="Comma-separated types whose quota to read.")
    ] = DEFAULT_INSTANCE_TYPES,
    as_json: JsonOption = False,
    spec_file: Annotated[
        str | None, typer.Option("--spec", help="A run spec whose VPC (subnets, zones, routes) to check.")
    ] = None,
) -> None:
    """Check this environment against the tested lock; with --aws, the deployed stack's roles, key
    permissions, images and quotas in your account (read-only).

    The region is --region, else AWS_REGION, else AWS_DEFAULT_REGION, else the profile's; no region,
    no credentials or an unknown profile is one line and exit 2. A check that fails exits 1.
    """
    if not aws:
        _report(environment_checks(), as_json)
    from workflows.preflight.gate import check_region
    from workflows.spec.pipeline import load_spec

    spec = load_spec(spec_file) if spec_file else None
    session = aws_session(region, profile)
    where = session_region(session)
    if session.get_credentials() is None:
        fail("no usable AWS credentials were found.", fix=LOGIN, kind="NoCredentials")
    check_region(where)
    types = [t for t in instance_types.split(",") if t]
    found = environment_checks() + doctor(session, stack_name=stack_name, instance_types=types, spec=spec)
    _report(found, as_json)


def _report(found: Sequence[DoctorCheck], as_json: bool) -> NoReturn:
    if as_json:
        typer.echo(json.dumps([asdict(c) for c in found], indent=2))
    else:
        for check in found:
            typer.echo(f"{check.status:<10} {check.area:<11} {check.subject}: {check.detail}")
    raise typer.Exit(1 if any(c.status == FAIL for c in found) else 0)
