"""The scheduled runs: the nightly lifecycle (an EventBridge schedule invoking the purge function:
TTL expiry, archival, hard delete by policy, consolidation) and the outbox relay sweep."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_events as events
from aws_cdk import aws_events_targets as targets
from aws_cdk import aws_lambda as lambda_

from constructs import Construct
from infra.config import DeploymentConfig


class Lifecycle(Construct):
    """Exposes `rule` (the nightly schedule)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        purge_functions: list[lambda_.IFunction],
    ) -> None:
        super().__init__(scope, construct_id)
        self.rule = events.Rule(
            self,
            "Nightly",
            description="Agent Memory nightly purge (UTC)",
            schedule=events.Schedule.expression(config.purge_schedule),
            targets=[
                # The purge is idempotent: a retried run finds less to do.
                targets.LambdaFunction(fn, retry_attempts=2, max_event_age=Duration.hours(2))
                for fn in purge_functions
            ],
        )


class OutboxRelaySchedule(Construct):
    """Exposes `rule`: the outbox relay sweep (pending extraction messages, stuck sessions),
    every minute by default."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        relay_function: lambda_.IFunction,
    ) -> None:
        super().__init__(scope, construct_id)
        self.rule = events.Rule(
            self,
            "Schedule",
            description="Agent Memory outbox relay: pending extraction messages, stuck sessions",
            schedule=events.Schedule.expression(config.outbox_relay_schedule),
            # No retries: a missed run is the next run's work, and runs must not pile up.
            targets=[
                targets.LambdaFunction(relay_function, retry_attempts=0, max_event_age=Duration.minutes(1))
            ],
        )
