"""A run's lifetime (its resources' expiry): derived from the spec's own budgets and bounds."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from tests.conftest import fast_spec
from workflows.janitor.lifetime import MARGIN, run_lifetime
from workflows.spec.pipeline import RunSpec


def spec(**sections: Any) -> RunSpec:
    return fast_spec("bundled", **sections)


def test_every_wait_minute_a_deploy_attempt_may_spend_extends_the_lifetime() -> None:
    # Given the same spec with a wait budget one hour longer, over four deploy attempts
    base = spec(remediation={"max_total_attempts": 4})
    longer = spec(remediation={"max_total_attempts": 4}, wait={"timeout_min": base.wait.timeout_min + 60})
    # Then the lifetime grows by one hour per attempt
    assert run_lifetime(longer) - run_lifetime(base) == timedelta(hours=4)


def test_each_bound_of_the_remediation_adds_what_it_allows() -> None:
    base = spec()
    one_more_deploy = spec(remediation={"max_total_attempts": base.remediation.max_total_attempts + 1})
    one_more_rerun = spec(remediation={"warm_shapes": base.remediation.warm_shapes + 1})
    # A deploy attempt waits its whole budget; a rerun on the same endpoint does not wait for it
    attempt = run_lifetime(one_more_deploy) - run_lifetime(base)
    rerun = run_lifetime(one_more_rerun) - run_lifetime(base)
    assert attempt > timedelta(minutes=base.wait.timeout_min)
    assert timedelta(0) < rerun < attempt
    # And with remediation off there is one attempt and no rerun
    off = spec(remediation={"enabled": False})
    assert run_lifetime(off) < run_lifetime(base)


def test_the_benchmark_job_budget_counts_for_every_benchmark_try() -> None:
    # Given a longer warmup limit per shape (the processing job's MaxRuntimeInSeconds grows by it per shape)
    base = spec(remediation={"enabled": False})
    slower = spec(
        remediation={"enabled": False}, benchmark={"warmup_max_s": base.benchmark.warmup_max_s + 600}
    )
    shapes = len(base.benchmark.batch_sizes) * len(base.benchmark.sequence_lengths)
    # Then the lifetime grows by that much for the one benchmark of the run
    assert run_lifetime(slower) - run_lifetime(base) == timedelta(seconds=600 * shapes)


def test_a_run_without_remediation_still_outlasts_its_wait_and_teardown_retries() -> None:
    # Teardown retries ResourceBusy for about 65 minutes (a stalled endpoint, F06) before giving up
    off = spec(remediation={"enabled": False}, wait={"timeout_min": 60})
    assert run_lifetime(off) >= timedelta(minutes=60 + 65) + MARGIN
    # And the defaults outlast the fixed 6 hours the janitor used to allow
    assert run_lifetime(spec()) > timedelta(hours=6)
