"""After a restore, before the API is opened again: replays the deletion registry (erasures and
deletions made since the backup) into the restored database. Invoked by an operator
(docs/operations.md); the event is ignored. Answers the replay's report (ids and counts)."""

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_container, replay_deletions
from agent_memory.domain.errors import ConfigurationError
from agent_memory.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    report = replay_deletions(get_container())
    if report is None:
        raise ConfigurationError("no deletion registry configured (MEMORY_DELETION_REGISTRY_BUCKET)")
    tenants = report.tenants.values()
    metrics.add_metric(
        name="DeletionReplay_erasures",
        unit=MetricUnit.Count,
        value=sum(t.erasures_reapplied for t in tenants),
    )
    metrics.add_metric(
        name="DeletionReplay_memories",
        unit=MetricUnit.Count,
        value=sum(t.memories_reapplied for t in tenants),
    )
    metrics.add_metric(
        name="DeletionReplay_failed", unit=MetricUnit.Count, value=sum(t.failed for t in tenants)
    )
    return report.as_dict()
