"""The redeploy pipeline: an uploaded run spec (and the model folder beside it) runs the deploy pipeline.

Started by ``StartRedeploy`` for an S3 ``Object Created`` event on ``models/<model>/deploybench.yaml``,
with an execution name derived from bucket, key and version (a re-delivered event cannot start
a second run). Uploads of the same model never race: the newest waits for the one running, and
an older one still waiting is superseded (it ends without deploying; nothing was created yet).
"""

from __future__ import annotations

from typing import Any

from state_machines.benchmark_sweep import child_pipeline_task
from state_machines.deploy_pipeline import task

# A deploy pipeline run takes minutes to hours; polling the queue every minute costs two state
# transitions a minute and adds at most a minute to the start of the next version.
QUEUE_POLL_S = 60


def definition() -> dict[str, Any]:
    states: dict[str, Any] = {
        "ReadUploadedSpec": task(
            "ReadUploadedSpec",
            parameters={"trigger.$": "$", "execution_name.$": "$$.Execution.Name"},
            result_path="$.plan",
            next_state="CheckRedeployQueue",
            comment="Read the spec at the uploaded version, validate it and snapshot the model folder beside it.",
            catch="RedeployFailed",
        ),
        "CheckRedeployQueue": task(
            "CheckRedeployQueue",
            parameters={
                "state_machine_arn.$": "$$.StateMachine.Id",
                "execution_arn.$": "$$.Execution.Id",
                "group.$": "$.plan.group",
                "sequencer.$": "$.plan.sequencer",
                "poll_s": QUEUE_POLL_S,
            },
            result_path="$.queue",
            next_state="IsItThisVersionsTurn",
            comment="Another redeploy of the same model running? Older ones go first; a newer upload supersedes this one.",
            catch="RedeployFailed",
        ),
        "IsItThisVersionsTurn": {
            "Type": "Choice",
            "Choices": [
                {"Variable": "$.queue.decision", "StringEquals": "proceed", "Next": "RunDeployPipeline"},
                {
                    "Variable": "$.queue.decision",
                    "StringEquals": "superseded",
                    "Next": "SkipSupersededVersion",
                },
            ],
            "Default": "WaitForPreviousRedeploy",
        },
        "WaitForPreviousRedeploy": {
            "Type": "Wait",
            "SecondsPath": "$.queue.wait_s",
            "Next": "CheckRedeployQueue",
        },
        "RunDeployPipeline": child_pipeline_task(
            name_path="$.plan.pipeline.run_id",
            input_path="$.plan.pipeline",
            next_state="RedeploySucceeded",
            catch="RedeployFailed",
        ),
        "SkipSupersededVersion": {
            "Type": "Succeed",
            "Comment": "A newer version of this model was uploaded while this one waited; it deploys instead.",
        },
        "RedeploySucceeded": {"Type": "Succeed"},
        "RedeployFailed": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"},
    }
    return {
        "Comment": "deploybench redeploy: an uploaded model version runs the deploy pipeline, one version of a model at a time.",
        "StartAt": "ReadUploadedSpec",
        "States": states,
    }
