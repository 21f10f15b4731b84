"""The memory-type table is the one place a type's rules live: every type has a complete,
well-typed row, and the names other modules read (slotted types, half-lives, the presets' TTLs and
revalidation ages, hard bounds, retrieval sections) are views of it."""

import types
import typing
from dataclasses import fields
from datetime import UTC, datetime

import pytest

from agent_memory.domain import enums, ranking
from agent_memory.domain.context import SECTIONS
from agent_memory.domain.enums import Authority, MemoryType, Status
from agent_memory.domain.memory_types import (
    APPEND_ONLY_TYPES,
    SLOT_REQUIRED_TYPES,
    SLOTTED_TYPES,
    TYPE_SPECS,
    SlotRule,
    TypeSpec,
)
from agent_memory.domain.policy import PRESETS, PROFILES, PolicyProfile, guardrail_violations
from agent_memory.domain.ranking import Candidate, CandidateFacts
from agent_memory.domain.records import MemoryRecord, Source
from agent_memory.domain.relevance import RelevanceBar
from agent_memory.domain.selection import select
from agent_memory.services.retrieval import VERIFIED_FACTS_CAP, RetrieveRequest

HINTS = typing.get_type_hints(TypeSpec)
NOW = datetime(2026, 10, 1, tzinfo=UTC)


