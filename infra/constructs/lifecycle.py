"""The nightly lifecycle run: an EventBridge schedule invoking the purge function
(TTL expiry, archival, hard delete by policy, consolidation)."""

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
