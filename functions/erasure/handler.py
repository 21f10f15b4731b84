"""Subject erasure (start, status and receipt), legal holds, and a subject's export."""

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.openapi.params import Query
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory.api.http import create_app, current_principal
from agent_memory.api.models.erasure import (
    ErasureRequest,
    ErasureStatus,
    LegalHold,
    MemoryHold,
    SubjectExport,
    SubjectHold,
)
from agent_memory.bootstrap import get_container
from agent_memory.observability import logger, metrics, tracer

app = create_app()


@app.post(
    "/v1/subjects/<subject_id>/erasure",
    summary="Erase a subject from every layer (GDPR Art. 17)",
    status_code=202,
)
def request_erasure(subject_id: str, body: ErasureRequest) -> ErasureStatus:
    started = get_container().erasure.request(current_principal(app), subject_id, body)
    return ErasureStatus.model_validate(started)


@app.get("/v1/erasures/<erasure_id>", summary="Erasure steps and, once verified, the receipt")
def erasure_status(erasure_id: str) -> ErasureStatus:
    view = ErasureStatus.model_validate(get_container().erasure.status(current_principal(app), erasure_id))
    if view.deadline_passed:
        metrics.add_metric(name="ErasureDeadlineMissed", unit="Count", value=1)
    return view


@app.post("/v1/subjects/<subject_id>/legal-hold", summary="Set or clear a subject's legal hold")
def subject_hold(subject_id: str, body: LegalHold) -> SubjectHold:
    held = get_container().lifecycle.set_subject_hold(
        current_principal(app), subject_id, hold=body.hold, reason=body.reason
    )
    return SubjectHold.model_validate(held)


@app.post("/v1/memories/<memory_id>/legal-hold", summary="Set or clear one memory's legal hold")
def record_hold(memory_id: str, body: LegalHold) -> MemoryHold:
    held = get_container().lifecycle.set_record_hold(
        current_principal(app), memory_id, hold=body.hold, reason=body.reason
    )
    return MemoryHold.model_validate(held)


@app.get(
    "/v1/subjects/<subject_id>/export",
    summary="Everything held about a subject (all statuses, history, sessions, holds, erasures, audit), "
    "paged with ?cursor=",
)
def export_subject(
    subject_id: str,
    cursor: Annotated[str | None, Query(max_length=1000)] = None,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> SubjectExport:
    return get_container().export.export(current_principal(app), subject_id, cursor=cursor, limit=limit)


@logger.inject_lambda_context(clear_state=True)
@tracer.capture_lambda_handler
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return app.resolve(event, context)
