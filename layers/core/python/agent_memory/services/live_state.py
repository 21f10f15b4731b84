"""What the system of record says for one retrieval: the live values of the slots its candidates
occupy and the named ticket, asked at the same time, each failing on its own; and how they head
the context (pinned: the budget never drops them)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Any

from agent_memory.domain.context import (
    LIVE_UNAVAILABLE_LINE,
    TICKET_NOT_FOUND_LINE,
    TICKET_UNAVAILABLE_LINE,
    ContextLine,
    minimum_tokens,
    render_live,
    render_ticket,
)
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.records import Principal
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.observability import logger
from agent_memory.ports.system_of_record import (
    LiveValue,
    SystemOfRecord,
    SystemOfRecordUnavailable,
    TicketState,
)

# The ticket is asked while the account values are: threads, since both adapters block on I/O.
_SOR_CALLS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="system-of-record")


@dataclass
class LiveState:
    """What the system of record said, for one retrieval."""

    values: dict[str, LiveValue] = field(default_factory=dict)
    ticket: TicketState | None = None
    account_unavailable: bool = False
    ticket_unavailable: bool = False
    ticket_not_found: bool = False
    withheld: list[str] = field(default_factory=list)


def read_live_state(
    sor: SystemOfRecord, principal: Principal, subject_id: str, ticket_id: str | None, fields: set[str]
) -> LiveState:
    """Live values of `fields` (the slots the caller's candidates occupy), and the ticket, each
    asked on its own and at the same time: one failing never costs the other, and an outage costs
    one timeout, not two."""
    live = LiveState()
    if principal.subjects is not None and subject_id not in principal.subjects:
        # A token bound to other subjects learns of this one what it would of an unknown
        # subject: no live values, no ticket. Checked here, above every adapter and its cache.
        live.ticket_not_found = bool(ticket_id)
        return live
    ticket_call = (
        _SOR_CALLS.submit(
            contextvars.copy_context().run,  # the caller (and its binding) follow the call
            sor.ticket,
            principal.tenant_id,
            subject_id,
            ticket_id,
        )
        if ticket_id and fields
        else None
    )
    if fields:
        _read_account(sor, live, principal.tenant_id, subject_id, fields)
    if ticket_id:
        answer = (
            ticket_call.result
            if ticket_call is not None
            else partial(sor.ticket, principal.tenant_id, subject_id, ticket_id)
        )
        _read_ticket(live, ticket_id, answer)
    return live


def _read_account(
    sor: SystemOfRecord, live: LiveState, tenant_id: str, subject_id: str, fields: set[str]
) -> None:
    try:
        values = sor.account_values(tenant_id, subject_id)
    except SystemOfRecordUnavailable as exc:
        live.account_unavailable = True
        logger.warning("system of record unavailable", extra={"part": "account", "error": str(exc)})
        return
    # Only the fields of memories the caller may see: the rest of the account is not theirs to
    # read (clearance), and a field with no value asserts nothing.
    for f in sorted(fields):
        lv = values.get(f)
        if lv is None or lv.value is None or (isinstance(lv.value, str) and not lv.value.strip()):
            continue
        if screen_for_instructions(str(lv.value)).flagged:
            live.withheld.append(f)
            continue
        live.values[f] = lv
    if live.withheld:
        logger.warning("instruction-like live values withheld", extra={"fields": live.withheld})


def _read_ticket(live: LiveState, ticket_id: str, answer: Callable[[], TicketState | None]) -> None:
    try:
        ticket = answer()
    except SystemOfRecordUnavailable as exc:
        live.ticket_unavailable = True
        logger.warning("system of record unavailable", extra={"part": "ticket", "error": str(exc)})
        return
    if ticket is None:
        live.ticket_not_found = True  # an answer, not an outage: none for this customer
    elif screen_for_instructions(
        " ".join(x for x in (ticket.status, ticket.priority, ticket.owner) if x)
    ).flagged:
        live.ticket_unavailable = True
        logger.warning("instruction-like ticket state withheld")
    else:  # shown under the id the caller asked for, whatever the answer called it
        live.ticket = replace(ticket, ticket_id=ticket_id)


def pinned_lines(subject_id: str, live: LiveState, max_tokens: int) -> tuple[list[ContextLine], int]:
    """The lines the budget never drops (the ticket's and the account's live state), the notes on
    what could not be read where the budget allows them, and what they cost in tokens. A budget
    below that is refused."""
    pinned: list[ContextLine] = []
    if live.ticket is not None:
        pinned.append(ContextLine("ticket", "ticket", render_ticket(live.ticket), pinned=True))
    for f, lv in sorted(live.values.items()):
        pinned.append(ContextLine(f"live:{f}", "live", render_live(lv), pinned=True))
    # Notes on what could not be read: shown when the budget allows, never the reason to refuse a
    # budget that holds the context itself.
    notes: list[ContextLine] = []
    if live.ticket_unavailable:
        notes.append(ContextLine("ticket:note", "ticket", TICKET_UNAVAILABLE_LINE, pinned=True))
    elif live.ticket_not_found:
        notes.append(ContextLine("ticket:note", "ticket", TICKET_NOT_FOUND_LINE, pinned=True))
    if live.account_unavailable or live.withheld:
        notes.append(ContextLine("live:note", "live", LIVE_UNAVAILABLE_LINE, pinned=True))
    for note in sorted(notes, key=lambda n: n.section != "live"):  # the account note matters most
        if minimum_tokens(subject_id, [*pinned, note]) <= max_tokens:
            pinned.append(note)
    floor_tokens = minimum_tokens(subject_id, pinned)
    if floor_tokens > max_tokens:
        raise InvalidRequest(
            f"max_tokens {max_tokens} is below the mandatory context ({floor_tokens} tokens: delimiters"
            + (", live ticket state" if live.ticket else "")
            + (", live account values" if live.values else "")
            + ")",
            field="max_tokens",
        )
    return pinned, floor_tokens


def live_views(live: LiveState, overrides: dict[str, list[str]]) -> list[dict[str, Any]]:
    """The live values as the response lists them, each with the memories it overrode."""
    return [
        {
            "field": lv.field,
            "value": lv.value,
            "as_of": lv.as_of.isoformat() if lv.as_of else None,
            "overrides": overrides.get(f, []),
        }
        for f, lv in sorted(live.values.items())
    ]
