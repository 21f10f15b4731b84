"""A customer's statement about a value the system of record owns (plan tier, seats) is a claim to
check against the live value, never a memory of its own (domain/statement_rules.py).

Matching the live value confirms it: the slot's active memory, if flagged for revalidation, is
cleared. Contradicting it flags the slot for revalidation: the slot's active memory, if any, is
flagged `needs_revalidation`, and the audit trail gets a `memory_revalidation_due` event naming the
field (never the statement). Either way the live value is what retrieval shows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from agent_memory.domain.enums import EventType
from agent_memory.domain.freshness import names_value
from agent_memory.observability import logger
from agent_memory.ports.store import NewEvent, TenantSession
from agent_memory.ports.system_of_record import SystemOfRecord, SystemOfRecordUnavailable

MATCHES_LIVE_VALUE = "matches_live_value"
CONTRADICTS_LIVE_VALUE = "contradicts_live_value"
NO_LIVE_VALUE = "no_live_value"
LIVE_VALUE_UNAVAILABLE = "live_value_unavailable"


@dataclass(frozen=True)
class ClaimVerdicts:
    """Per claim, in order: the outcome of its check; and when the live values were read."""

    outcomes: list[str]
    read_at: datetime | None


def judge_claims(
    sor: SystemOfRecord, tenant_id: str, subject_id: str, claims: Sequence[tuple[str, str]]
) -> ClaimVerdicts:
    """Each (statement text, field) against the live value of its field (read once)."""
    if not claims:
        return ClaimVerdicts([], None)
    try:
        values = sor.account_values(tenant_id, subject_id)
    except SystemOfRecordUnavailable as exc:
        logger.warning("system of record unavailable for a claim check", extra={"error": str(exc)})
        return ClaimVerdicts([LIVE_VALUE_UNAVAILABLE] * len(claims), None)
    outcomes: list[str] = []
    read_at: datetime | None = None
    for text, field in claims:
        live = values.get(field)
        if live is None or live.value is None or not str(live.value).strip():
            outcomes.append(NO_LIVE_VALUE)
            continue
        read_at = live.read_at if read_at is None else min(read_at, live.read_at)
        outcomes.append(MATCHES_LIVE_VALUE if names_value(text, live.value) else CONTRADICTS_LIVE_VALUE)
    return ClaimVerdicts(outcomes, read_at)


def record_claims(
    session: TenantSession,
    actor: str,
    subject_id: str,
    checked: Sequence[tuple[str, str]],
    slot_of_field: Mapping[str, str],
    read_at: datetime | None,
) -> list[str | None]:
    """What the checked claims (field, outcome) do to the slots' active memories, in the caller's
    transaction; returns, per claim, the id of the memory it confirmed or flagged (None: none)."""
    ids: list[str | None] = []
    stale: dict[str, str] = {}
    agreeing: dict[str, str] = {}
    contradicted: set[str] = set()
    for field, outcome in checked:
        slot = slot_of_field.get(field)
        record = (
            session.active_for_slot(subject_id, slot)
            if slot and outcome in (MATCHES_LIVE_VALUE, CONTRADICTS_LIVE_VALUE)
            else None
        )
        ids.append(record.id if record is not None else None)
        if outcome == CONTRADICTS_LIVE_VALUE:
            contradicted.add(field)
        if record is not None:
            (stale if outcome == CONTRADICTS_LIVE_VALUE else agreeing)[record.id] = field
    events = [
        NewEvent(
            EventType.REVALIDATION_DUE.value,
            actor,
            None,
            subject_id,
            "customer_claim_contradicts_live_value",
            {"field": field},
        )
        for field in sorted(contradicted)
    ]
    if read_at is not None and (stale or agreeing):
        flagged, cleared = session.revalidate(sorted(stale), sorted(agreeing), read_at)
        events += [
            NewEvent(
                EventType.UPDATED.value,
                actor,
                mid,
                subject_id,
                reason,
                {"needs_revalidation": flag, "field": fields[mid]},
            )
            for mids, fields, flag, reason in (
                (flagged, stale, True, "needs_revalidation_claim_contradicts_live_value"),
                (cleared, agreeing, False, "revalidated_claim_agrees_with_live_value"),
            )
            for mid in mids
        ]
    if events:
        session.append_events(events)
    return ids
