"""Alarms on what the design promises: no lost extraction (DLQ), erasure that
finishes verified and in time, retrieval inside its latency budget, and
functions that do not error, and database connections the proxy can share. They notify one
encrypted SNS topic."""

from __future__ import annotations

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cw
from aws_cdk import aws_cloudwatch_actions as cw_actions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_rds as rds
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sns_subscriptions as subscriptions
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_stepfunctions as sfn

from agent_memory.domain.policy import profile
from agent_memory.observability import RETRIEVAL_STAGE_METRIC_PREFIX
from constructs import Construct
from infra.config import DeploymentConfig
from infra.constructs.functions import METRICS_NAMESPACE, SERVICE_NAME

# Emitted by the erasure code when a request passes its deadline without a receipt.
# Powertools Metrics adds the `service` dimension to every metric it writes.
ERASURE_DEADLINE_METRIC = "ErasureDeadlineMissed"
INTERNAL_ERROR_METRIC = "InternalError"  # agent_memory.api.http: a handled 500, which Lambda's Errors misses
SOR_UNAVAILABLE_METRIC = (
    "SystemOfRecordUnavailable"  # agent_memory.observability: retrievals without live values
)


def _service_metric(name: str, period: Duration) -> cw.Metric:
    """A custom metric the service emits (Powertools adds the `service` dimension), summed."""
    return cw.Metric(
        namespace=METRICS_NAMESPACE,
        metric_name=name,
        dimensions_map={"service": SERVICE_NAME},
        period=period,
        statistic="Sum",
    )


