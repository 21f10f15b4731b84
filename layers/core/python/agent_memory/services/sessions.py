"""Session close: accept a closed conversation, queue it, and report what became of it.

The close and its extraction message are one transaction (the outbox, services/outbox.py); the
message is sent after the commit.

The raw transcript is never a memory. It is masked, stored for reprocessing
under a short TTL (object store), linked to every memory drawn from it by the
lineage key `session:<id>`, and covered by erasure.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.admission import MAX_FUTURE_EFFECTIVE
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import Conflict, InvalidRequest, NotFound, PayloadTooLarge, Unavailable
from agent_memory.domain.extraction import MAX_TRANSCRIPT_BYTES, MAX_TURNS, Turn
from agent_memory.domain.hashing import request_fingerprint
from agent_memory.domain.ids import ID_RULE, SubjectId, valid_id
from agent_memory.domain.records import Principal, utcnow
from agent_memory.domain.sanitize import MaskedText, mask_identifiers
from agent_memory.observability import logger
from agent_memory.ports.messaging import ObjectStore
from agent_memory.ports.store import MemoryStore
from agent_memory.services.authorization import cleared_for, require_mutation, require_read
from agent_memory.services.outbox import EXTRACT, OutboxRelay, extraction_key, extraction_message
from agent_memory.services.working import owned_by, working_cleared_events


class CloseSessionRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject_id: SubjectId
    ticket_id: MaskedText | None = Field(default=None, max_length=200)
    channel: MaskedText | None = Field(default=None, max_length=50)
    occurred_at: datetime
    turns: list[Turn] = Field(min_length=1, max_length=MAX_TURNS)


def transcript_key(tenant_id: str, subject_id: str, session_id: str) -> str:
    return f"transcripts/{tenant_id}/{subject_id}/{session_id}.json"


def subject_prefix(tenant_id: str, subject_id: str) -> str:
    return f"transcripts/{tenant_id}/{subject_id}/"


class SessionService:
    def __init__(self, store: MemoryStore, outbox: OutboxRelay, objects: ObjectStore | None) -> None:
        self.store = store
        self.outbox = outbox
        self.objects = objects

    def close(self, principal: Principal, session_id: str, request: CloseSessionRequest) -> dict[str, Any]:
        """Record the closed session, its masked transcript and its extraction message in one
        transaction, then send the message (202 `queued` even when that send fails: the message
        stays in the outbox and the relay sweep sends it)."""
        require_mutation(principal, Role.AGENT, action="close sessions")
        if not valid_id(session_id):
            # Every memory extracted from the session carries its id: an id that cannot be stored
            # there is refused here, not discovered by the worker.
            raise InvalidRequest(f"session_id must be {ID_RULE}", field="session_id")
        _check_occurred_at(request)
        if self.outbox.queue is None or self.objects is None:
            raise Unavailable("the extraction queue is not configured")
        masked_turns, transcript = _masked_transcript(session_id, request)
        digest = request_fingerprint({"subject": request.subject_id, "turns": masked_turns})
        key = transcript_key(principal.tenant_id, request.subject_id, session_id)
        outbox_key = extraction_key(session_id)
        message = extraction_message(principal.tenant_id, session_id)
        queued = {"session_id": session_id, "status": "queued"}
        with self.store.tenant(principal.tenant_id) as s:
            # One close or working-memory write of the id at a time: identical concurrent closes
            # wait for the first and answer as its replay, and no value lands between check and close.
            s.lock_working_session(session_id)
            if not owned_by(s, principal, session_id, request.subject_id, route="close"):
                return queued  # another subject's session, outside the token: as an unused id, unchanged
            existing = s.get_session(session_id, for_update=True)
            if existing is not None:
                if existing["transcript_hash"] != digest:
                    raise Conflict("session was already closed with different turns", field="turns")
                if existing["status"] != "queued":
                    return {"session_id": session_id, "status": existing["status"]}
                # Still queued: its message may be pending (a send that failed). A session closed
                # before the outbox existed gets its row here.
                s.record_outbox(outbox_key, EXTRACT, message)
            else:
                if not s.insert_session(
                    session_id=session_id,
                    subject_id=request.subject_id,
                    ticket_id=request.ticket_id,
                    channel=request.channel,
                    occurred_at=request.occurred_at,
                    transcript_hash=digest,
                    transcript_key=key,
                    turns=len(masked_turns),
                    closed_by=principal.sub,
                ):  # every close takes the session's lock first: only a close that skipped it
                    raise Conflict(
                        "the session was closed concurrently; send the close again", field="session_id"
                    )
                # rearm: a row left by an earlier session of this id (erased since) is sent again.
                s.record_outbox(outbox_key, EXTRACT, message, rearm=True)
                # Inside the transaction: if storing fails, the close is not recorded and can be retried.
                self.objects.put_json(key, transcript)
            # The session's working memory ends with it (the transcript is the only way from working
            # to long-term memory); under the session's lock, so no write lands after the close.
            cleared = s.clear_working_session(session_id)
            if cleared:
                s.append_events(working_cleared_events(principal.sub, session_id, cleared, "session_closed"))
        # After the commit, never before: a worker given the message must find the session.
        self._relay(principal.tenant_id, outbox_key, session_id)
        if existing is None:
            logger.info("session queued", extra={"session_id": session_id, "turns": len(masked_turns)})
        return queued

    def _relay(self, tenant_id: str, outbox_key: str, session_id: str) -> None:
        try:
            self.outbox.relay(tenant_id, outbox_key)
        except Exception as exc:  # the message is committed and stays pending for the sweep
            logger.warning(
                "extraction message left pending for the relay sweep",
                extra={"session_id": session_id, "error": type(exc).__name__},
            )

    def status(self, principal: Principal, session_id: str) -> dict[str, Any]:
        require_read(principal, Role.AGENT)
        with self.store.tenant(principal.tenant_id) as s:
            row = s.get_session(session_id)
        if row is None:
            raise NotFound(f"session {session_id} not found")
        outcome = row["outcome"] or {}
        view = {
            "session_id": session_id,
            "subject_id": row["subject_id"],
            "status": row["status"],
            "admitted": outcome.get("admitted", 0),
            "pending_approval": outcome.get("pending_approval", 0),
            "rejected": outcome.get("rejected", 0),
            "quarantined": outcome.get("quarantined", 0),
            "contested": outcome.get("contested", 0),
            "duplicate": outcome.get("duplicate", 0),
            "not_stored": outcome.get("not_stored", 0),
            "memory_ids": row["memory_ids"],
            "attempts": row["attempts"],
            "extractor": row["extractor"],
        }
        if row["failure_reason"]:
            view["reason"] = row["failure_reason"]
        return view

    def extraction(self, principal: Principal, session_id: str) -> dict[str, Any]:
        """Every statement of a processed session with its decision, reason and score (an agent for
        the subjects its token may see, row-level security deciding; a reviewer)."""
        require_read(principal, Role.AGENT, Role.REVIEWER)
        with self.store.tenant(principal.tenant_id) as s:
            row = s.get_session(session_id)
            statements = s.extraction_report(session_id) if row is not None else None
        if row is None:
            raise NotFound(f"session {session_id} not found")
        return {
            "session_id": session_id,
            "subject_id": row["subject_id"],
            "status": row["status"],
            "available": statements is not None,
            "statements": [_cleared_statement(principal, st) for st in statements or []],
        }


WITHHELD_TEXT = "[withheld: above your clearance]"


def _cleared_statement(principal: Principal, statement: dict[str, Any]) -> dict[str, Any]:
    """A statement as the caller may see it: one whose memory is above the caller's clearance
    shows neither its text nor the memory (the clearance rule of every route)."""
    sensitivity = statement.get("sensitivity")
    shown = {k: v for k, v in statement.items() if k != "sensitivity"}
    if sensitivity is not None and not cleared_for(principal, Sensitivity(sensitivity)):
        shown.update(text=WITHHELD_TEXT, memory_id=None, withheld=True)
    return shown


def _check_occurred_at(request: CloseSessionRequest) -> None:
    occurred_at = (
        request.occurred_at if request.occurred_at.tzinfo else request.occurred_at.replace(tzinfo=UTC)
    )
    if occurred_at > utcnow() + MAX_FUTURE_EFFECTIVE:
        # Every memory drawn from it would be refused for the same reason: say so now, at close.
        raise InvalidRequest("occurred_at may lie at most one day after now", field="occurred_at")


def _masked_transcript(
    session_id: str, request: CloseSessionRequest
) -> tuple[list[dict[str, str]], dict[str, Any]]:
    """The turns with identifiers masked, and the transcript stored for the worker (size-checked)."""
    masked_turns = [
        {"speaker": t.speaker.value, "text": mask_identifiers(t.text).text} for t in request.turns
    ]
    transcript = {
        "session_id": session_id,
        "subject_id": request.subject_id,
        "ticket_id": request.ticket_id,
        "channel": request.channel,
        "occurred_at": request.occurred_at.isoformat(),
        "turns": masked_turns,
    }
    if len(json.dumps(transcript).encode()) > MAX_TRANSCRIPT_BYTES:
        raise PayloadTooLarge(f"transcript exceeds {MAX_TRANSCRIPT_BYTES} bytes", field="turns")
    return masked_turns, transcript
