"""The retrieval broker: authorize -> scope in SQL -> hybrid candidates -> floor
-> rank -> freshness gate against the system of record -> one version per slot
-> token-budgeted context inside untrusted-data delimiters -> access log.

The pieces it orchestrates live apart: ranking in domain/ranking.py, the freshness gate's
judgement in domain/freshness.py, context lines and their budget in domain/context.py."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from agent_memory.domain.context import (
    SECTIONS,
    ContextLine,
    assemble,
    memory_view,
    render_memory,
    render_reusable,
    render_working,
    working_view,
)
from agent_memory.domain.enums import EventType, MemoryType, Role
from agent_memory.domain.errors import InvalidRequest, PayloadTooLarge, Unavailable
from agent_memory.domain.freshness import FreshnessDecisions, FreshnessGate
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.ranking import Candidate, rank_candidates, topical_query
from agent_memory.domain.records import MemoryRecord, Principal, RetrievedMemory, utcnow
from agent_memory.domain.relevance import relevance_bar
from agent_memory.domain.selection import (
    FAMILY_SUPERSEDED,
    commercial_candidates,
    family_rivals,
    in_budget_order,
    named_slots,
    returned_ranks,
    select,
)
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
from agent_memory.ports.system_of_record import SystemOfRecord
from agent_memory.services.authorization import require_read
from agent_memory.services.live_state import LiveState, live_views, pinned_lines, read_live_state
from agent_memory.services.policies import PolicyRegistry
from agent_memory.services.retrieval_models import (
    MAX_TOP_K,
    TENANT_WIDE,
    ResolutionSearch,
    ResolutionSearchRequest,
    Retrieval,
    RetrieveRequest,
    StageClock,
)
from agent_memory.services.revalidation_due import flag_due_at_read, possibly_due

__all__ = [
    "CANDIDATES_PER_SIGNAL",
    "MAX_QUERY_CHARS",
    "MAX_TOP_K",
    "VERIFIED_FACTS_CAP",
    "ResolutionSearch",
    "ResolutionSearchRequest",
    "Retrieval",
    "RetrievalBroker",
    "RetrieveRequest",
]

MAX_QUERY_CHARS = 8000
CANDIDATES_PER_SIGNAL = 50
VERIFIED_FACTS_CAP = 20


@dataclass(frozen=True)
class _Ranking:
    ranked: list[Candidate]
    row_of: dict[str, RetrievalRow]
    owned: dict[str, str]  # memory id -> the system-of-record field its slot maps to
    candidates: int


@dataclass(frozen=True)
class _Turn:
    """One retrieval: who asks what, within which limits, and what the store found for it."""

    principal: Principal
    request: RetrieveRequest
    top_k: int
    max_tokens: int
    ranking: _Ranking
    working: Sequence[WorkingItem]
    stages: StageClock
    # verified commercial facts a newer source of their family outstates (never two truths of one)
    family_rivals: set[str]
    mandatory_categories: frozenset[str]  # the policy's: verified facts served whatever the query

    @property
    def asks_system_of_record(self) -> bool:
        """A candidate sits in a slot the system of record owns, or a ticket is named."""
        return bool(self.ranking.owned or self.request.ticket_id)


@dataclass(frozen=True)
class _Composed:
    """A composed answer, and what its freshness gate decided for the store to record."""

    retrieval: Retrieval
    decisions: FreshnessDecisions


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
        """The memories of one subject for one query, composed into a context within the token
        budget, with the live values they yield to; the access event is written before it answers."""
        require_read(principal, Role.AGENT)
        _check_query(request.query)
        policy = self.policies.for_tenant(principal.tenant_id)
        top_k = _top_k(policy, request.top_k)
        max_tokens = _budget(policy, request.max_tokens)
        stages = StageClock()
        now = self.clock()

        with stages.stage("embed"):
            if query_embedding is None:
                query_embedding = self._embed(request.query)

        # Two statements, no transaction around them: the candidates, then the access event.
        with self.store.reader(principal.tenant_id) as reader:
            with stages.stage("db"):
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
                # The session's working values: one more statement, only when a session is named.
                working = (
                    reader.live_working_items(session_id=request.session_id, subject_id=request.subject_id)
                    if request.session_id
                    else []
                )
            with stages.stage("rank"):
                ranking = self._rank(rows, policy, top_k, now)
                rivals = _family_rivals(ranking, reader)
            turn = _Turn(
                principal,
                request,
                top_k,
                max_tokens,
                ranking,
                working,
                stages,
                rivals,
                policy.mandatory_fact_categories,
            )
            # Records that may have come due for revalidation since the nightly run (rare: that
            # run flags them); they are flagged below, with no statement when there are none.
            maybe_due = _maybe_due(turn.ranking, policy, now)
            if not turn.asks_system_of_record and not maybe_due:
                result = self._answer(turn, LiveState(), reader)  # the access event on this connection
        if maybe_due:
            with stages.stage("revalidation"), self.store.tenant(principal.tenant_id) as session:
                due = flag_due_at_read(session, maybe_due, policy, now)
            for memory_id in due:
                turn.ranking.row_of[memory_id].needs_revalidation = True
        if turn.asks_system_of_record:
            # The system of record is called with no connection held: a slow answer holds no
            # database connection, and the local adapter's own connection can never wait on ours.
            with stages.stage("freshness"):
                live = read_live_state(
                    self.sor,
                    principal,
                    request.subject_id,
                    request.ticket_id,
                    set(turn.ranking.owned.values()),
                )
            result = self._answer(turn, live, None)
        elif maybe_due:
            result = self._answer(turn, LiveState(), None)
        result.timings_ms = stages.finish()
        return result

    def search_resolutions(
        self,
        principal: Principal,
        request: ResolutionSearchRequest,
        *,
        query_embedding: np.ndarray | None = None,
    ) -> ResolutionSearch:
        """Reusable resolutions across the tenant's subjects, nearest first (HNSW, iterative scan).
        Another customer's identity never travels with a hit: no subject, session or ticket ids."""
        require_read(principal, Role.AGENT)
        _check_query(request.query)
        policy = self.policies.for_tenant(principal.tenant_id)
        max_tokens = _budget(policy, request.max_tokens)
        vector = query_embedding if query_embedding is not None else self._embed(request.query)
        if vector is None:
            raise Unavailable("the embedder is unavailable; tenant-wide search needs the query's vector")
        floor = relevance_bar(self.embedder.name).floor
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
            session.log_retrieval(
                subject_id=context_subject,
                actor=principal.sub,
                memory_ids=[r.id for r, _ in hits if r.id in kept],
                payload={"search": "tenant_wide", "tokens": assembled.tokens},
            )
        return {
            "resolutions": [_resolution_view(r, sim) for r, sim in hits if r.id in kept],
            "context": assembled.text,
            "tokens": assembled.tokens,
            "max_tokens": max_tokens,
        }

    # -- one answer: compose it, then record it ---------------------------------------------
    def _answer(self, turn: _Turn, live: LiveState, reader: RetrievalReader | None) -> Retrieval:
        """Compose the answer, then write what it decided and the access event. With the reader
        still open (the system of record was not asked, so nothing was decided) the access event
        is its one statement; otherwise everything is written in one tenant transaction."""
        with turn.stages.stage("render"):
            composed = self._compose(turn, live)
        with turn.stages.stage("audit"):
            if reader is not None:
                _log_access(reader, turn, composed.retrieval)
            else:
                with self.store.tenant(turn.principal.tenant_id, reuse_plans=True) as session:
                    _record(session, turn, composed)
        return composed.retrieval

    def _compose(self, turn: _Turn, live: LiveState) -> _Composed:
        """Select within top_k behind the freshness gate, then fill the token budget: the live
        values and notes pinned above the session's working values and the memories."""
        request, ranking = turn.request, turn.ranking
        gate = FreshnessGate(ranking.owned, live.values)
        shown = _Shown(ranking.row_of, gate)
        bar = relevance_bar(self.embedder.name)

        def exclusion(c: Candidate) -> str | None:
            return FAMILY_SUPERSEDED if c.record.id in turn.family_rivals else shown.exclusion(c)

        chosen = select(
            ranking.ranked,
            bar,
            turn.top_k,
            VERIFIED_FACTS_CAP,
            exclusion,
            named_slots(request.slots, request.query),
            turn.mandatory_categories,
        )
        excluded = dict(chosen.excluded)
        if live.withheld:
            _count(excluded, "live_value_withheld", len(live.withheld))
        pinned, floor_tokens = pinned_lines(request.subject_id, live, turn.max_tokens)
        ordered = in_budget_order(chosen.buckets, ranking.ranked)
        # The session's working values come first for the budget (its own current state, bounded by
        # the policy), and count in the budget, never in top_k.
        lines = [ContextLine(f"working:{w.key}", "working", render_working(w)) for w in turn.working]
        lines += [ContextLine(c.record.id, section, shown.line(c)) for c, section in ordered]
        assembled = assemble(request.subject_id, pinned, lines, turn.max_tokens, pinned_tokens=floor_tokens)
        if assembled.dropped:
            _count(excluded, "budget", len(assembled.dropped))
        kept = set(assembled.included)
        section_order = {name: i for i, name in enumerate(SECTIONS)}
        memories = sorted(
            (shown.view(c, section) for c, section in ordered if c.record.id in kept),
            key=lambda m: section_order[m["section"]],
        )
        # listed by section; `rank` is each one's place by relevance (1 first)
        ranks = returned_ranks(ranking.ranked, {m["id"] for m in memories})
        for m in memories:
            m["rank"] = ranks[m["id"]]
        retrieval = Retrieval(
            subject_id=request.subject_id,
            context=assembled.text,
            memories=memories,
            live=live_views(live, gate.overrides),
            excluded=excluded,
            tokens=assembled.tokens,
            max_tokens=turn.max_tokens,
            live_unavailable=live.account_unavailable,
            ticket_unavailable=live.ticket_unavailable,
            ticket_not_found=live.ticket_not_found,
            candidates=ranking.candidates,
            relevance_floor=round(bar.floor, 4),
            keyword_bar=round(bar.keyword_bar, 4),
            relevance_excluded=chosen.not_relevant,
            working=(
                [working_view(w) for w in turn.working if f"working:{w.key}" in kept]
                if request.session_id
                else None
            ),
        )
        return _Composed(retrieval, gate.decisions())

    # -- the query and its candidates --------------------------------------------------------
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