def conforms(value: object, hint: object) -> bool:
    """`value` is of the annotated type (plain classes, `X | None`, Literal, frozenset[X])."""
    if typing.get_origin(hint) is frozenset:
        (item,) = typing.get_args(hint)
        return isinstance(value, frozenset) and all(conforms(v, item) for v in value)
    if typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        return any(conforms(value, arg) for arg in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is float:  # a whole number of days is a fine half-life
        return isinstance(value, int | float) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    assert isinstance(hint, type), hint
    return isinstance(value, hint)


def test_every_memory_type_has_exactly_one_row_keyed_by_itself():
    # Given the enum and the table
    # Then they name the same types, each row under its own type
    assert set(TYPE_SPECS) == set(MemoryType)
    assert all(spec.type is memory_type for memory_type, spec in TYPE_SPECS.items())


@pytest.mark.parametrize("memory_type", list(MemoryType), ids=str)
def test_every_type_has_every_field_with_a_value_of_its_declared_type(memory_type):
    # Given the type's row
    spec = TYPE_SPECS[memory_type]
    # Then every field of TypeSpec holds a value of its declared type, and the notes say something
    for f in fields(TypeSpec):
        value = getattr(spec, f.name)
        assert conforms(value, HINTS[f.name]), (memory_type, f.name, value)
    assert spec.admission.strip()
    for text in (spec.prompt_hint, spec.description, spec.example, spec.admitted_when):
        assert text.strip(), memory_type
    # ...a type is said by someone, and extracted from at least the turns of whoever says it
    assert spec.said_by and spec.said_by <= spec.extracted_from, memory_type
    # ...and the day counts are positive where set
    for name in ("ttl_days", "max_ttl_days", "revalidate_after_days", "half_life_days"):
        value = getattr(spec, name)
        assert value is None or value > 0, (memory_type, name)


@pytest.mark.parametrize("memory_type", list(MemoryType), ids=str)
def test_each_row_is_consistent_with_itself(memory_type):
    spec = TYPE_SPECS[memory_type]
    # A hard bound is at least the default TTL (else the default could never apply)
    if spec.max_ttl_days is not None:
        assert spec.ttl_days is None or spec.ttl_days <= spec.max_ttl_days
    # Only a quarantined type has a reason to keep its vector in quarantine
    assert not spec.vector_in_quarantine or spec.quarantined
    # Consolidation folds slotless active records: never a slotted or quarantined type
    if spec.merges_near_duplicates:
        assert spec.slot is SlotRule.NONE and not spec.quarantined
    # The section is one the context renders
    assert spec.section in SECTIONS


def test_the_slot_sets_are_views_of_the_slot_rule():
    assert {t for t, s in TYPE_SPECS.items() if s.slot is not SlotRule.NONE} == SLOTTED_TYPES
    assert {t for t, s in TYPE_SPECS.items() if s.slot is SlotRule.REQUIRED} == SLOT_REQUIRED_TYPES
    assert set(MemoryType) - SLOTTED_TYPES == APPEND_ONLY_TYPES
    # the names other modules import still resolve to the table's views
    assert enums.MemoryType is MemoryType
    assert enums.SLOTTED_TYPES is SLOTTED_TYPES and enums.SLOT_REQUIRED_TYPES is SLOT_REQUIRED_TYPES


def test_ranking_half_lives_are_the_tables():
    assert {t: s.half_life_days for t, s in TYPE_SPECS.items()} == ranking.HALF_LIFE_DAYS
    for memory_type, spec in TYPE_SPECS.items():
        aged = ranking.recency_weight(memory_type, datetime(2025, 10, 1, tzinfo=UTC), NOW)
        expected = 1.0 if spec.half_life_days is None else 0.5 ** (365 / spec.half_life_days)
        assert aged == pytest.approx(expected), memory_type


def test_the_policy_defaults_are_the_tables():
    # Given a profile that names only its TTLs
    p = PolicyProfile(name="x", ttl_days={})
    # Then its hard bounds and revalidation ages are the table's
    assert p.max_ttl_days == {t: s.max_ttl_days for t, s in TYPE_SPECS.items() if s.max_ttl_days}
    assert p.revalidate_after_days == {
        t: s.revalidate_after_days for t, s in TYPE_SPECS.items() if s.revalidate_after_days
    }
    # ...and every preset's TTLs are the table's, but for the crm preset's longer-kept episodes
    for name in PRESETS:
        expected = {t: s.ttl_days for t, s in TYPE_SPECS.items()}
        if name == "crm":
            expected[MemoryType.EPISODE] = 365
        assert PROFILES[name].ttl_days == expected, name


@pytest.mark.parametrize("memory_type", [t for t, s in TYPE_SPECS.items() if s.max_ttl_days], ids=str)
def test_no_override_may_lift_a_types_hard_bound(memory_type):
    bound = TYPE_SPECS[memory_type].max_ttl_days
    assert bound is not None
    preset = PROFILES["crm"]
    # When an override raises the bound by a day, or removes it
    raised = preset.model_copy(update={"max_ttl_days": {**preset.max_ttl_days, memory_type: bound + 1}})
    removed = preset.model_copy(
        update={"max_ttl_days": {t: d for t, d in preset.max_ttl_days.items() if t is not memory_type}}
    )
    # Then both are refused, the preset itself is not
    for changed in (raised, removed):
        assert ("max_ttl_days", f"{memory_type.value} is kept at most {bound} days (hard bound)") in (
            guardrail_violations(changed, preset)
        )
    assert not [v for v in guardrail_violations(preset, preset) if v[0] == "max_ttl_days"]


def test_a_retrieval_may_name_every_type_at_once_but_no_more():
    assert RetrieveRequest(subject_id="S-1", types=list(MemoryType)).types == list(MemoryType)
    with pytest.raises(ValueError):
        RetrieveRequest(subject_id="S-1", types=[*MemoryType, MemoryType.FACT])


def candidate(memory_type: MemoryType, authority: Authority) -> Candidate:
    facts = CandidateFacts(f"m-{memory_type}-{authority}", memory_type, authority, 0.9, NOW, None, None)
    return Candidate(facts, similarity=0.9, lexical=1.0)


def section_of(c: Candidate) -> str:
    chosen = select(
        [c], bar=RelevanceBar(0.1, 0.1), top_k=5, verified_cap=VERIFIED_FACTS_CAP, stale=lambda _: None
    )
    (found,) = [name for name, bucket in zip(SECTIONS, chosen.buckets, strict=True) if bucket]
    return found


@pytest.mark.parametrize("memory_type", list(MemoryType), ids=str)
def test_retrieval_shows_each_type_in_the_section_its_row_names(memory_type):
    spec = TYPE_SPECS[memory_type]
    # A confirmed source: the row's section
    assert section_of(candidate(memory_type, Authority.CUSTOMER_CONFIRMED)) == spec.section
    # A verified source: the head of the context if the row says so, else the row's section
    expected = "verified_facts" if spec.heads_context_when_verified else spec.section
    assert section_of(candidate(memory_type, Authority.SYSTEM_OF_RECORD)) == expected
    # A customer's claim is never more than an unverified note
    assert section_of(candidate(memory_type, Authority.CUSTOMER_CLAIM)) == "unverified"


def test_the_speaker_names_are_the_transcripts_speakers():
    from agent_memory.domain.extraction import Speaker

    # Given every speaker a row names
    named = set().union(*(s.said_by | s.extracted_from for s in TYPE_SPECS.values()))
    # Then each is a speaker a transcript can have
    assert named <= {s.value for s in Speaker}


@pytest.mark.parametrize("memory_type", list(MemoryType), ids=str)
@pytest.mark.parametrize("authority", list(Authority), ids=str)
def test_the_section_a_memory_names_is_the_one_retrieval_shows_it_in(memory_type, authority):
    # Given one memory of this type from this source, as the API shows it
    record = MemoryRecord(
        id="m-1",
        tenant_id="t",
        subject_id="S-1",
        type=memory_type,
        category="X",
        content="x",
        source=Source(kind=authority),
        actor="x",
        authority=authority,
        confidence=0.9,
        status=Status.ACTIVE,
        created_at=NOW,
        effective_at=NOW,
        content_hash="h",
    )
    named = record.public_view()["section"]
    # When retrieval selects the same memory
    placed = section_of(candidate(memory_type, authority))
    # Then the API names the section retrieval shows it in (the console groups memories by it)
    assert named == placed
