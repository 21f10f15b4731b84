"""The retrieval broker: authorize -> scope in SQL -> hybrid candidates -> floor
-> rank -> freshness gate against the system of record -> one version per slot
-> token-budgeted context inside untrusted-data delimiters -> access log."""

from __future__ import annotations

import contextvars
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime
from decimal import Decimal
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agent_memory.domain.context import (
    SECTIONS,
    ContextLine,
    assemble,
    escape_text,
    mark_needs_revalidation,
    minimum_tokens,
)
from agent_memory.domain.enums import Authority, EventType, MemoryType, Role
from agent_memory.domain.errors import InvalidRequest, PayloadTooLarge, Unavailable
from agent_memory.domain.ids import ID_MAX_LENGTH, ID_PATTERN, SubjectId
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.ranking import (
    Candidate,
    is_relevant,
    rank_candidates,
    similarity_floor,
    topical_query,
)
from agent_memory.domain.records import MemoryRecord, Principal, RetrievedMemory, utcnow
from agent_memory.domain.sanitize import MaskedText
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.observability import logger
from agent_memory.ports.embedder import Embedder
from agent_memory.ports.store import (
    MemoryStore,
    NewEvent,
    RetrievalReader,
    RetrievalRow,
    TenantSession,
    WorkingItem,
)
from agent_memory.ports.system_of_record import (
    LiveValue,
    SystemOfRecord,
    SystemOfRecordUnavailable,
    TicketState,
)
from agent_memory.services.authorization import require_read
from agent_memory.services.policies import PolicyRegistry

MAX_QUERY_CHARS = 8000
# The ticket is asked while the account values are: threads, since both adapters block on I/O.
_SOR_CALLS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="system-of-record")
MAX_TOP_K = 50
SlotName = Annotated[str, StringConstraints(max_length=128, pattern=r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")]
CANDIDATES_PER_SIGNAL = 50
VERIFIED_FACTS_CAP = 20


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject_id: SubjectId
    query: str = Field(default="", max_length=200_000)
    ticket_id: MaskedText | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"
    )
    top_k: int | None = Field(default=None, ge=1, le=MAX_TOP_K)
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    types: list[MemoryType] | None = Field(default=None, max_length=len(MemoryType))
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_LENGTH,
        pattern=ID_PATTERN,
        description="the open session: its live working values come back as section `working`",
    )
    slots: list[SlotName] | None = Field(
        default=None,
        max_length=20,
        description="slots asked for by name: their memories are returned even below the relevance floor",
    )


