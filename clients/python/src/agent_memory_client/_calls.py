"""One function per route building its `Call`: the sync and async clients differ only in how
they send it."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from agent_memory_client import models as m
from agent_memory_client._core import Call, body_of, drop_none, prepare, with_idempotency_key
from agent_memory_client._tooling import default_type
from agent_memory_client.errors import InvalidRequest

Body = Mapping[str, Any] | None


def retrieve(subject_id: str, query: str, fields: Mapping[str, Any]) -> Call[m.RetrieveResult]:
    body = body_of(m.RetrieveRequest, None, {"subject_id": subject_id, "query": query, **fields})
    return prepare("retrieve", body=body)


def search_resolutions(query: str, fields: Mapping[str, Any]) -> Call[m.ResolutionSearchResult]:
    return prepare(
        "search_resolutions", body=body_of(m.ResolutionSearchRequest, None, {"query": query, **fields})
    )


def write_memory(memory: m.MemoryWrite | Body, fields: Mapping[str, Any]) -> Call[m.WriteResult]:
    return prepare("write_memory", body=with_idempotency_key(body_of(m.MemoryWrite, memory, fields)))


def remember(
    subject_id: str, content: str, fields: Mapping[str, Any]
) -> tuple[Call[m.WriteResult], Call[m.WriteResult] | None]:
    """A note's write, and the typed write to send instead when the service refuses a content-only
    body (one that predates content-only notes answers 422 naming `type` or `source`).

    With only a session the note goes content-only and the service classifies it; with a type,
    slot, category, source or ticket, or as the fallback, it goes as the typed write the adapters
    always sent: the type from the slot (`preference.*` a preference, another slot a fact, none an
    observation) and an agent's source."""
    given = {k: v for k, v in fields.items() if v is not None}
    note = m.MemoryNote.model_validate(
        {
            "subject_id": subject_id,
            "content": content,
            **{k: v for k, v in given.items() if k == "session_id"},
        }
    )
    typed = m.MemoryWrite.model_validate(
        {
            "subject_id": subject_id,
            "content": content,
            **given,
            "type": given.get("type") or default_type(given.get("slot")),
            "source": given.get("source") or m.Source(kind="customer_claim"),
        }
    )
    typed_call: Call[m.WriteResult] = prepare("write_memory", body=with_idempotency_key(typed))
    if given.keys() - {"session_id"}:
        return typed_call, None
    return prepare("write_memory", body=note), typed_call


def content_only_refused(error: InvalidRequest) -> bool:
    """Whether a 422 is a service that needs a type and source (it predates content-only notes)."""
    return (error.field or "").split(".")[0] in {"type", "source"}


def get_memory(memory_id: str) -> Call[m.MemoryDetail]:
    return prepare("get_memory", {"memory_id": memory_id})


def delete_memory(memory_id: str, reason: str) -> Call[m.ForgetResult]:
    return prepare("delete_memory", {"memory_id": memory_id}, m.ForgetRequest(reason=reason))


def revalidate(memory_id: str) -> Call[m.MemoryRecord]:
    return prepare("revalidate", {"memory_id": memory_id})


def close_commitment(memory_id: str, fields: Mapping[str, Any]) -> Call[m.CommitmentClosed]:
    return prepare("close_commitment", {"memory_id": memory_id}, body_of(m.CloseCommitment, None, fields))


def list_memories(
    subject_id: str, status: str | None, type: str | None, cursor: str | None, limit: int | None
) -> Call[m.MemoryPage]:
    params = {"status": status, "type": type, "cursor": cursor, "limit": limit}
    return prepare("list_memories", {"subject_id": subject_id}, params=params)


def close_session(
    session_id: str, request: m.CloseSessionRequest | Body, fields: Mapping[str, Any]
) -> Call[m.SessionAccepted]:
    body = body_of(m.CloseSessionRequest, request, fields)
    return prepare("close_session", {"session_id": session_id}, body)


def get_session(session_id: str) -> Call[m.SessionStatus]:
    return prepare("get_session", {"session_id": session_id})


def get_extraction(session_id: str) -> Call[m.ExtractionReport]:
    return prepare("get_extraction", {"session_id": session_id})


def working_set(
    session_id: str, key: str, value: Any, subject_id: str, ttl_seconds: int | None
) -> Call[m.WorkingItem]:
    body = body_of(
        m.WorkingPutRequest,
        None,
        {"subject_id": subject_id, "value": value, **drop_none(ttl_seconds=ttl_seconds)},
    )
    return prepare("working_set", {"session_id": session_id, "key": key}, body)


def working_get(session_id: str) -> Call[m.WorkingSession]:
    return prepare("working_get", {"session_id": session_id})


def working_delete(session_id: str, key: str) -> Call[None]:
    return prepare("working_delete", {"session_id": session_id, "key": key})


def review_queue(cursor: str | None, limit: int | None, group_similar: bool = False) -> Call[m.ReviewPage]:
    params: dict[str, Any] = {"cursor": cursor, "limit": limit}
    if group_similar:
        params["group_similar"] = "true"
    return prepare("review_queue", params=params)


def review_decision(
    name: str,
    memory_id: str,
    note: str | None,
    evidence_ref: str | None,
    supersedes: list[str] | None = None,
    independent_reason: str | None = None,
) -> Call[m.ReviewResult]:
    body = m.ReviewDecision(
        **drop_none(
            note=note, evidence_ref=evidence_ref, supersedes=supersedes, independent_reason=independent_reason
        )
    )
    return prepare(name, {"memory_id": memory_id}, body)


def request_erasure(subject_id: str, reason: str, request_reference: str | None) -> Call[m.ErasureStatus]:
    body = m.ErasureRequest(reason=reason, **drop_none(request_reference=request_reference))
    return prepare("request_erasure", {"subject_id": subject_id}, body)


def get_erasure(erasure_id: str) -> Call[m.ErasureStatus]:
    return prepare("get_erasure", {"erasure_id": erasure_id})


def legal_hold_subject(subject_id: str, hold: bool, reason: str) -> Call[m.SubjectHold]:
    return prepare("legal_hold_subject", {"subject_id": subject_id}, m.LegalHold(hold=hold, reason=reason))


def legal_hold_memory(memory_id: str, hold: bool, reason: str) -> Call[m.MemoryHold]:
    return prepare("legal_hold_memory", {"memory_id": memory_id}, m.LegalHold(hold=hold, reason=reason))


def export_subject(subject_id: str, cursor: str | None, limit: int | None) -> Call[m.SubjectExport]:
    return prepare("export_subject", {"subject_id": subject_id}, params={"cursor": cursor, "limit": limit})


def audit(
    subject_id: str | None,
    memory_id: str | None,
    since: datetime | str | None,
    cursor: str | None,
    limit: int | None,
) -> Call[m.AuditPage]:
    params = {
        "subject_id": subject_id,
        "memory_id": memory_id,
        "since": since,
        "cursor": cursor,
        "limit": limit,
    }
    return prepare("audit", params=params)


def get_policy() -> Call[m.PolicyView]:
    return prepare("get_policy")


def put_policy(profile: str, overrides: Mapping[str, Any] | None) -> Call[m.PolicyView]:
    return prepare("put_policy", body=m.PolicyChange(profile=profile, overrides=dict(overrides or {})))


def health() -> Call[m.Health]:
    return prepare("health")


def openapi() -> Call[dict[str, Any]]:
    return cast(Call[dict[str, Any]], prepare("openapi"))


def docs() -> Call[str]:
    return cast(Call[str], prepare("docs"))
