"""POST /v1/retrieve: the memory context for an agent's next turn.
POST /v1/resolutions/search: reusable resolutions across the tenant (HNSW, iterative scan)."""

import time
from typing import Any

from aws_lambda_powertools.event_handler import Response, content_types
from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.retrieve import (
    ResolutionSearchRequest,
    ResolutionSearchResponse,
    RetrieveRequest,
    RetrieveResponse,
)
from agent_memory.bootstrap import get_container
from agent_memory.observability import (
    RETRIEVAL_STAGE_METRIC_PREFIX,
    SOR_UNAVAILABLE_METRIC,
    logger,
    metrics,
    tracer,
)

app = create_app()


@app.post("/v1/retrieve", summary="Authorized, fresh, conflict-free, budgeted memory context")
def retrieve(body: RetrieveRequest) -> Response[RetrieveResponse]:
    result = get_container().broker.retrieve(current_principal(app), body)
    t0 = time.perf_counter()
    answer = RetrieveResponse.model_validate(result.public_view())
    stages = {**result.timings_ms, "serialize": (time.perf_counter() - t0) * 1000}
    metrics.add_metric(name="RetrievalLatency", unit=MetricUnit.Milliseconds, value=stages["total"])
    metrics.add_metric(name="RetrievalDbLatency", unit=MetricUnit.Milliseconds, value=stages["db"])
    for stage, ms in stages.items():  # the latency budget per stage (docs/operations.md)
        metrics.add_metric(
            name=f"{RETRIEVAL_STAGE_METRIC_PREFIX}{stage}", unit=MetricUnit.Milliseconds, value=ms
        )
    metrics.add_metric(name="RetrievalCandidates", unit=MetricUnit.Count, value=result.candidates)
    metrics.add_metric(name="RetrievalReturned", unit=MetricUnit.Count, value=len(result.memories))
    for reason, n in result.excluded.items():
        metrics.add_metric(name=f"RetrievalExcluded_{reason}", unit=MetricUnit.Count, value=n)
    if result.live_unavailable or result.ticket_unavailable:
        metrics.add_metric(name=SOR_UNAVAILABLE_METRIC, unit=MetricUnit.Count, value=1)
    # Server-Timing (W3C): the same stages for whoever calls, without reading the logs.
    timing = ", ".join(f"{stage};dur={ms:.2f}" for stage, ms in stages.items())
    return Response(
        status_code=200,
        content_type=content_types.APPLICATION_JSON,
        body=answer,
        headers={"Server-Timing": timing},
    )


@app.post("/v1/resolutions/search", summary="Reusable resolutions across the tenant's subjects")
def search_resolutions(body: ResolutionSearchRequest) -> ResolutionSearchResponse:
    result = get_container().broker.search_resolutions(current_principal(app), body)
    metrics.add_metric(
        name="ResolutionSearchReturned", unit=MetricUnit.Count, value=len(result["resolutions"])
    )
    return ResolutionSearchResponse.model_validate(result)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