class ResolutionSearchRequest(BaseModel):
    """Tenant-wide search of reusable knowledge: resolutions and tenant-scoped memories."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(max_length=200_000)
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)
    subject_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_LENGTH,
        pattern=ID_PATTERN,
        description="the customer being served (access log only)",
    )
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)


TENANT_WIDE = "tenant"  # the access log's subject for a tenant-wide search with no subject named


@dataclass
class Retrieval:
    subject_id: str
    context: str
    memories: list[dict[str, Any]]
    live: list[dict[str, Any]]
    excluded: dict[str, int]
    tokens: int
    max_tokens: int
    live_unavailable: bool = False
    ticket_unavailable: bool = False
    ticket_not_found: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)
    candidates: int = 0
    working: list[dict[str, Any]] | None = None  # the session's working values shown (session_id given)

    def public_view(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject_id": self.subject_id,
            "context": self.context,
            "memories": self.memories,
            "live": self.live,
            "excluded": self.excluded,
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
        }
        if self.live_unavailable:
            out["live_unavailable"] = True
        if self.ticket_unavailable:
            out["ticket_unavailable"] = True
        if self.ticket_not_found:
            out["ticket_not_found"] = True
        if self.working is not None:
            out["working"] = self.working
        return out


class RetrievalBroker:
    def __init__(
        self,
        store: MemoryStore,
        embedder: Embedder,
        policies: PolicyRegistry,
        system_of_record: SystemOfRecord,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.policies = policies
        self.sor = system_of_record
        self.clock = clock

    def retrieve(
        self, principal: Principal, request: RetrieveRequest, *, query_embedding: np.ndarray | None = None
    ) -> Retrieval:
        require_read(principal, Role.AGENT)
        _check_query(request.query)
        policy = self.policies.for_tenant(principal.tenant_id)
        top_k = request.top_k or policy.retrieval_top_k
        max_tokens = _budget(policy, request.max_tokens)
        timings: dict[str, float] = {}
        now = self.clock()

        t0 = time.perf_counter()
        if query_embedding is None:
            query_embedding = self._embed(request.query)
        timings["embed"] = (time.perf_counter() - t0) * 1000

        # Two statements, no transaction around them: the candidates, then the access event.
        with self.store.reader(principal.tenant_id) as reader:
            t1 = time.perf_counter()
            rows = reader.retrieval_candidates(
                subject_id=request.subject_id,
                query_embedding=query_embedding,
                query_text=topical_query(request.query),
                types=[t.value for t in request.types] if request.types else None,
                max_sensitivity_rank=principal.clearance.rank,
                now=now,
                per_signal=max(CANDIDATES_PER_SIGNAL, top_k * 4),
                ticket_id=request.ticket_id,
            )
            timings["db"] = (time.perf_counter() - t1) * 1000
            # The session's working values: one more statement, only when a session is named.
            working = (
                reader.live_working_items(session_id=request.session_id, subject_id=request.subject_id)
                if request.session_id
                else []
            )
            ranking = self._rank(rows, policy, top_k, now)
            if not (ranking.owned or request.ticket_id):  # nothing to ask the system of record
                result = self._compose(
                    principal, request, policy, ranking, top_k, max_tokens, _Live(), working=working
                )
                _decisions(result)  # none: no memory in a slot the system of record owns
                self._log_access(reader, principal, request, result)
        if ranking.owned or request.ticket_id:
            # The system of record is called with no connection held: a slow answer holds no
            # database connection, and the local adapter's own connection can never wait on ours.
            live = self._live(principal, request, ranking)
            result = self._compose(
                principal, request, policy, ranking, top_k, max_tokens, live, working=working
            )
            with self.store.tenant(principal.tenant_id, reuse_plans=True) as session:
                self._record(session, principal, request, result)
        timings["total"] = (time.perf_counter() - t0) * 1000
        return Retrieval(
            subject_id=request.subject_id,
            max_tokens=max_tokens,
            timings_ms=timings,
            candidates=ranking.candidates,
            **result,
        )

    def search_resolutions(
        self,
        principal: Principal,
        request: ResolutionSearchRequest,
        *,
        query_embedding: np.ndarray | None = None,
    ) -> dict[str, Any]:
        """Reusable resolutions across the tenant's subjects, nearest first (HNSW, iterative scan).
        Another customer's identity never travels with a hit: no subject, session or ticket ids."""
        require_read(principal, Role.AGENT)
        _check_query(request.query)
        policy = self.policies.for_tenant(principal.tenant_id)
        max_tokens = _budget(policy, request.max_tokens)
        vector = query_embedding if query_embedding is not None else self._embed(request.query)
        if vector is None:
            raise Unavailable("the embedder is unavailable; tenant-wide search needs the query's vector")
        floor = similarity_floor(self.embedder.name)
        now = self.clock()
        with self.store.tenant(principal.tenant_id, reuse_plans=True) as session:
            hits = [
                (r, sim)
                for r, sim in session.search_tenant_wide(
                    query_embedding=vector,
                    max_sensitivity_rank=principal.clearance.rank,
                    now=now,
                    limit=request.top_k,
                )
                if sim >= floor
            ]
            context_subject = request.subject_id or TENANT_WIDE
            lines = [ContextLine(r.id, "relevant", render_reusable(r)) for r, _ in hits]
            assembled = assemble(context_subject, [], lines, max_tokens)
            kept = set(assembled.included)
            results = [
                {
                    "id": r.id,
                    "type": r.type.value,
                    "category": r.category,
                    "content": r.content,
                    "similarity": round(sim, 4),
                    "authority": r.authority.value,
                    "confidence": r.confidence,
                    "effective_at": r.effective_at.isoformat(),
                    "source_kind": r.source.kind.value,
                }
                for r, sim in hits
                if r.id in kept
            ]
            session.log_retrieval(
                subject_id=context_subject,
                actor=principal.sub,
                memory_ids=[r.id for r, _ in hits if r.id in kept],
                payload={"search": "tenant_wide", "tokens": assembled.tokens},
            )
        return {
            "resolutions": results,
            "context": assembled.text,
            "tokens": assembled.tokens,
            "max_tokens": max_tokens,
        }

    @classmethod
    def _record(
        cls, session: TenantSession, principal: Principal, request: RetrieveRequest, result: dict[str, Any]
    ) -> None:
        """What a retrieval that checked the system of record writes, in one transaction: memories
        found contradicting a live value are flagged, flagged ones found agreeing again are cleared
        (an event for each change), and the access event with the ids returned."""
        stale, agreeing, read_at = _decisions(result)
        newly_flagged, cleared = (
            session.revalidate(sorted(stale), sorted(agreeing), read_at)
            if read_at is not None and (stale or agreeing)
            else ([], [])
        )
        changed = [
            (mid, stale[mid], True, "needs_revalidation_contradicts_live_value") for mid in newly_flagged
        ] + [(mid, agreeing[mid], False, "revalidated_agrees_with_live_value") for mid in cleared]
        if changed:
            session.append_events(
                [
                    NewEvent(
                        EventType.UPDATED.value,
                        principal.sub,
                        mid,
                        request.subject_id,
                        reason,
                        {"needs_revalidation": flagged, "field": field_name},
                    )
                    for mid, field_name, flagged, reason in sorted(changed)
                ]
            )
        cls._log_access(session, principal, request, result)

    @staticmethod
    def _log_access(
        session: RetrievalReader, principal: Principal, request: RetrieveRequest, result: dict[str, Any]
    ) -> None:
        """The access event: who retrieved which memories of whom, and what was left out (ids and
        counts, never content). The retrieval answers only once it is written."""
        session.log_retrieval(
            subject_id=request.subject_id,
            actor=principal.sub,
            memory_ids=[m["id"] for m in result["memories"]],
            payload={
                "excluded": result["excluded"],
                "ticket_id": request.ticket_id,
                "live_unavailable": result["live_unavailable"],
                "ticket_unavailable": result["ticket_unavailable"],
                "ticket_not_found": result["ticket_not_found"],
                "tokens": result["tokens"],
                **(
                    {"session_id": request.session_id, "working_items": len(result["working"] or [])}
                    if request.session_id
                    else {}
                ),
            },
        )

    def _live(self, principal: Principal, request: RetrieveRequest, ranking: _Ranking) -> _Live:
        """Live values for the slots the caller's candidates occupy, and the ticket, each asked on
        its own and at the same time: one failing never costs the other, and an outage costs one
        timeout, not two."""
        live = _Live()
        if principal.subjects is not None and request.subject_id not in principal.subjects:
            # A token bound to other subjects learns of this one what it would of an unknown
            # subject: no live values, no ticket. Checked here, above every adapter and its cache.
            live.ticket_not_found = bool(request.ticket_id)
            return live
        fields = set(ranking.owned.values())
        ticket_call = (
            _SOR_CALLS.submit(
                contextvars.copy_context().run,  # the caller (and its binding) follow the call
                self.sor.ticket,
                principal.tenant_id,
                request.subject_id,
                request.ticket_id,
            )
            if request.ticket_id and fields
            else None
        )
        if fields:
            try:
                values = self.sor.account_values(principal.tenant_id, request.subject_id)
            except SystemOfRecordUnavailable as exc:
                live.account_unavailable = True
                logger.warning("system of record unavailable", extra={"part": "account", "error": str(exc)})
            else:
                # Only the fields of memories the caller may see: the rest of the account is not
                # theirs to read (clearance), and a field with no value asserts nothing.
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
        if request.ticket_id:
            try:
                ticket = (
                    ticket_call.result()
                    if ticket_call is not None
                    else self.sor.ticket(principal.tenant_id, request.subject_id, request.ticket_id)
                )
            except SystemOfRecordUnavailable as exc:
                live.ticket_unavailable = True
                logger.warning("system of record unavailable", extra={"part": "ticket", "error": str(exc)})
            else:
                if ticket is None:
                    live.ticket_not_found = True  # an answer, not an outage: none for this customer
                elif screen_for_instructions(
                    " ".join(x for x in (ticket.status, ticket.priority, ticket.owner) if x)
                ).flagged:
                    live.ticket_unavailable = True
                    logger.warning("instruction-like ticket state withheld")
                else:  # shown under the id the caller asked for, whatever the answer called it
                    live.ticket = replace(ticket, ticket_id=request.ticket_id)
        return live

    def _embed(self, query: str) -> np.ndarray | None:
        try:
            return self.embedder.embed([query])[0]
        except Exception as exc:  # degrade to full-text only rather than fail the turn
            logger.warning("query embedding failed; full-text only", extra={"error": type(exc).__name__})
            return None

    def _rank(self, rows: list[RetrievalRow], policy: PolicyProfile, top_k: int, now: datetime) -> _Ranking:
        query_tokens = rows[0].query_lexemes or [] if rows else []
        candidates = []
        row_of: dict[str, RetrievalRow] = {}
        for row in rows:
            counts = row.term_counts
            # unranked rows (a small subject): a full-text match is any query lexeme in the row
            lexical = row.lexical if row.lexical is not None else float(bool(counts))
            candidates.append(
                Candidate(
                    row.facts,
                    row.similarity,
                    lexical,
                    row.sentence_similarity,
                    row.embedding,
                    counts,
                    row.length,
                )
            )
            row_of[row.facts.id] = row
        ranked = rank_candidates(candidates, now, query_tokens=query_tokens, head=top_k)
        owned = {
            c.record.id: policy.sor_slot_fields[c.record.slot]
            for c in ranked
            if c.record.slot in policy.sor_slot_fields
        }
        return _Ranking(ranked, row_of, owned, len(rows))

    def _compose(
        self,
        principal: Principal,
        request: RetrieveRequest,
        policy: PolicyProfile,
        ranking: _Ranking,
        top_k: int,
        max_tokens: int,
        live: _Live,
        *,
        working: Sequence[WorkingItem] = (),
    ) -> dict[str, Any]:
        excluded: dict[str, int] = {}

        def exclude(reason: str, n: int = 1) -> None:
            excluded[reason] = excluded.get(reason, 0) + n

        ranked, row_of = ranking.ranked, ranking.row_of
        floor = similarity_floor(self.embedder.name)
        shown_of: dict[str, RetrievedMemory] = {}

        def shown(c: Candidate) -> RetrievedMemory:
            """What is shown of a candidate, read once it may be returned (parsing it for every
            candidate cost more than ranking them)."""
            memory_id = c.record.id
            if memory_id not in shown_of:
                shown_of[memory_id] = row_of[memory_id].memory()
            return shown_of[memory_id]

        # Freshness gate: memories in slots the system of record owns yield to the live value.
        overrides: dict[str, list[str]] = {}
        stale_fields: dict[str, str] = {}
        revalidated: dict[str, str] = {}

        def stale(c: Candidate) -> str | None:
            slot_field = ranking.owned.get(c.record.id)
            if slot_field is None:
                return None
            lv = live.values.get(slot_field)
            if lv is not None:
                if contradicts(shown(c), slot_field, lv.value):
                    overrides.setdefault(lv.field, []).append(c.record.id)
                    stale_fields[c.record.id] = slot_field
                    return "stale_vs_live"
                if row_of[c.record.id].needs_revalidation:
                    revalidated[c.record.id] = slot_field
                return None
            # No live value confirms it (an outage, a withheld or missing value): a memory known to
            # have contradicted the system of record stays out.
            if row_of[c.record.id].needs_revalidation:
                return "needs_revalidation"
            return None

        chosen = _select(ranked, floor, top_k, VERIFIED_FACTS_CAP, stale, _named_slots(request))
        for reason, n in chosen.excluded.items():
            exclude(reason, n)
        if live.withheld:
            exclude("live_value_withheld", len(live.withheld))
        verified, relevant, supporting, unverified = chosen.buckets

        pinned: list[ContextLine] = []
        if live.ticket is not None:
            pinned.append(ContextLine("ticket", "ticket", render_ticket(live.ticket), pinned=True))
        for f, lv in sorted(live.values.items()):
            pinned.append(ContextLine(f"live:{f}", "live", render_live(lv), pinned=True))
        # Notes on what could not be read: shown when the budget allows, never the reason to refuse
        # a budget that holds the context itself.
        notes: list[ContextLine] = []
        if live.ticket_unavailable:
            notes.append(ContextLine("ticket:note", "ticket", TICKET_UNAVAILABLE_LINE, pinned=True))
        elif live.ticket_not_found:
            notes.append(ContextLine("ticket:note", "ticket", TICKET_NOT_FOUND_LINE, pinned=True))
        if live.account_unavailable or live.withheld:
            notes.append(ContextLine("live:note", "live", LIVE_UNAVAILABLE_LINE, pinned=True))
        for note in sorted(notes, key=lambda n: n.section != "live"):  # the account note matters most
            if minimum_tokens(request.subject_id, [*pinned, note]) <= max_tokens:
                pinned.append(note)
        floor_tokens = minimum_tokens(request.subject_id, pinned)
        if floor_tokens > max_tokens:
            raise InvalidRequest(
                f"max_tokens {max_tokens} is below the mandatory context ({floor_tokens} tokens: delimiters"
                + (", live ticket state" if live.ticket else "")
                + (", live account values" if live.values else "")
                + ")",
                field="max_tokens",
            )
        # Priority for the budget: verified facts, then the rest by score; rendering keeps section order.
        sectioned = [(c, "verified_facts") for c in verified]
        rest = (
            [(c, "relevant") for c in relevant]
            + [(c, "supporting") for c in supporting]
            + [(c, "unverified") for c in unverified]
        )
        # Rank order, not score: the newest-version reorder may leave a moved memory tied in score.
        position = {id(c): i for i, c in enumerate(ranked)}
        rest.sort(key=lambda cs: position[id(cs[0])])
        ordered = sectioned + rest

        def due(c: Candidate) -> bool:
            """Flagged needs_revalidation (by age, or by a contradiction the live value, when read
            now, no longer shows) and not being cleared by this retrieval."""
            return row_of[c.record.id].needs_revalidation and c.record.id not in revalidated

        lines = [
            ContextLine(
                c.record.id,
                section,
                _marked(render_memory(shown(c), contested=row_of[c.record.id].contested), due(c)),
            )
            for c, section in ordered
        ]
        # The session's working values come first for the budget (its own current state, bounded by
        # the policy), and count in the budget, never in top_k.
        working_lines = [ContextLine(f"working:{w.key}", "working", render_working(w)) for w in working]
        assembled = assemble(
            request.subject_id, pinned, [*working_lines, *lines], max_tokens, pinned_tokens=floor_tokens
        )
        if assembled.dropped:
            exclude("budget", len(assembled.dropped))
        kept = set(assembled.included)
        memories = [
            {
                **memory_view(c, shown(c), section),
                "contested": row_of[c.record.id].contested,
                "needs_revalidation": due(c),
            }
            for c, section in ordered
            if c.record.id in kept
        ]
        section_order = {name: i for i, name in enumerate(SECTIONS)}
        memories.sort(key=lambda m: section_order[m["section"]])
        live_view = [
            {
                "field": lv.field,
                "value": lv.value,
                "as_of": lv.as_of.isoformat() if lv.as_of else None,
                "overrides": overrides.get(f, []),
            }
            for f, lv in sorted(live.values.items())
        ]
        return {
            "context": assembled.text,
            "tokens": assembled.tokens,
            "memories": memories,
            "live": live_view,
            "working": (
                [working_view(w) for w in working if f"working:{w.key}" in kept]
                if request.session_id
                else None
            ),
            "excluded": excluded,
            "live_unavailable": live.account_unavailable,
            "ticket_unavailable": live.ticket_unavailable,
            "ticket_not_found": live.ticket_not_found,
            "stale": stale_fields,
            "revalidated": revalidated,
            "live_read_at": live.read_at(),
        }


