"""The relevance bar (domain/relevance.py) and the selection's use of it: a shared word lifts only a
memory close enough to the question, and verified facts pass the bar unless mandatory."""

from datetime import UTC, datetime

import pytest

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.ranking import Candidate, CandidateFacts
from agent_memory.domain.relevance import (
    BELOW_SIMILARITY_FLOOR,
    EMBEDDER_RELEVANCE,
    KEYWORD_ONLY_BELOW_BAR,
    NO_VECTOR_NO_SHARED_WORD,
    RelevanceBar,
    relevance_bar,
)
from agent_memory.domain.selection import select

NOW = datetime(2026, 10, 1, tzinfo=UTC)
BAR = RelevanceBar(floor=0.4, keyword_bar=0.2)


@pytest.mark.parametrize(
    ("similarity", "shares_a_word", "why"),
    [
        (0.45, False, None),
        (0.4, False, None),
        (0.39, False, BELOW_SIMILARITY_FLOOR),
        (0.25, True, None),
        (0.19, True, KEYWORD_ONLY_BELOW_BAR),
        (None, True, None),
        (None, False, NO_VECTOR_NO_SHARED_WORD),
    ],
)
def test_a_memory_is_relevant_above_the_floor_or_with_a_shared_word_above_the_keyword_bar(
    similarity, shares_a_word, why
):
    assert BAR.exclusion(similarity, shares_a_word) == why


def test_a_keyword_bar_above_the_floor_is_refused():
    with pytest.raises(ValueError):
        RelevanceBar(floor=0.3, keyword_bar=0.4)


def test_every_embedder_has_its_row_and_an_unknown_one_gets_the_offline_models():
    assert relevance_bar("openai:text-embedding-3-small").floor == 0.78  # the seed's own cutoff
    assert relevance_bar("someone-elses-model") == EMBEDDER_RELEVANCE["local-minilm-onnx"]


def fact(
    rid: str, category: str, similarity: float, authority: Authority = Authority.SYSTEM_OF_RECORD
) -> Candidate:
    facts = CandidateFacts(rid, MemoryType.FACT, authority, 1.0, NOW, None, f"slot.{rid}", category)
    return Candidate(facts, similarity=similarity, lexical=0.0)


def test_a_verified_fact_is_held_to_the_bar_unless_its_category_is_mandatory():
    # Given two verified facts unrelated to the query, one of a mandatory category, and an
    # unverified claim of that category
    ranked = [
        fact("sla", "CONTRACT_COMMERCIAL", 0.05),
        fact("database", "TECHNICAL_ENVIRONMENT", 0.05),
        fact("claim", "CONTRACT_COMMERCIAL", 0.05, Authority.CUSTOMER_CLAIM),
    ]
    # When selected under a policy that makes commercial facts mandatory
    chosen = select(
        ranked, BAR, 5, 20, lambda _: None, mandatory_categories=frozenset({"CONTRACT_COMMERCIAL"})
    )
    # Then only the verified mandatory fact is served; the others are counted with why
    assert [c.record.id for bucket in chosen.buckets for c in bucket] == ["sla"]
    assert chosen.excluded == {"below_threshold": 2}
    assert chosen.not_relevant == {BELOW_SIMILARITY_FLOOR: 2}