def _maybe_due(
    ranking: _Ranking, policy: PolicyProfile, now: datetime
) -> list[tuple[str, MemoryType, str | None, datetime]]:
    """The unflagged candidates that may be due for revalidation (`possibly_due`; the store decides
    with their last confirmation: `flag_due_at_read`)."""
    facts = [row.facts for row in ranking.row_of.values() if not row.needs_revalidation]
    return possibly_due([(f.id, f.type, f.slot, f.effective_at) for f in facts], policy, now)


def _record(session: TenantSession, turn: _Turn, composed: _Composed) -> None:
    """What a retrieval that checked the system of record writes, in one transaction: memories
    found contradicting a live value are flagged, flagged ones found agreeing again are cleared
    (an event for each change), and the access event with the ids returned."""
    decided = composed.decisions
    stale, agreeing, read_at = decided.contradicting, decided.agreeing, decided.read_at
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
                    turn.principal.sub,
                    mid,
                    turn.request.subject_id,
                    reason,
                    {"needs_revalidation": flagged, "field": field_name},
                )
                for mid, field_name, flagged, reason in sorted(changed)
            ]
        )
    _log_access(session, turn, composed.retrieval)


def _log_access(session: RetrievalReader, turn: _Turn, result: Retrieval) -> None:
    """The access event: who retrieved which memories of whom, and what was left out (ids and
    counts, never content). The retrieval answers only once it is written."""
    request = turn.request
    session.log_retrieval(
        subject_id=request.subject_id,
        actor=turn.principal.sub,
        memory_ids=[m["id"] for m in result.memories],
        payload={
            "excluded": result.excluded,
            **({"relevance_excluded": result.relevance_excluded} if result.relevance_excluded else {}),
            "ticket_id": request.ticket_id,
            "live_unavailable": result.live_unavailable,
            "ticket_unavailable": result.ticket_unavailable,
            "ticket_not_found": result.ticket_not_found,
            "tokens": result.tokens,
            # the stages so far, in milliseconds (`memory stats` reads their percentiles back)
            "stage_ms": {k: round(v, 2) for k, v in turn.stages.ms.items()},
            **(
                {"session_id": request.session_id, "working_items": len(result.working or [])}
                if request.session_id
                else {}
            ),
        },
    )


