"""The SageMaker role and a traced endpoint's traces log group: covered by the endpoint groups' grant, and
by nothing wider."""

from __future__ import annotations

from tests.stack.test_iam_contract import REGION, sagemaker_role
from tests.support.iam import allowed
from tests.support.iam_actions import Where
from tests.support.iam_sagemaker import log_writes
from workflows.naming import endpoint_traces_log_group


def test_sagemaker_may_write_a_run_endpoints_traces_and_no_other_endpoints() -> None:
    # Given the stack's SageMaker role, and the traces group of a run's endpoint and of another's
    role = sagemaker_role()
    where = Where(REGION, "123456789012")
    ours = log_writes(where, endpoint_traces_log_group("db-run-1-a1"), "AllTraffic/i-0123456789abcdef0")
    theirs = log_writes(where, endpoint_traces_log_group("prod-endpoint"), "AllTraffic/i-0123456789abcdef0")
    # Then every write to the run's traces group is allowed (the endpoint groups' grant covers it)
    assert [a.describe() for a in ours if not allowed(role, a)] == []
    # And none to an endpoint outside the run's prefix
    assert [a.describe() for a in theirs if allowed(role, a)] == []
