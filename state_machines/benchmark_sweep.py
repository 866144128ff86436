"""The benchmark sweep: plan a matrix of runs, run each as a child deploy pipeline, compare with the baseline.

Each matrix item is a complete deploy pipeline execution (named by its run id), started and
awaited by a ``${StartExecutionSyncResource}`` Task: ``startExecution.sync:2`` on AWS, a local
stand-in on the local engine. A failed run is recorded, not fatal, so the other runs still
report; the comparison then fails the sweep on a regression or on failed runs, after writing
its report.
"""

from __future__ import annotations

from typing import Any

from state_machines.deploy_pipeline import catch_to, task
from state_machines.placeholders import START_EXECUTION_SYNC, state_machine_placeholder
from workflows.errors import PerformanceRegression, SweepRunsFailed

# Each run holds an endpoint while it measures; SageMaker's default per-instance-type quotas are
# small (often 2-4 instances for ml.g5 types), and runs on one type beyond the quota would stall.
MAX_PARALLEL_RUNS = 4


def child_pipeline_task(*, name_path: str, input_path: str, next_state: str, catch: str) -> dict[str, Any]:
    """Run the deploy pipeline as a child execution named by the run id, and wait for it."""
    return {
        "Type": "Task",
        "Comment": "Run one deploy pipeline to completion (startExecution.sync:2 on AWS).",
        "Resource": f"${{{START_EXECUTION_SYNC}}}",
        "Parameters": {
            "StateMachineArn": f"${{{state_machine_placeholder('deploy_pipeline')}}}",
            "Name.$": name_path,
            "Input.$": input_path,
        },
        # The child's full output can be large: keep only what the parent needs (256 KB payload limit).
        "ResultSelector": {"status.$": "$.Status", "execution_arn.$": "$.ExecutionArn"},
        "ResultPath": "$.outcome",
        "Next": next_state,
        # No Retry: a failed child is an answer, and a restart under the same name would be refused.
        "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": catch}],
    }


def run_item() -> dict[str, Any]:
    """The Map's item processor: one run, recorded whether it succeeded or failed."""
    record = {"index.$": "$.index", "key.$": "$.key", "run_id.$": "$.pipeline.run_id"}
    return {
        "ProcessorConfig": {"Mode": "INLINE"},
        "StartAt": "RunDeployPipeline",
        "States": {
            "RunDeployPipeline": child_pipeline_task(
                name_path="$.pipeline.run_id",
                input_path="$.pipeline",
                next_state="RecordRun",
                catch="RecordFailedRun",
            ),
            "RecordRun": {
                "Type": "Pass",
                "Parameters": {**record, "status.$": "$.outcome.status"},
                "End": True,
            },
            # Only the error name: a .sync:2 Cause carries the child's whole description; the
            # comparison reads the details from the run's result.json.
            "RecordFailedRun": {
                "Type": "Pass",
                "Parameters": {**record, "status": "FAILED", "error.$": "$.error.Error"},
                "End": True,
            },
        },
    }


def definition() -> dict[str, Any]:
    states: dict[str, Any] = {
        "PlanSweep": task(
            "PlanSweep",
            parameters={"sweep.$": "$.sweep", "execution_name.$": "$$.Execution.Name"},
            result_path="$.plan",
            next_state="RunMatrix",
            comment="Validate the sweep and expand its matrix into complete run specs, before anything starts.",
            catch="SweepFailed",
        ),
        "RunMatrix": {
            "Type": "Map",
            "Comment": "Every matrix item as a child deploy pipeline, a bounded number at a time.",
            "ItemsPath": "$.plan.items",
            "MaxConcurrency": MAX_PARALLEL_RUNS,
            "ItemProcessor": run_item(),
            "ResultPath": "$.runs",
            "Next": "CompareWithBaseline",
            "Catch": catch_to("SweepFailed"),
        },
        "CompareWithBaseline": task(
            "CompareWithBaseline",
            parameters={"sweep.$": "$.sweep", "sweep_id.$": "$.plan.sweep_id", "runs.$": "$.runs"},
            result_path="$.comparison",
            next_state="IsSweepClean",
            comment="Gather every run's result into one report and judge it against the baseline sweep.",
            catch="SweepFailed",
        ),
        "IsSweepClean": {
            "Type": "Choice",
            "Choices": [
                {
                    "Variable": "$.comparison.verdict",
                    "StringEquals": "regression",
                    "Next": "ReportRegression",
                },
                {
                    "Variable": "$.comparison.failed_count",
                    "NumericGreaterThan": 0,
                    "Next": "ReportFailedRuns",
                },
            ],
            "Default": "SweepSucceeded",
        },
        "ReportRegression": {
            "Type": "Fail",
            "Error": PerformanceRegression.__name__,
            "CausePath": "$.comparison.summary",
        },
        "ReportFailedRuns": {
            "Type": "Fail",
            "Error": SweepRunsFailed.__name__,
            "CausePath": "$.comparison.summary",
        },
        "SweepSucceeded": {"Type": "Succeed"},
        "SweepFailed": {"Type": "Fail", "ErrorPath": "$.error.Error", "CausePath": "$.error.Cause"},
    }
    return {
        "Comment": "deploybench benchmark sweep: a matrix of deploy pipelines, one comparison report, a regression verdict.",
        "StartAt": "PlanSweep",
        "States": states,
    }