class _Shown:
    """What is shown of the chosen candidates: each one's memory, read once it may be returned
    (parsing it for every candidate cost more than ranking them), its context line and its view."""

    def __init__(self, row_of: dict[str, RetrievalRow], gate: FreshnessGate) -> None:
        self._row_of = row_of
        self._gate = gate
        self._shown: dict[str, RetrievedMemory] = {}

    def memory(self, c: Candidate) -> RetrievedMemory:
        memory_id = c.record.id
        if memory_id not in self._shown:
            self._shown[memory_id] = self._row_of[memory_id].memory()
        return self._shown[memory_id]

    def exclusion(self, c: Candidate) -> str | None:
        """The freshness gate's reason to leave the candidate out, or None."""
        flagged = self._row_of[c.record.id].needs_revalidation
        return self._gate.exclusion(c.record.id, lambda: self.memory(c), flagged)

    def _flags(self, c: Candidate) -> tuple[bool, bool]:
        """(contested, due for revalidation)."""
        row = self._row_of[c.record.id]
        return row.contested, self._gate.due(c.record.id, row.needs_revalidation)

    def line(self, c: Candidate) -> str:
        contested, due = self._flags(c)
        return render_memory(self.memory(c), contested=contested, needs_revalidation=due)

    def view(self, c: Candidate, section: str) -> dict[str, Any]:
        contested, due = self._flags(c)
        return {**memory_view(c, self.memory(c), section), "contested": contested, "needs_revalidation": due}