@dataclass
class _Ranking:
    ranked: list[Candidate]
    row_of: dict[str, RetrievalRow]
    owned: dict[str, str]  # memory id -> the system-of-record field its slot maps to
    candidates: int


@dataclass
class _Live:
    """What the system of record said, for one retrieval."""

    values: dict[str, LiveValue] = field(default_factory=dict)
    ticket: TicketState | None = None
    account_unavailable: bool = False
    ticket_unavailable: bool = False
    ticket_not_found: bool = False
    withheld: list[str] = field(default_factory=list)

    def read_at(self) -> datetime | None:
        """When the live values decided on were read from the system of record (for a cached
        answer, when it was cached): this orders racing revalidations (store.revalidate). None
        when there are none, and then nothing was decided."""
        return min((lv.read_at for lv in self.values.values()), default=None)


@dataclass
class _Selection:
    buckets: tuple[list[Candidate], list[Candidate], list[Candidate], list[Candidate]]
    excluded: dict[str, int]


def _select(
    ranked: list[Candidate],
    floor: float,
    top_k: int,
    verified_cap: int,
    stale: Callable[[Candidate], str | None],
    named_slots: frozenset[str] = frozenset(),
) -> _Selection:
    """At most `top_k` memories across all sections: verified facts first (at most `verified_cap`),
    then relevant / supporting / unverified in rank order. Every memory passes the relevance floor
    unless its slot was asked for by name; one version per slot (the store guarantees it; belt and
    braces). Live values and working memory are not memories here: they count in the token budget,
    never in `top_k`."""
    excluded: dict[str, int] = {}
    seen_slots: set[str] = set()
    verified: list[Candidate] = []
    others: list[Candidate] = []

    def exclude(reason: str) -> None:
        excluded[reason] = excluded.get(reason, 0) + 1

    for c in ranked:
        r = c.record
        reason = stale(c)
        if reason is None and r.slot:
            if r.slot in seen_slots:
                reason = "duplicate_slot"
            else:
                seen_slots.add(r.slot)
        if reason is None and not (is_relevant(c, floor) or (r.slot is not None and r.slot in named_slots)):
            reason = "below_threshold"
        if reason is not None:
            exclude(reason)
        elif TYPE_SPECS[r.type].heads_context_when_verified and r.verified:
            if len(verified) < verified_cap:
                verified.append(c)
            else:
                exclude("verified_cap")
        else:
            others.append(c)
    for _ in verified[top_k:]:
        exclude("top_k")
    verified = verified[:top_k]
    for _ in others[top_k - len(verified) :]:
        exclude("top_k")
    relevant: list[Candidate] = []
    supporting: list[Candidate] = []
    unverified: list[Candidate] = []
    for c in others[: top_k - len(verified)]:
        r = c.record
        section = TYPE_SPECS[r.type].section
        if r.authority.rank <= Authority.CUSTOMER_CLAIM.rank or section == "unverified":
            unverified.append(c)
        elif section == "supporting":
            supporting.append(c)
        else:
            relevant.append(c)
    return _Selection((verified, relevant, supporting, unverified), excluded)


