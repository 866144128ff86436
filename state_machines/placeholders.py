"""How a definition names another state machine and the child-execution resource.

Apart from ``state_machines/__init__.py`` (which builds every definition) so that a definition that
runs another machine (``benchmark_sweep``, ``redeploy_pipeline``) does not import the package back.
"""

from __future__ import annotations

START_EXECUTION_SYNC = "StartExecutionSyncResource"
"""Resource of a Task that runs another state machine to completion and returns its output.

On AWS it is substituted with ``AWS_START_EXECUTION_SYNC``; moto has no ``.sync``, so the local
engine substitutes a function that starts the child and polls it (``workflows/local/children.py``).
The Task's ``Parameters`` (``StateMachineArn``, ``Name``, ``Input``) are the same for both."""
AWS_START_EXECUTION_SYNC = "arn:aws:states:::states:startExecution.sync:2"


def state_machine_placeholder(name: str) -> str:
    """``deploy_pipeline`` -> ``DeployPipelineStateMachineArn``: how a definition names another machine."""
    return "".join(word.title() for word in name.split("_")) + "StateMachineArn"