def _resolution_view(r: MemoryRecord, similarity: float) -> dict[str, Any]:
    """A tenant-wide hit as the response lists it: no subject, session or ticket ids."""
    return {
        "id": r.id,
        "type": r.type.value,
        "category": r.category,
        "content": r.content,
        "similarity": round(similarity, 4),
        "authority": r.authority.value,
        "confidence": r.confidence,
        "effective_at": r.effective_at.isoformat(),
        "source_kind": r.source.kind.value,
    }


def _count(excluded: dict[str, int], reason: str, n: int = 1) -> None:
    excluded[reason] = excluded.get(reason, 0) + n


def _family_rivals(ranking: _Ranking, reader: RetrievalReader) -> set[str]:
    """The verified commercial facts to leave out so one family states one truth; the store is
    asked which were approved as independent only when a family has two sources among them."""
    facts = commercial_candidates(ranking.ranked)
    if len({c.record.authority for c in facts}) < 2:
        return set()
    return family_rivals(facts, reader.family_independent([c.record.id for c in facts]))


def _top_k(policy: PolicyProfile, requested: int | None) -> int:
    """The caller's top_k, or the policy's default; above the tenant's ceiling it is refused (the
    product requirements: top-5), not quietly lowered, so the caller knows what it was served."""
    if requested is not None and requested > policy.retrieval_top_k_max:
        raise InvalidRequest(
            f"top_k: at most {policy.retrieval_top_k_max} memories per retrieval for this tenant",
            field="top_k",
        )
    return requested or policy.retrieval_top_k


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
