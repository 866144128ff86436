"""CheckSpec: the checks on the spec alone, the pipeline's first state (before any conversion).

The raw input is validated here rather than by ``event_parser``: a console or EventBridge start with a
malformed spec fails as ``SpecInvalid`` naming each field, not as a parser's ValidationError.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from lambdas import clients
from lambdas.observability import MetricUnit, lambda_handler, logger, metrics
from workflows.steps.check_spec import check_spec, spec_request


@lambda_handler(None)
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    request = spec_request(event)
    settings = clients.settings()
    secrets = clients.secretsmanager() if request.spec.model.token_secret else None
    # The local SageMaker (an endpoint URL) has no account quotas; AWS's are read before any spend (F39).
    on_aws = not settings.sagemaker_endpoint_url
    quotas = clients.service_quotas() if on_aws else None
    # The reservation a spec names is read before any spend too (F06); the local SageMaker holds none.
    reserved = on_aws and getattr(request.spec.hosting, "capacity_reservation", None)
    result = check_spec(
        request.spec,
        s3=clients.s3(),
        region=settings.region,
        secretsmanager=secrets,
        quotas=quotas,
        sagemaker=clients.sagemaker() if reserved else None,
    )
    logger.info("spec checked", extra={"run_id": request.run_id, "findings": [f.id for f in result.findings]})
    metrics.add_metric(name="SpecCheckWarnings", unit=MetricUnit.Count, value=len(result.findings))
    return result.model_dump(mode="json")
