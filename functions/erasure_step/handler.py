"""One erasure step, as a Step Functions task: {"erasure_id", "tenant_id", "subject_id", "step"}.

Raises on failure so the state machine's retry policy (from the core step list)
applies; `{"step": "fail", "error": ...}` records a terminal failure.
"""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    erasure = get_container().erasure
    if event["step"] == "fail":
        erasure.fail(
            event["tenant_id"],
            event["erasure_id"],
            str(event.get("failed_step", "unknown")),
            str(event.get("error", "unknown")),
        )
        metrics.add_metric(name="ErasureFailed", unit="Count", value=1)
        return {"status": "failed"}
    return erasure.run_step(event["tenant_id"], event["erasure_id"], event["step"])
