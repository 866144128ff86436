"""F39 before any spend: the gate reads the account's SageMaker quotas (Stubber answers of AWS's shape)
and blocks a run whose first instance type, serverless concurrency or benchmark job has too little."""

from __future__ import annotations

import pytest

from tests.support.quotas import quota_code, stubbed_quotas
from workflows.contracts import PipelineState
from workflows.errors import PreflightBlocked
from workflows.hosting.gate import GateClients, gate
from workflows.preflight.quotas import endpoint_quota, processing_quota, quota_needs
from workflows.remediation.changes import Refused, next_instance_type
from workflows.spec.pipeline import parse_spec
from workflows.steps.check_spec import check_spec

REGION = "eu-west-1"
G5, G6 = "ml.g5.xlarge", "ml.g6.xlarge"


def gpu_spec(*types: str) -> object:
    return parse_spec({"name": "x", "hosting": {"instance_type_fallbacks": list(types)}}, origin="test")


def test_a_zero_endpoint_quota_blocks_naming_the_quota_and_the_increase_command() -> None:
    # Given an account with no ml.g5.xlarge endpoint quota (a new account's) and a run on ml.g5.xlarge
    spec = gpu_spec(G5)
    quotas, stub = stubbed_quotas(
        {endpoint_quota(G5): 0, processing_quota("ml.c5.xlarge"): 4}, region=REGION, pages=3
    )
    # When the gate checks it
    result = gate(spec, region=REGION, local=False, clients=GateClients(quotas=quotas))
    # Then the quota blocks, named, with the exact command that asks for one instance
    stub.assert_no_pending_responses()
    [finding] = [f for f in result.findings if f.id == "F39"]
    code = quota_code(endpoint_quota(G5))
    assert finding.severity == "blocking"
    assert f"'ml.g5.xlarge for endpoint usage' ({code}) is 0 instances in {REGION}" in finding.message
    assert "ResourceLimitExceeded" in finding.message
    assert (
        f"aws service-quotas request-service-quota-increase --service-code sagemaker --quota-code {code} "
        f"--desired-value 1 --region {REGION}" in finding.fix
    )
    assert result.quotas[endpoint_quota(G5)] == 0.0


def test_check_spec_refuses_the_zero_quota_before_anything_is_converted() -> None:
    quotas, _ = stubbed_quotas({endpoint_quota(G5): 0, processing_quota("ml.c5.xlarge"): 1}, region=REGION)
    with pytest.raises(PreflightBlocked, match=r"before anything was converted:\nF39 \(blocking\)"):
        check_spec(gpu_spec(G5), s3=None, region=REGION, quotas=quotas)


def test_a_fallback_without_quota_warns_and_the_first_types_quota_lets_the_run_start() -> None:
    # Given quota for ml.g5.xlarge but none for its fallback ml.g6.xlarge
    quotas, _ = stubbed_quotas(
        {endpoint_quota(G5): 1, endpoint_quota(G6): 0, processing_quota("ml.c5.xlarge"): 1}, region=REGION
    )
    result = gate(gpu_spec(G5, G6), region=REGION, local=False, clients=GateClients(quotas=quotas))
    # Then the run may start, and the fallback is a warning that says why
    [finding] = [f for f in result.findings if f.id == "F39"]
    assert finding.severity == "warning" and finding.message.startswith("fallback ml.g6.xlarge:")


def test_serverless_concurrency_above_the_accounts_blocks() -> None:
    spec = parse_spec({"name": "x", "hosting": {"mode": "serverless", "max_concurrency": 20}}, origin="test")
    name = "Maximum total concurrency that can be allocated across all serverless endpoints"
    quotas, _ = stubbed_quotas({name: 10, processing_quota("ml.c5.xlarge"): 1}, region=REGION)
    result = gate(spec, region=REGION, local=False, clients=GateClients(quotas=quotas))
    [finding] = [f for f in result.findings if f.id == "F39"]
    assert (
        finding.severity == "blocking"
        and "needs 20" in finding.message
        and "--desired-value 20" in finding.fix
    )


def test_the_benchmark_job_quota_blocks_only_where_a_job_will_run() -> None:
    # A GPU run's 'auto' benchmark runs as a processing job; a short CPU one only might
    gpu = {n.name: n.blocking for n in quota_needs(gpu_spec(G5))}
    cpu = {n.name: n.blocking for n in quota_needs(gpu_spec("ml.c6i.xlarge"))}
    assert gpu[processing_quota("ml.c5.xlarge")] is True
    assert cpu[processing_quota("ml.c5.xlarge")] is False


def test_a_quota_the_account_does_not_list_is_reported_skipped_not_passed() -> None:
    quotas, _ = stubbed_quotas({processing_quota("ml.c5.xlarge"): 1}, region=REGION)
    result = gate(gpu_spec(G5), region=REGION, local=False, clients=GateClients(quotas=quotas))
    assert not [f for f in result.findings if f.id == "F39"]
    assert any("lists no 'ml.g5.xlarge for endpoint usage'" in s for s in result.skipped)


def test_service_quotas_refusing_the_read_is_reported_skipped() -> None:
    quotas, stub = stubbed_quotas({}, region=REGION, pages=1, asked=[])
    stub.deactivate()
    from botocore.stub import Stubber

    denied = Stubber(quotas)
    denied.add_client_error("list_service_quotas", "AccessDeniedException", "not authorized")
    denied.activate()
    result = gate(gpu_spec(G5), region=REGION, local=False, clients=GateClients(quotas=quotas))
    assert any("AccessDeniedException" in s for s in result.skipped)


def test_remediation_moves_past_fallbacks_the_account_has_no_quota_for() -> None:
    # Given a run on ml.g5.xlarge with fallbacks ml.g6.xlarge (quota 0) and ml.g4dn.xlarge (quota 2)
    spec = gpu_spec(G5, G6, "ml.g4dn.xlarge")
    state = PipelineState(run_id="r", spec=spec)
    state.spec_check = gate(
        spec,
        region=REGION,
        local=False,
        clients=GateClients(
            quotas=stubbed_quotas(
                {
                    endpoint_quota(G5): 1,
                    endpoint_quota(G6): 0,
                    endpoint_quota("ml.g4dn.xlarge"): 2,
                    processing_quota("ml.c5.xlarge"): 1,
                },
                region=REGION,
            )[0]
        ),
    )
    # When the first type fails for want of quota or capacity, the next attempt skips the type without quota
    step = next_instance_type(state, diagnosis=None)  # type: ignore[arg-type]
    assert step.instance_type_index == 2
    assert [c.after for c in step.changes] == ["ml.g4dn.xlarge"]
    assert "ml.g6.xlarge" in step.skipped[0]
    # And with no type left that has quota, it says so
    state.attempt.instance_type_index = 2
    with pytest.raises(Refused, match="no fallback instance type left"):
        next_instance_type(state, diagnosis=None)  # type: ignore[arg-type]
