"""Typed rows of the tenant session's reads: each holds exactly the columns its statement returns.

The PostgreSQL session reads rows as dictionaries keyed by column name; these types name those
keys and their values, so a service that indexes a row with a column the statement does not
return is caught by the type checker instead of by a KeyError in production.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # only the embedding functions load numpy; these types only name it
    import numpy as np

# -- sessions and the outbox ------------------------------------------------------------


class SessionRow(TypedDict):
    """One closed session: every column of `sessions`."""

    tenant_id: str
    session_id: str
    subject_id: str
    ticket_id: str | None
    channel: str | None
    occurred_at: datetime
    transcript_hash: str
    transcript_key: str | None
    turns: int
    status: str  # queued, processing, processed or failed
    attempts: int
    outcome: dict[str, Any]  # counts of the extraction's decisions, {} until it finished
    memory_ids: list[str]
    failure_reason: str | None
    extractor: str | None
    created_at: datetime
    updated_at: datetime
    closed_by: str | None  # the token subject that closed it (None: closed before this was kept)


class UnfinishedSession(TypedDict):
    """A session still queued or processing, as the relay sweep reads it."""

    session_id: str
    status: str
    attempts: int


class OutboxRow(TypedDict):
    """One recorded queue message: every column of `outbox`."""

    tenant_id: str
    dedupe_key: str
    kind: str
    payload: dict[str, Any]
    created_at: datetime
    sent_at: datetime | None  # None while pending
    attempts: int
    last_error: str | None  # the last failed send's error class


# -- lifecycle: purge, revalidation, holds, consolidation -------------------------------


class ExpiredRecord(TypedDict):
    """A record the purge expired (or deleted): enough for its audit event, no content."""

    id: str
    subject_id: str
    content_hash: str


class DeletedRecord(ExpiredRecord):
    """A record the purge deleted, with the keyset cursor the next batch starts after."""

    cursor: str


class RevalidationFlag(TypedDict):
    """A record flagged `needs_revalidation`."""

    id: str
    subject_id: str
    type: str


class SessionTranscript(TypedDict):
    """A session whose stored transcript is past its retention."""

    session_id: str
    transcript_key: str  # the statement reads only sessions that still have one


class HeldRecord(TypedDict):
    """A record whose legal hold was set or cleared, and that hold's id (None: it had none)."""

    id: str
    subject_id: str
    hold_id: str | None


class DuplicateGroup(TypedDict):
    """Active append-only memories of one subject with the same normalised content."""

    subject_id: str
    type: str
    content_hash: str
    ids: list[str]  # oldest first: the first is kept


class NearDuplicatePair(TypedDict):
    """An older memory and a newer, similar one to fold into it."""

    keep: str
    merge: str


class ObservationRow(TypedDict):
    """A quarantined observation with its vector, for corroboration."""

    id: str
    subject_id: str
    session_id: str | None
    actor: str
    confidence: float
    embedding: np.ndarray  # the statement reads only observations that have one
    created_at: datetime


# -- erasure ------------------------------------------------------------------------------


class ErasureRow(TypedDict):
    """One erasure request: every column of `erasure_requests`."""

    tenant_id: str
    erasure_id: str
    subject_id: str
    reason: str | None  # the requester's words: none once the erasure is verified
    request_reference: str | None  # likewise
    request_reference_sha256: str | None  # `erasure_reference_digest` of the reference, kept
    requested_by: str
    status: str  # running, verified or failed
    steps: list[dict[str, Any]]  # one entry per step: name, status and its counts
    lineage_keys: list[str]
    receipt: dict[str, Any] | None
    failure_reason: str | None
    deadline: datetime
    created_at: datetime
    updated_at: datetime
    completed_at: datetime | None
    completes_erasure_id: str | None  # the erasure whose held records this one erased


class OverdueErasure(TypedDict):
    """A running erasure past its deadline."""

    erasure_id: str
    subject_id: str
    deadline: datetime


class SubjectLineage(TypedDict):
    """What was derived from a subject: the keys and hashes its erasure tombstones and purges."""

    records: int
    lineage: list[str]
    hashes: list[str]
    sessions: list[str]  # "session:<id>" lineage keys
    transcripts: list[str]  # transcript object keys


# -- a subject's export -------------------------------------------------------------------


class SubjectSessionRow(TypedDict):
    """One of a subject's closed sessions, as the export lists them."""

    session_id: str
    ticket_id: str | None
    channel: str | None
    occurred_at: datetime
    status: str
    turns: int
    transcript_key: str | None
    transcript_hash: str
    memory_ids: list[str]
    outcome: dict[str, Any]
    failure_reason: str | None
    extractor: str | None
    created_at: datetime
    updated_at: datetime


class SubjectErasureRow(TypedDict):
    """One of a subject's erasure requests, as the export lists them."""

    erasure_id: str
    status: str
    reason: str
    request_reference: str | None
    requested_by: str
    deadline: datetime
    receipt: dict[str, Any] | None
    failure_reason: str | None
    created_at: datetime
    completed_at: datetime | None


class SubjectHold(TypedDict):
    """A subject's legal hold."""

    hold_id: str
    reason: str
    set_by: str
    set_at: datetime
