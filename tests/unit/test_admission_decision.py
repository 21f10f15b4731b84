"""Admission's decision on its own, no database: `decide` over generated candidates and contexts
(docs/rules.md steps 4-6, INV-MEM-01, INV-MEM-03, seed 002)."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.domain.admission import Classified, classify
from agent_memory.domain.decision import (
    EVENT_FOR_DECISION,
    AdmissionContext,
    Candidate,
    decide,
    reaches_near_duplicate,
)
from agent_memory.domain.enums import Authority, Decision, EventType, Flag, MemoryType, Sensitivity, Status
from agent_memory.domain.policy import profile
from agent_memory.domain.records import MemoryRecord, MemoryWrite, Source

NOW = datetime(2026, 10, 1, tzinfo=UTC)
SLOT = "contract.seat_price"
NEW_ID = "mem_new"
CONVERSATIONAL = [a for a in Authority if a.rank < Authority.HUMAN_VERIFIED.rank]

days = st.integers(-400, 0).map(lambda d: NOW + timedelta(days=d))
authorities = st.sampled_from(list(Authority))


@st.composite
def records(draw: st.DrawFn, record_id: str) -> MemoryRecord:
    """A record of the candidate's slot as the store could return it."""
    authority = draw(authorities)
    effective = draw(days)
    return MemoryRecord(
        id=record_id,
        tenant_id="t",
        subject_id="ACC-1",
        type=MemoryType.FACT,
        category="CONTRACT_COMMERCIAL",
        slot=SLOT,
        content="Seats cost 40",
        source=Source(kind=authority),
        actor="x",
        authority=authority,
        confidence=1.0,
        status=Status.ACTIVE,
        flags=draw(st.sampled_from([[], [Flag.CONTESTED.value]])),
        created_at=effective,
        effective_at=effective,
        content_hash="h",
    )


@st.composite
def classified(draw: st.DrawFn) -> Classified:
    """Any classified candidate, including combinations `classify` would not produce."""
    slotted = draw(st.booleans())
    return Classified(
        type=MemoryType.FACT if slotted else draw(st.sampled_from(list(MemoryType))),
        category="CONTRACT_COMMERCIAL",
        slot=SLOT if slotted else None,
        authority=draw(authorities),
        sensitivity=Sensitivity.INTERNAL,
        effective_at=draw(days),
        expires_at=None,
        flags=draw(st.lists(st.sampled_from([Flag.IDENTIFIER_MASKED.value, "untrusted_instruction"]))),
        reasons=draw(st.lists(st.sampled_from(["observation_quarantined", "already_expired"]), max_size=2)),
        final=draw(st.sampled_from([None, Decision.REJECTED, Decision.QUARANTINED])),
        needs_approval=draw(st.booleans()),
        last_validated_at=draw(st.none() | st.just(NOW)),
        needs_revalidation=draw(st.booleans()),
    )


@st.composite
def contexts(draw: st.DrawFn, candidate: Classified) -> AdmissionContext:
    """What the store could find for the candidate (an active record only in a slot)."""
    active = draw(st.none() | records("mem_active")) if candidate.slot else None
    duplicate = draw(st.none() | st.just(active) | records("mem_dup")) if active else None
    duplicate = duplicate or draw(st.none() | records("mem_dup"))
    return AdmissionContext(
        active=active,
        duplicate=duplicate,
        tombstoned=draw(st.booleans()),
        erasing=draw(st.booleans()),
        near_duplicate=draw(st.none() | records("mem_near")),
    )


@st.composite
def cases(draw: st.DrawFn) -> tuple[Candidate, AdmissionContext]:
    c = draw(classified())
    pending = draw(st.booleans())
    return Candidate(c, NEW_ID, "hash", embedding_pending=pending), draw(contexts(c))


@settings(max_examples=200, deadline=None)
@given(cases())
def test_never_two_active_versions_of_a_slot(case: tuple[Candidate, AdmissionContext]) -> None:
    # Given any candidate and any context  When decided  Then the slot keeps at most one active
    candidate, ctx = case
    d = decide(candidate, ctx)
    actives = {ctx.active.id} if ctx.active else set()
    if d.supersedes is not None:
        actives.discard(d.supersedes.id)
    if d.writes_record and d.decision is Decision.ADMITTED and candidate.classified.slot:
        actives.add(NEW_ID)
    assert len(actives) <= 1
    assert d.supersedes in (None, ctx.active)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_lower_authority_never_supersedes(case: tuple[Candidate, AdmissionContext]) -> None:
    candidate, ctx = case
    d = decide(candidate, ctx)
    if d.supersedes is not None:
        c = candidate.classified
        assert c.authority.rank >= d.supersedes.authority.rank
        if c.authority.rank == d.supersedes.authority.rank:
            assert c.effective_at >= d.supersedes.effective_at
    if ctx.active is not None and candidate.classified.authority.rank < ctx.active.authority.rank:
        assert d.supersedes is None


@settings(max_examples=200, deadline=None)
@given(
    authority=st.sampled_from(CONVERSATIONAL),
    policy=st.sampled_from(["crm", "support", "wealth"]),
    effective=days,
    signals=st.sampled_from([(), ("caller_flag",)]),
    masked=st.sampled_from([[], ["email"]]),
    case=cases(),
)
def test_a_commercial_term_from_conversation_is_never_admitted_active(
    authority: Authority,
    policy: str,
    effective: datetime,
    signals: tuple[str, ...],
    masked: list[str],
    case: tuple[Candidate, AdmissionContext],
) -> None:
    # Given a commercial term said in conversation, classified by the real rules
    write = MemoryWrite.model_validate(
        {
            "subject_id": "ACC-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": SLOT,
            "content": "Seats cost 35",
            "source": {"kind": authority.value},
            "effective_at": effective.isoformat(),
        }
    )
    c = classify(write, policy=profile(policy), now=NOW, masked_kinds=masked, injection_signals=signals)
    # When decided against any context  Then it waits for a reviewer or is held, never active
    d = decide(Candidate(c, NEW_ID, "hash"), case[1])
    assert d.decision is not Decision.ADMITTED
    assert d.supersedes is None