def _named_slots(request: RetrieveRequest) -> frozenset[str]:
    """Slots the request asks for by name: listed in `slots`, or written out in the query."""
    named = set(request.slots or ())
    named.update(re.findall(r"[a-z][a-z0-9_]*(?:\.[a-z0-9_]+)+", request.query.casefold()))
    return frozenset(named)


def _decisions(result: dict[str, Any]) -> tuple[dict[str, str], dict[str, str], datetime | None]:
    """Take from a composed result what the freshness gate decided: memory id -> the live field it
    contradicts, flagged memories now agreeing again, and when the live values were read."""
    return result.pop("stale"), result.pop("revalidated"), result.pop("live_read_at")


def _budget(policy: PolicyProfile, requested: int | None) -> int:
    """The request's token budget, else the tenant's; never above the tenant's envelope."""
    max_tokens = requested or policy.retrieval_max_tokens
    if max_tokens > policy.envelope_tokens:
        raise InvalidRequest(
            f"max_tokens {max_tokens} exceeds the tenant's envelope of {policy.envelope_tokens}",
            field="max_tokens",
        )
    return max_tokens


def _check_query(query: str) -> None:
    if len(query) > MAX_QUERY_CHARS:
        raise PayloadTooLarge(f"query exceeds {MAX_QUERY_CHARS} characters", field="query")
    if not query.strip():
        raise InvalidRequest("query must not be empty", field="query")


