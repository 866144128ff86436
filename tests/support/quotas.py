"""Service Quotas answers of AWS's shape (botocore's service-quotas model), through botocore's Stubber.

moto implements no ListServiceQuotas, so the account's SageMaker quotas are stubbed: a listing page
per call with every field AWS returns for a SageMaker quota, then one GetServiceQuota per quota the
reader asks for, in the listing's order. Quota codes are AWS's form (``L-`` and eight hex digits);
the reader never knows them in advance, so each is derived from the name here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

import botocore.session
from botocore.stub import Stubber

ACCOUNT = "123456789012"


def quota_code(name: str) -> str:
    return "L-" + hashlib.sha256(name.encode()).hexdigest()[:8].upper()


def service_quota(name: str, value: float, region: str = "us-east-1") -> dict[str, Any]:
    """One SageMaker quota as ListServiceQuotas and GetServiceQuota return it."""
    code = quota_code(name)
    return {
        "ServiceCode": "sagemaker",
        "ServiceName": "Amazon SageMaker",
        "QuotaArn": f"arn:aws:servicequotas:{region}:{ACCOUNT}:sagemaker/{code}",
        "QuotaCode": code,
        "QuotaName": name,
        "Value": float(value),
        "Unit": "None",
        "Adjustable": True,
        "GlobalQuota": False,
        "QuotaAppliedAtLevel": "ACCOUNT",
        "Description": f"The maximum number of {name.split(' for ')[0]} instances allowed per account.",
    }


# Listed by every account besides the run's own quotas, so the reader must pick by name.
OTHER_QUOTAS = {
    "ml.m5.large for endpoint usage": 4.0,
    "ml.g5.xlarge for training job usage": 0.0,
    "Maximum number of endpoints": 100.0,
}


def stubbed_quotas(
    values: Mapping[str, float],
    *,
    region: str = "us-east-1",
    pages: int = 2,
    asked: list[str] | None = None,
) -> tuple[Any, Stubber]:
    """A Service Quotas client answering from ``values`` (by quota name), activated.

    Args:
        values: the run's quotas and their applied values.
        pages: ListServiceQuotas pages the listing is split into (NextToken between them).
        asked: the names GetServiceQuota is expected for, in listing order (default: every one of
            ``values``).
    """
    # botocore's own session: boto3's may be patched to hand out this very client (serve_quotas).
    client = botocore.session.get_session().create_client(
        "service-quotas", region_name=region, aws_access_key_id="x", aws_secret_access_key="x"
    )
    stubber = Stubber(client)
    listed = [service_quota(n, v, region) for n, v in {**OTHER_QUOTAS, **values}.items()]
    size = max(1, -(-len(listed) // pages))
    chunks = [listed[i : i + size] for i in range(0, len(listed), size)]
    for index, chunk in enumerate(chunks):
        expected: dict[str, Any] = {"ServiceCode": "sagemaker"}
        if index:
            expected["NextToken"] = f"page-{index}"
        response: dict[str, Any] = {"Quotas": chunk}
        if index < len(chunks) - 1:
            response["NextToken"] = f"page-{index + 1}"
        stubber.add_response("list_service_quotas", response, expected)
    wanted = list(values) if asked is None else asked
    for quota in listed:
        if quota["QuotaName"] in wanted:
            stubber.add_response(
                "get_service_quota",
                {"Quota": quota},
                {"ServiceCode": "sagemaker", "QuotaCode": quota["QuotaCode"]},
            )
    stubber.activate()
    return client, stubber


def serve_quotas(monkeypatch: Any, values: Mapping[str, float]) -> None:
    """Every boto3 session's Service Quotas client answers ``values`` (moto has no Service Quotas)."""
    import boto3.session

    real = boto3.session.Session.client

    def client(self: Any, service_name: str, *args: Any, **kwargs: Any) -> Any:
        if service_name == "service-quotas":
            return stubbed_quotas(values, region=self.region_name or "us-east-1")[0]
        return real(self, service_name, *args, **kwargs)

    monkeypatch.setattr(boto3.session.Session, "client", client)
