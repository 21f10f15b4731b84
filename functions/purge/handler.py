"""Nightly lifecycle (EventBridge schedule): TTL purge, hard delete, consolidation, access-log sealing."""

from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_container
from agent_memory.observability import emit_tenant_gauges, logger, metrics, tracer
from agent_memory.services.stats import gauges, tenant_stats


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    detail = event.get("detail") or {}
    report = get_container().lifecycle.purge(dry_run=bool(detail.get("dry_run", False)))
    for name in ("expired", "deleted", "held", "merged", "promoted", "overdue_erasures"):
        metrics.add_metric(name=f"Purge_{name}", unit=MetricUnit.Count, value=getattr(report, name))
    if report.overdue_erasures:
        metrics.add_metric(name="ErasureDeadlineMissed", unit=MetricUnit.Count, value=report.overdue_erasures)
    if not report.dry_run:  # the operating figures per tenant, for the dashboard (services/stats.py)
        since = datetime.now(UTC) - timedelta(days=1)
        for tenant in report.tenants:
            emit_tenant_gauges(tenant, gauges(tenant_stats(get_container().store, tenant, since)))
    return report.as_dict()
