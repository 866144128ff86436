"""Remediation: what the pipeline changes after a diagnosis, within the spec's bounds.

- ``plan``: the PlanRemediation step: check the bound, pick the route, rewrite the attempt, record it;
- ``changes``: each action's next configuration (instance type, memory, AMI, workers, requirement...);
- ``overrides``: how a hosting mode applies ``DeployOverrides`` to its spec (one place, every mode);
- ``requirements``: the requirement lines added to ``code/requirements.txt`` when repacking;
- ``records``: what the execution state records (changes, decisions, the route chosen);
- ``removal``: the RemoveFailedAttempt step: delete the failed attempt's resources when AWS lets us.

A domain package: it imports the primitives, ``workflows.aws``, diagnosis, hosting, preflight and the
artifact files; the PlanRemediation and RemoveFailedAttempt handlers and the steps import it.
"""

from __future__ import annotations

# F12/F15: scale from zero took 471 s and 95 retries in the field; 30 s doubling, capped at 5 min.
# Here, not in ``plan``, so that ``workflows.janitor.lifetime`` reads the bound without importing the step.
RETRY_FIRST_WAIT_S = 30
RETRY_MAX_WAIT_S = 300
