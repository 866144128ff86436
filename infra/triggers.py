"""What starts the state machines besides a person: EventBridge Scheduler and S3 uploads.

- A schedule (EventBridge Scheduler, not a legacy scheduled rule) starts the benchmark sweep
  with the sweep file named by the ``deploybench:sweepFile`` context, validated at synth.
- An EventBridge rule on the artifact bucket's ``Object Created`` events for
  ``models/*/deploybench.yaml`` invokes StartRedeploy with the redeploy pipeline's input, made
  by the rule's input transformer; StartRedeploy names the execution after the upload.
- A second schedule runs the janitor.

Deliveries that still fail after their retries land in one dead-letter queue (alarmed).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as events_targets
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_scheduler as scheduler
from aws_cdk import aws_scheduler_targets as scheduler_targets
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constants import MODELS_PREFIX, ROOT, SPEC_FILE
from workflows.redeploy.triggers import STATE_MACHINE_ENV
from workflows.stops.teardown import stopped_event_pattern
from workflows.sweeps.spec import SweepSpec, load_sweep

# The S3 event fields the redeploy pipeline's input (workflows.redeploy.triggers.RedeployTrigger) is made of.
TRIGGER_FIELDS = {
    "bucket": "$.detail.bucket.name",
    "key": "$.detail.object.key",
    "version_id": "$.detail.object.version-id",
    "etag": "$.detail.object.etag",
    "size": "$.detail.object.size",
    "sequencer": "$.detail.object.sequencer",
}
DEAD_LETTER_RETENTION = Duration.days(14)


def redeploy_event_pattern(bucket_name: str) -> events.EventPattern:
    """A new version of a model's run spec in this bucket; deletes and other prefixes do not match."""
    return events.EventPattern(
        source=["aws.s3"],
        detail_type=["Object Created"],
        detail={
            "bucket": {"name": [bucket_name]},
            "object": {"key": events.Match.wildcard(f"{MODELS_PREFIX}*/{SPEC_FILE}")},
        },
    )


def stopped_pattern(state_machine_arns: list[str]) -> events.EventPattern:
    """The stopped-execution rule's pattern: the one the local engine's router matches too."""
    pattern = stopped_event_pattern(state_machine_arns)
    return events.EventPattern(
        source=pattern["source"], detail_type=pattern["detail-type"], detail=pattern["detail"]
    )


def sweep_input(path: Path) -> dict[str, Any]:
    """The sweep state machine's input: the validated sweep (a bad sweep file fails the synth)."""
    sweep: SweepSpec = load_sweep(path)
    # Unset optional fields are left out: the synthesized template drops nulls anyway, and the sweep
    # parses the same without them.
    return {"sweep": sweep.model_dump(mode="json", exclude_none=True)}


class Triggers(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        bucket: s3.IBucket,
        sweep: sfn.IStateMachine,
        redeploy: sfn.IStateMachine,
        start_redeploy: lambda_.Function,
        janitor: lambda_.IFunction,
        sweep_file: str,
        sweep_schedule: str,
        sweep_enabled: bool,
        janitor_schedule: str,
        stoppable: list[sfn.IStateMachine] | None = None,
        teardown_stopped: lambda_.IFunction | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.dead_letters = sqs.Queue(
            self,
            "DeadLetters",
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
            retention_period=DEAD_LETTER_RETENTION,
        )
        self.sweep_schedule = scheduler.Schedule(
            self,
            "SweepSchedule",
            description=f"deploybench: benchmark sweep {sweep_file}",
            schedule=scheduler.ScheduleExpression.expression(sweep_schedule),
            enabled=sweep_enabled,
            target=scheduler_targets.StepFunctionsStartExecution(
                sweep,
                input=scheduler.ScheduleTargetInput.from_object(sweep_input(ROOT / sweep_file)),
                dead_letter_queue=self.dead_letters,
                retry_attempts=3,
                max_event_age=Duration.hours(1),
            ),
        )
        self.janitor_schedule = scheduler.Schedule(
            self,
            "JanitorSchedule",
            description="deploybench: delete expired run resources",
            schedule=scheduler.ScheduleExpression.expression(janitor_schedule),
            target=scheduler_targets.LambdaInvoke(
                janitor,
                input=scheduler.ScheduleTargetInput.from_object({"dry_run": False}),
                dead_letter_queue=self.dead_letters,
                retry_attempts=2,
                max_event_age=Duration.minutes(30),
            ),
        )
        start_redeploy.add_environment(STATE_MACHINE_ENV, redeploy.state_machine_arn)
        self.redeploy_rule = events.Rule(
            self,
            "ModelUploaded",
            description=f"deploybench: a new {MODELS_PREFIX}<model>/{SPEC_FILE} starts the redeploy pipeline",
            event_pattern=redeploy_event_pattern(bucket.bucket_name),
        )
        self.stopped_rule: events.Rule | None = None
        if teardown_stopped is not None and stoppable:
            # StopExecution and a machine's timeout skip its Catch branches: the run's teardown
            # starts from the status change instead (workflows/stops/teardown.py).
            self.stopped_rule = events.Rule(
                self,
                "ExecutionStopped",
                description="deploybench: an aborted or timed-out execution's run is torn down at once",
                event_pattern=stopped_pattern([m.state_machine_arn for m in stoppable]),
            )
            self.stopped_rule.add_target(
                events_targets.LambdaFunction(
                    teardown_stopped,
                    dead_letter_queue=self.dead_letters,
                    retry_attempts=8,
                    max_event_age=Duration.hours(6),
                )
            )
        self.redeploy_rule.add_target(
            events_targets.LambdaFunction(
                start_redeploy,
                event=events.RuleTargetInput.from_object(
                    {field: events.EventField.from_path(path) for field, path in TRIGGER_FIELDS.items()}
                ),
                dead_letter_queue=self.dead_letters,
                retry_attempts=8,
                max_event_age=Duration.hours(6),
            )
        )
