"""Alerts, alarms and the dashboard.

Alarms (all notify the alert topic): executions of each state machine that did not succeed;
resources the janitor found past their TTL (``LeakedResources``, the costliest failure); the
janitor itself failing; SageMaker endpoint 5XX errors; trigger deliveries in the dead-letter
queue.
"""

from __future__ import annotations

from aws_cdk import Duration, Stack
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn
from constructs import Construct

from infra.constants import METRICS_NAMESPACE, SERVICE_NAME

# Every endpoint in the account and region: endpoint names change per run, and Metrics Insights
# aggregates across them (a SEARCH expression cannot be alarmed on).
ENDPOINT_5XX_QUERY = 'SELECT SUM(Invocation5XXErrors) FROM SCHEMA("AWS/SageMaker", EndpointName, VariantName)'
# Powertools adds the service dimension to every metric it emits.
POWERTOOLS_DIMENSIONS = {"service": SERVICE_NAME}


def powertools_metric(name: str, period: Duration) -> cloudwatch.Metric:
    return cloudwatch.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map=POWERTOOLS_DIMENSIONS,
        statistic="Maximum",
        period=period,
    )


class AlertTopic(Construct):
    """An encrypted SNS topic CloudWatch alarms and the janitor publish to (optionally mailed)."""

    def __init__(self, scope: Construct, construct_id: str, *, email: str | None) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(self, "Key", enable_key_rotation=True, description="deploybench alert topic")
        # CloudWatch publishes alarm notifications to an encrypted topic only if it may use the key.
        self.key.grant(iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey")
        self.topic = sns.Topic(
            self, "Topic", display_name="deploybench alerts", master_key=self.key, enforce_ssl=True
        )
        if email:
            self.topic.add_subscription(subscriptions.EmailSubscription(email))


class Monitoring(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        topic: sns.ITopic,
        machines: dict[str, sfn.StateMachine],
        functions: dict[str, lambda_.Function],
        janitor: lambda_.IFunction,
        dead_letters: sqs.IQueue,
    ) -> None:
        super().__init__(scope, construct_id)
        self.action = actions.SnsAction(topic)
        self.alarms: list[cloudwatch.Alarm] = []
        for name, machine in machines.items():
            self._alarm(
                f"{name}-not-succeeded",
                cloudwatch.MathExpression(
                    expression="failed + timedOut + aborted",
                    using_metrics={
                        "failed": machine.metric_failed(),
                        "timedOut": machine.metric_timed_out(),
                        "aborted": machine.metric_aborted(),
                    },
                    period=Duration.minutes(5),
                ),
                f"{name}: an execution failed, timed out or was aborted",
            )
        self.leaks = self._alarm(
            "leaked-resources",
            powertools_metric("LeakedResources", Duration.hours(1)),
            "The janitor found resources past their TTL (each may bill by the hour)",
        )
        self._alarm(
            "janitor-errors",
            janitor.metric_errors(period=Duration.hours(1)),
            "The janitor failed: leaks may go unnoticed",
        )
        self._alarm(
            "endpoint-5xx",
            cloudwatch.MathExpression(
                expression=ENDPOINT_5XX_QUERY, using_metrics={}, period=Duration.minutes(5)
            ),
            "SageMaker endpoints answered 5XX",
        )
        self._alarm(
            "trigger-dead-letters",
            dead_letters.metric_approximate_number_of_messages_visible(period=Duration.minutes(5)),
            "A schedule or an upload event could not start its target",
        )
        self.dashboard = self._build_dashboard(machines, functions)

    def _alarm(self, name: str, metric: cloudwatch.IMetric, description: str) -> cloudwatch.Alarm:
        alarm = cloudwatch.Alarm(
            self,
            "".join(part.title() for part in name.replace("_", "-").split("-")),
            alarm_description=f"deploybench: {description}",
            metric=metric,
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(self.action)
        self.alarms.append(alarm)
        return alarm

    def _build_dashboard(
        self, machines: dict[str, sfn.StateMachine], functions: dict[str, lambda_.Function]
    ) -> cloudwatch.Dashboard:
        dashboard = cloudwatch.Dashboard(
            self, "Dashboard", dashboard_name=f"deploybench-{Stack.of(self).region}"
        )
        dashboard.add_widgets(cloudwatch.AlarmStatusWidget(title="Alarms", alarms=self.alarms, width=24))
        dashboard.add_widgets(
            *[
                cloudwatch.GraphWidget(
                    title=f"{name} executions",
                    left=[machine.metric_started(), machine.metric_succeeded(), machine.metric_failed()],
                    width=8,
                )
                for name, machine in machines.items()
            ]
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Leaked resources (janitor)",
                left=[
                    powertools_metric(name, Duration.hours(1))
                    for name in ("LeakedResources", "LeakedResourcesRemoved", "LeakedResourcesRemaining")
                ],
                width=12,
            ),
            cloudwatch.GraphWidget(
                title="Endpoint 5XX errors",
                left=[
                    cloudwatch.MathExpression(expression=ENDPOINT_5XX_QUERY, using_metrics={}, label="5XX")
                ],
                width=12,
            ),
        )
        dashboard.add_widgets(
            cloudwatch.GraphWidget(
                title="Function errors", left=[f.metric_errors() for f in functions.values()], width=12
            ),
            cloudwatch.GraphWidget(
                title="Function duration (p99)",
                left=[f.metric_duration(statistic="p99") for f in functions.values()],
                width=12,
            ),
        )
        return dashboard