def render_reusable(r: MemoryRecord) -> str:
    """A line for another customer's resolution: what was done and how it ended, no identities."""
    return (
        f"- [{r.id}] {escape_text(r.content)} (reusable {r.type.value}; authority: {r.authority.value}; "
        f"effective {_date(r.effective_at)})"
    )


def contradicts(record: RetrievedMemory, field_name: str, live_value: Any) -> bool:
    """Does the memory assert a different value than the live one? Its structured value decides
    when it has one (numbers as numbers: 12.0 and "1,000" are 12 and 1000). Otherwise its text must
    name the live value as a whole word or number ("120 seats" does not name 12). Unknown counts
    as stale: the system of record owns the slot. A text that names the live value among others
    ("from Enterprise to Basic") still passes; the live value is pinned above it either way."""
    asserted = record.value.get(field_name, record.value.get("value"))
    target = _normal(live_value)
    if asserted is not None:
        return _normal(asserted) != target
    text = " ".join(record.content.casefold().split())
    if isinstance(target, Decimal):  # a date or a time of day is not a count: "2026-03-12" names no 12
        return all(_normal(n) != target for n in _NUMBER.findall(_DATE_OR_TIME.sub(" ", text)))
    return re.search(r"(?<!\w)" + re.escape(str(target)) + r"(?!\w)", text) is None