@settings(max_examples=200, deadline=None)
@given(cases(), st.sampled_from([(True, False), (False, True), (True, True)]))
def test_a_tombstoned_or_erasing_subject_is_always_rejected_and_leaves_no_record(
    case: tuple[Candidate, AdmissionContext], erased: tuple[bool, bool]
) -> None:
    candidate, ctx = case
    ctx = replace(ctx, tombstoned=erased[0], erasing=erased[1])
    d = decide(candidate, ctx)
    assert d.decision is Decision.REJECTED
    assert not d.writes_record and d.memory_id is None and not d.keep_vector
    assert d.supersedes is None and d.contests is None
    # only the refusal's audit event, naming no record
    assert [(e.event_type, e.memory_id) for e in d.events] == [(EventType.REJECTED, None)]
    if candidate.classified.final is not Decision.REJECTED:
        assert d.reasons[-1] == ("tombstoned" if ctx.tombstoned else "erasure_in_progress")


@settings(max_examples=200, deadline=None)
@given(cases())
def test_a_duplicate_never_writes(case: tuple[Candidate, AdmissionContext]) -> None:
    candidate, ctx = case
    d = decide(candidate, ctx)
    if d.decision is Decision.DUPLICATE:
        assert d.duplicate in (ctx.duplicate, ctx.near_duplicate) and d.duplicate is not None
        assert not d.writes_record and not d.keep_vector
        assert d.supersedes is None and d.contests is None
        assert d.memory_id == d.duplicate.id
        assert [(e.event_type, e.memory_id) for e in d.events] == [(EventType.REJECTED, d.duplicate.id)]
    else:
        assert d.duplicate is None


@settings(max_examples=200, deadline=None)
@given(cases())
def test_same_content_from_a_weaker_or_equal_source_is_a_duplicate(
    case: tuple[Candidate, AdmissionContext],
) -> None:
    candidate, ctx = case
    c = candidate.classified
    ctx = replace(ctx, tombstoned=False, erasing=False)
    d = decide(candidate, ctx)
    dup = ctx.duplicate
    weaker = dup is not None and (c.authority.rank <= dup.authority.rank or c.final is not None)
    if c.final is not Decision.REJECTED and weaker:
        assert d.decision is Decision.DUPLICATE and d.duplicate == dup


@settings(max_examples=200, deadline=None)
@given(cases())
def test_the_near_duplicate_matters_only_where_the_cascade_reaches_it(
    case: tuple[Candidate, AdmissionContext],
) -> None:
    # Given a context  When the cascade stops before the similarity check
    # Then whatever the similarity search would find changes nothing (the gateway skips the query)
    candidate, ctx = case
    if not reaches_near_duplicate(candidate.classified, ctx):
        assert decide(candidate, ctx) == decide(candidate, replace(ctx, near_duplicate=None))


@settings(max_examples=200, deadline=None)
@given(cases())
def test_events_and_vectors_follow_the_decision(case: tuple[Candidate, AdmissionContext]) -> None:
    candidate, ctx = case
    d = decide(candidate, ctx)
    assert d == decide(candidate, ctx)  # pure
    assert d.events[0].event_type is EVENT_FOR_DECISION[d.decision]
    assert d.events[0].payload is not None and d.events[0].payload["reasons"] == list(d.reasons)
    if candidate.classified.final is not None:
        assert d.decision in (Decision.REJECTED, Decision.QUARANTINED, Decision.DUPLICATE)
    if candidate.classified.final is Decision.REJECTED:
        assert d.decision is Decision.REJECTED
    if d.decision is Decision.REJECTED:
        assert not d.keep_vector
    if not d.writes_record:
        assert len(d.events) == 1
    named = {e.memory_id for e in d.events}
    assert named <= {NEW_ID, d.memory_id, getattr(d.supersedes, "id", None), getattr(d.contests, "id", None)}
    if d.decision is not Decision.ADMITTED:
        assert not d.validated_now and not d.needs_revalidation
    deferred = any(e.event_type is EventType.EMBEDDING_DEFERRED for e in d.events)
    assert deferred == (d.keep_vector and candidate.embedding_pending)


@settings(max_examples=200, deadline=None)
@given(cases())
def test_a_contested_record_and_its_challenger_both_carry_the_marker(
    case: tuple[Candidate, AdmissionContext],
) -> None:
    candidate, ctx = case
    d = decide(candidate, ctx)
    if d.decision is Decision.CONTESTED:
        assert d.contests is ctx.active and d.contests is not None
        assert Flag.CONTESTED.value in d.flags
        marked = [e for e in d.events if e.event_type is EventType.UPDATED]
        assert [e.memory_id for e in marked] == [d.contests.id]
        assert marked[0].payload == {"contested": True, "contested_by": NEW_ID, "slot": SLOT}
    else:
        assert d.contests is None
    inherited = d.supersedes is not None and Flag.CONTESTED.value in d.supersedes.flags
    assert (Flag.CONTESTED.value in d.flags) == (d.contests is not None or inherited)
