"""Outbox relay (EventBridge schedule, every minute): send the extraction messages left pending,
queue again the sessions that made no progress, trim the messages delivered long ago."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

METRICS = {
    "relayed": "OutboxRelayed",
    "send_failures": "OutboxSendFailures",
    "requeued": "SessionsRequeued",
    "given_up": "SessionsGivenUp",
    "trimmed": "OutboxTrimmed",
}


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = get_container().outbox.sweep()
    for field, name in METRICS.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=getattr(report, field))
    return report.as_dict()