_NUMBER = re.compile(r"(?<![\w.,])-?(?:\d{1,3}(?:[,_]\d{3})+|\d+)(?:\.\d+)?(?!\w|[.,_]\d)")
# "may" is a month only in shapes the verb cannot take: "may 12[, 2026]", "12[th] [of] may" before
# a year, punctuation, the end or with/for/and/at/on/from/to, "in/of/since/until may 2026";
# "12 may be unused" is a count
_MONTH = r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?:0?[1-9]|[12]\d|3[01])(?:st|nd|rd|th)?"  # "june 40 seats" names a count
_YEAR = r"(?:19|20)\d\d"
_MONTH_NUMBER = r"(?:0?[1-9]|1[0-2])"
_DATE_OR_TIME = re.compile(  # text is casefolded first
    r"(?<![\w.,/:-])(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:t\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"  # 2026-03-12[t09:30z]
    r"|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4}|\d{4}/\d{1,2}/\d{1,2}"  # 12/03/2026, 12.03.26, 2026/03/12
    rf"|{_MONTH_NUMBER}/{_YEAR}|{_YEAR}-{_MONTH_NUMBER}(?![\d-])"  # 12/2026, 2026-12
    r"|\d{1,2}:\d{2}(?::\d{2})?(?:\s?(?:am|pm|h)\b)?|\d{1,2}\s?(?:am|pm)\b"  # 12:30, 12:30pm, 12:30h, 12pm
    rf"|{_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+{_YEAR})?"  # 12 march 2026, 12th of march
    rf"|{_MONTH}\s+{_DAY}(?:,?\s+{_YEAR})?|{_MONTH}\s+{_YEAR}"  # march 12, 2026; mar. 12; march 2026
    rf"|{_DAY}\s+(?:of\s+)?may(?:,?\s+{_YEAR}|(?=\s*(?:$|[.,;:!?)])|\s+(?:with|for|and|at|on|from|to)\b))"  # 12 may.
    rf"|\d{{1,2}}(?:st|nd|rd|th)\s+(?:of\s+)?may|\d{{1,2}}\s+of\s+may"  # 12th may, 12 of may
    rf"|may\.?\s+{_DAY}(?:,?\s+{_YEAR})?|(?:in|of|since|until)\s+may\s+{_YEAR}"  # may 12[, 2026]
    r")(?![\w/-]|[.,:]\d)"  # "05/2026: 12 seats" ends its date at the colon
)