class Monitoring(Construct):
    """Exposes `topic`, `key` and `alarms` (name -> Alarm)."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: DeploymentConfig,
        functions: dict[str, lambda_.IFunction],
        dead_letter_queue: sqs.IQueue,
        erasure_state_machine: sfn.IStateMachine,
        retrieval_function: str = "retrieve",
        database_proxy: rds.IDatabaseProxy | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.key = kms.Key(
            self,
            "Key",
            description="Agent Memory: alarm notifications",
            enable_key_rotation=True,
            removal_policy=RemovalPolicy.DESTROY,
        )
        # CloudWatch alarms publish to an encrypted topic only if the key lets them.
        self.key.grant(
            iam.ServicePrincipal("cloudwatch.amazonaws.com"), "kms:Decrypt", "kms:GenerateDataKey*"
        )
        self.topic = sns.Topic(
            self, "Alarms", display_name="Agent Memory alarms", master_key=self.key, enforce_ssl=True
        )
        if config.alarm_email:
            self.topic.add_subscription(subscriptions.EmailSubscription(config.alarm_email))
        self.alarms: dict[str, cw.Alarm] = {}
        five_minutes = Duration.minutes(5)

        self._alarm(
            "ExtractionDlqNotEmpty",
            dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=five_minutes, statistic="Maximum"
            ),
            threshold=1,
            description="Session-close messages failed extraction after every retry (inspect, then redrive).",
        )
        self._alarm(
            "ErasureFailed",
            erasure_state_machine.metric_failed(period=five_minutes, statistic="Sum"),
            threshold=1,
            description="An erasure execution failed (ExecutionsFailed): the subject may not be erased.",
        )
        self._alarm(
            "ErasureTimedOut",
            erasure_state_machine.metric_timed_out(period=five_minutes, statistic="Sum"),
            threshold=1,
            description="An erasure execution ran past its deadline (state machine timeout).",
        )
        self._alarm(
            "ErasureDeadlineMissed",
            _service_metric(ERASURE_DEADLINE_METRIC, Duration.hours(1)),
            threshold=1,
            description="An erasure request passed its deadline without a verified receipt (custom metric).",
        )
        self._alarm(
            "InternalErrors",
            _service_metric(INTERNAL_ERROR_METRIC, five_minutes),
            threshold=1,
            description="An API call ended in a 500 (custom metric): Lambda's Errors metric does not count a "
            "handled 500, so the per-function Errors alarms miss it.",
        )
        self._alarm(
            "SystemOfRecordUnavailable",
            _service_metric(SOR_UNAVAILABLE_METRIC, five_minutes),
            threshold=10,
            evaluation_periods=2,
            datapoints_to_alarm=2,
            description="For 10 minutes, retrievals could not read the system of record (it failed, or its "
            "circuit breaker is open): they answer from memory and account facts go out unconfirmed.",
        )
        if database_proxy is not None:
            self._alarm(
                "DatabaseSessionsPinned",
                cw.Metric(
                    namespace="AWS/RDS",
                    metric_name="DatabaseConnectionsCurrentlySessionPinned",
                    dimensions_map={"ProxyName": database_proxy.db_proxy_name},
                    period=five_minutes,
                    statistic="Maximum",
                ),
                threshold=1,
                evaluation_periods=3,
                datapoints_to_alarm=3,
                description="RDS Proxy has kept database connections pinned to clients for 15 minutes: "
                "something set session state (a SET, a named prepared statement), so the proxy cannot "
                "share connections and Lambda concurrency will exhaust the database's connections.",
            )
        if retrieval_function in functions:
            self._alarm(
                "RetrievalLatencyP95",
                functions[retrieval_function].metric_duration(period=five_minutes, statistic="p95"),
                threshold=config.retrieval_p95_budget_ms,
                evaluation_periods=3,
                datapoints_to_alarm=3,
                comparison=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                description=f"p95 retrieval duration over the {config.retrieval_p95_budget_ms} ms budget "
                "for 15 minutes.",
            )
        self._stage_alarms(config, five_minutes)
        self.dashboard = self._dashboard(config, erasure_state_machine, dead_letter_queue)
        for name, function in functions.items():
            self._alarm(
                f"Errors{''.join(part.capitalize() for part in name.split('_'))}",
                function.metric_errors(period=five_minutes, statistic="Sum"),
                threshold=1,
                description=f"The {name} function raised errors.",
            )

    def _dashboard(
        self,
        config: DeploymentConfig,
        erasure_state_machine: sfn.IStateMachine,
        dead_letter_queue: sqs.IQueue,
    ) -> cw.Dashboard:
        """The operating figures the product requirements name, on one page: retrieval latency per
        stage against its budget, stale rate, rejections, denials, lifecycle and deletion, and per
        tenant (from the nightly run, `services/stats.TENANT_GAUGES`) storage and cost drivers."""
        hour = Duration.hours(1)
        day = Duration.days(1)
        budgeted = list(profile(config.latency_budget_preset).latency_budget_ms)
        stages = [*budgeted, "embed", "rank", "freshness", "render", "audit"]
        stage_metrics = [
            cw.Metric(
                namespace=METRICS_NAMESPACE,
                metric_name=f"{RETRIEVAL_STAGE_METRIC_PREFIX}{stage}",
                dimensions_map={"service": SERVICE_NAME},
                period=Duration.minutes(5),
                statistic="p95",
                label=f"{stage} p95",
            )
            for stage in dict.fromkeys(stages)
        ]

        def per_tenant(name: str, statistic: str = "Maximum") -> cw.MathExpression:
            return cw.MathExpression(
                expression=f"SEARCH('{{{METRICS_NAMESPACE},service,tenant_id}} MetricName=\"{name}\"', "
                f"'{statistic}', 86400)",
                label=name,
                period=day,
                using_metrics={},
            )

        refused = [
            "forbidden",
            "unauthenticated",
            "unauthorized_memory_mutation",
            "not_found",
            "rate_limited",
        ]
        dashboard = cw.Dashboard(self, "Operations", dashboard_name=f"agent-memory-{config.environment_name}")
        dashboard.add_widgets(
            cw.GraphWidget(title="Retrieval latency per stage (p95, ms)", left=stage_metrics, width=12),
            cw.GraphWidget(
                title="Stale rate: memories overridden by live values / returned",
                left=[
                    _service_metric("RetrievalExcluded_stale_vs_live", hour),
                    _service_metric("RetrievalReturned", hour),
                ],
                width=12,
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Admission decisions",
                left=[
                    _service_metric(f"decision_{d}", hour)
                    for d in (
                        "admitted",
                        "pending_approval",
                        "quarantined",
                        "rejected",
                        "contested",
                        "duplicate",
                    )
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Refused requests (denials and quotas)",
                left=[_service_metric(f"RequestRefused_{code}", hour) for code in refused],
                width=12,
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Lifecycle and deletion",
                left=[
                    _service_metric("Purge_expired", day),
                    _service_metric("Purge_deleted", day),
                    _service_metric(ERASURE_DEADLINE_METRIC, day),
                    erasure_state_machine.metric_failed(period=day, statistic="Sum"),
                    dead_letter_queue.metric_approximate_number_of_messages_visible(
                        period=hour, statistic="Maximum"
                    ),
                ],
                width=12,
            ),
            cw.GraphWidget(
                title="Per tenant: lifecycle lag and deletion time (s)",
                left=[per_tenant("LifecycleLagSeconds"), per_tenant("DeletionMedianSeconds")],
                width=12,
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Per tenant: storage",
                left=[per_tenant("LiveMemories")],
                right=[per_tenant("LiveBytes")],
                width=12,
            ),
            cw.GraphWidget(
                title="Per tenant: cost drivers (last day)",
                left=[per_tenant("Retrievals"), per_tenant("Writes"), per_tenant("SessionsExtracted")],
                width=12,
            ),
        )
        dashboard.add_widgets(
            cw.GraphWidget(
                title="Per tenant: stale rate, rejection rate",
                left=[per_tenant("StaleRate"), per_tenant("RejectionRate")],
                width=12,
            ),
            cw.GraphWidget(
                title="Per tenant: contested records, denials, overdue erasures",
                left=[per_tenant("ContestedRecords"), per_tenant("Denials"), per_tenant("ErasuresOverdue")],
                width=12,
            ),
        )
        return dashboard

    def _stage_alarms(self, config: DeploymentConfig, period: Duration) -> None:
        """p95 of each retrieval stage the handler emits (RetrievalStage_<stage>) over its budget in
        the policy preset, for 15 minutes: where the 80 ms budget goes when it is exceeded."""
        for stage, budget in profile(config.latency_budget_preset).latency_budget_ms.items():
            self._alarm(
                f"RetrievalStage{stage.capitalize()}P95",
                cw.Metric(
                    namespace=METRICS_NAMESPACE,
                    metric_name=f"{RETRIEVAL_STAGE_METRIC_PREFIX}{stage}",
                    dimensions_map={"service": SERVICE_NAME},
                    period=period,
                    statistic="p95",
                ),
                threshold=budget,
                evaluation_periods=3,
                datapoints_to_alarm=3,
                comparison=cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
                description=f"p95 of the retrieval's {stage} stage over its {budget} ms budget "
                f"({config.latency_budget_preset} policy) for 15 minutes.",
            )

    def _alarm(
        self,
        name: str,
        metric: cw.IMetric,
        *,
        threshold: float,
        description: str,
        evaluation_periods: int = 1,
        datapoints_to_alarm: int = 1,
        comparison: cw.ComparisonOperator = cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
    ) -> cw.Alarm:
        alarm = cw.Alarm(
            self,
            name,
            alarm_description=description,
            metric=metric,
            threshold=threshold,
            evaluation_periods=evaluation_periods,
            datapoints_to_alarm=datapoints_to_alarm,
            comparison_operator=comparison,
            treat_missing_data=cw.TreatMissingData.NOT_BREACHING,
        )
        alarm.add_alarm_action(cw_actions.SnsAction(self.topic))
        self.alarms[name] = alarm
        return alarm
