"""What an AccessDenied means: which IAM action was denied, on what, by which kind of policy, and the fix.

AWS's denial text names the principal, the action, the resource and (since 2021) the kind of policy:
"User: arn:aws:sts::123456789012:assumed-role/R/S is not authorized to perform: sagemaker:CreateModel
on resource: arn:aws:sagemaker:... with an explicit deny in a service control policy", or "... because
no identity-based policy allows the sagemaker:CreateModel action". Locked-down accounts deny creates
that lack a condition (CreateEndpointConfig without KmsKeyId, CreateModel without VpcConfig); the fix
names the spec field that supplies it.
"""

from __future__ import annotations

import re

from workflows.errors import AwsAccessDenied

DENIED_CODES = frozenset(
    {
        "AccessDenied",
        "AccessDeniedException",
        "UnauthorizedOperation",
        "AuthorizationError",
        "AuthorizationErrorException",
    }
)
_DENIAL = re.compile(
    r"is not authorized to perform:? (?P<action>[\w-]+:[\w*]+)"
    r"(?: on resource:? (?P<resource>\S+?))?"
    r"(?: (?:with an explicit deny in an? (?P<deny>[\w -]+?policy|permissions boundary)"
    r"|because no (?P<none>[\w -]+?(?:policy|boundary)) allows))?"
    r"(?=[ .,]|$)"
)
# The spec fields that satisfy the conditions locked-down accounts put on these actions.
CONDITION_FIELDS = {
    "sagemaker:CreateEndpointConfig": "hosting.kms_key_id (KmsKeyId on the endpoint config)",
    "sagemaker:CreateModel": "hosting.vpc (VpcConfig) and hosting.network_isolation (EnableNetworkIsolation)",
    "sagemaker:CreateProcessingJob": "benchmark.job_vpc (NetworkConfig) and benchmark.job_kms_key_id "
    "(VolumeKmsKeyId, ProcessingOutputConfig.KmsKeyId)",
}
PERMISSIONS = "docs/security.md, section Permissions (the roles table)"


def _fix(action: str, resource: str, deny: str | None, none: str | None) -> str:
    condition = CONDITION_FIELDS.get(action)
    if deny and "service control" in deny:
        asked = f"; when it requires a condition, set {condition}" if condition else ""
        return (
            f"an organization service control policy denies {action}: ask its administrators which condition "
            f"the policy requires{asked}, or to exempt the deploybench roles"
        )
    if deny:
        return (
            f"an explicit Deny in a {deny} refuses {action} on {resource}: narrow that statement, or meet its "
            f"condition{f' (set {condition})' if condition else ''}"
        )
    if none and "resource-based" in none:
        return f"the policy of {resource} (a bucket or key policy) must allow {action} to the role"
    if none and "boundary" in none:
        return f"the role's permissions boundary must allow {action} on {resource}"
    return (
        f"grant {action} on {resource} to the role (see {PERMISSIONS}); a stack deployed by an older "
        "deploybench lacks it: run `cdk deploy` again"
    )


def denial(code: str, message: str, call: str) -> AwsAccessDenied | None:
    """The ``AwsAccessDenied`` a client error means, or None when it is not a denial.

    Args:
        code: the error code (AccessDenied, AccessDeniedException, UnauthorizedOperation...).
        message: AWS's message, which names the action and the kind of policy that denied it.
        call: what deploybench was doing (``create model db-run-1-a1-m0``).
    """
    if code not in DENIED_CODES:
        return None
    found = _DENIAL.search(message)
    if found is None:
        return AwsAccessDenied(
            f"{call}: {code}: {message}",
            fix=f"the role lacks a permission or a condition denies it; compare it with {PERMISSIONS}",
        )
    action, resource = found["action"], found["resource"] or "the resource"
    kind = found["deny"] or (f"no {found['none']} allows it" if found["none"] else "not allowed")
    return AwsAccessDenied(
        f"{call}: {code}: {action} on {resource} was denied ({kind}). AWS said: {message}",
        fix=_fix(action, resource, found["deny"], found["none"]),
    )