def _normal(value: Any) -> Decimal | str:
    """A value as compared: a number as a Decimal (thousands separators removed), text casefolded
    with its whitespace collapsed (so is a digit string with a leading zero)."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return Decimal(value)  # any size: no float conversion to overflow
    if isinstance(value, float) and math.isfinite(value):
        return Decimal(str(value))  # Decimal compares by value: 12.0 == 12, no rounding to 28 digits
    text = " ".join(str(value).casefold().split())
    # a leading zero makes it a code, not a count: "02134" is a postcode, not 2134
    if len(text) <= 60 and re.fullmatch(r"[-+]?(?:[1-9]\d{0,2}(?:[,_]\d{3})+|[1-9]\d*|0)(?:\.\d+)?", text):
        return Decimal(text.replace(",", "").replace("_", ""))
    return text


def _date(dt: datetime | None) -> str:
    return dt.date().isoformat() if dt else "unknown"


def _marked(line: str, needs_revalidation: bool) -> str:
    return mark_needs_revalidation(line) if needs_revalidation else line


CONTESTED_NOTE = "; contested: a lower-authority source disagrees, awaiting review"


def render_memory(r: RetrievedMemory, *, contested: bool = False) -> str:
    """One memory's context line; a contested one still served says so (seed 002)."""
    src = r.source
    origin = " ".join(escape_text(x) for x in (src.system, src.reference) if x)
    source = f"{src.kind.value}{' ' + origin if origin else ''}"
    kind = r.type.value
    if r.type is MemoryType.COMMITMENT:
        kind += "".join(f" {k} {escape_text(str(v))}" for k, v in commitment_view(r).items() if v is not None)
    return (
        f"- [{r.id}] {escape_text(r.content)} (source: {source}; authority: {r.authority.value}; "
        f"{kind}; effective {_date(r.effective_at)}{CONTESTED_NOTE if contested else ''})"
    )


def commitment_view(r: RetrievedMemory) -> dict[str, Any]:
    """A follow-up's state for the agent: open or closed (and how), its owner and due date."""
    v = r.value
    return {k: v.get(k) for k in ("state", "outcome", "owner", "due")}


LIVE_TEXT_CHARS = 200  # a live value or ticket field as shown: the budget must always hold them
LIVE_UNAVAILABLE_LINE = (
    "- live account values could not be checked now: account facts below are as last recorded, unconfirmed"
)
TICKET_UNAVAILABLE_LINE = "- the ticket's live state could not be read now"
TICKET_NOT_FOUND_LINE = "- the ticket asked about was not found for this customer"


def _live_text(value: Any) -> str:
    text = "unknown" if value is None else str(value)
    return escape_text(text if len(text) <= LIVE_TEXT_CHARS else text[: LIVE_TEXT_CHARS - 1] + "…")


def render_ticket(t: TicketState) -> str:
    when = t.updated_at.isoformat() if t.updated_at else "unknown"
    return (
        f"- ticket {_live_text(t.ticket_id)}: status={_live_text(t.status)} priority={_live_text(t.priority or '-')}"
        f" owner={_live_text(t.owner or '-')} last_update={when}"
    )


def render_working(w: WorkingItem) -> str:
    """A working value as data: key and compact JSON on one escaped line, with its expiry."""
    value = json.dumps(w.value, ensure_ascii=False, separators=(",", ":"))
    return (
        f"- {escape_text(w.key)} = {escape_text(value)} "
        f"(working memory of this session; expires {w.expires_at.isoformat(timespec='seconds')})"
    )


def working_view(w: WorkingItem) -> dict[str, Any]:
    return {"key": w.key, "value": w.value, "expires_at": w.expires_at.isoformat()}


def render_live(lv: LiveValue) -> str:
    when = lv.as_of.isoformat() if lv.as_of else "unknown"
    return f"- {_live_text(lv.field)} = {_live_text(lv.value)} (as of {when})"


def memory_view(c: Candidate, r: RetrievedMemory, section: str) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": r.id,
        "type": r.type.value,
        "category": r.category,
        "slot": r.slot,
        "content": r.content,
        "section": section,
        "similarity": round(c.dense, 4) if c.dense is not None else None,
        "score": round(c.score, 4),
        "authority": r.authority.value,
        "verified": r.verified,
        "confidence": r.confidence,
        "effective_at": r.effective_at.isoformat(),
        "expires_at": r.expires_at.isoformat() if r.expires_at else None,
        "source": r.source.model_dump(mode="json", exclude_none=True),
        "session_id": r.session_id,
    }
    if r.type is MemoryType.COMMITMENT:
        view["commitment"] = commitment_view(r)
    return view
