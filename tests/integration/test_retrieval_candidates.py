"""The candidate query's two paths, on the real embedded PostgreSQL: a small subject's rows come back
whole and unranked, a larger one's as the top n per signal, and the broker ranks both the same way."""

from datetime import UTC, datetime

import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.retrieval import RetrieveRequest

pytestmark = pytest.mark.integration

TENANT = "tenant-cand"
AGENT = Principal(sub="agent@cand", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
TOPICS = [
    "renewal pricing for the extra analytics seats",
    "prefers a Tuesday morning call with the finance lead",
    "the SSO rollout slipped to the next sprint",
    "invoice exports fail for the EMEA entity",
    "asked for the quarterly roadmap deck",
    "the onboarding webinar was rated excellent",
    "wants the data retention policy in writing",
    "migrated the reporting dashboards last week",
    "complained about slow search in the admin console",
    "the champion is moving to a new team",
    "budget approval for next year is pending",
    "requested a sandbox for the integration tests",
]


@pytest.fixture(scope="module")
def subject(container):
    for i, text in enumerate(TOPICS):
        container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-CAND",
                type="episode",
                content=f"Customer {text} (note {i})",
                source={"kind": "customer_confirmed"},
            ),
        )
    return "S-CAND"


def candidates(container, subject: str, query: str, per_signal: int):
    vector = container.embedder.embed([query])[0]
    with container.store.tenant(TENANT, reuse_plans=True) as session:
        return session.retrieval_candidates(
            subject_id=subject,
            query_embedding=vector,
            query_text=query,
            types=None,
            max_sensitivity_rank=2,
            now=datetime.now(UTC),
            per_signal=per_signal,
        )


def test_given_a_subject_within_the_limit_when_searched_then_every_row_returns_unranked(container, subject):
    rows = candidates(container, subject, "renewal pricing for seats", per_signal=50)
    assert len(rows) == len(TOPICS)
    assert all(r.lexical is None for r in rows)  # SQL did not rank them
    assert all(r.similarity is not None and r.lexemes for r in rows)
    assert rows[0].query_lexemes and "renew" in rows[0].query_lexemes


def test_given_a_subject_over_the_limit_when_searched_then_only_the_top_n_per_signal_return(
    container, subject
):
    query = "renewal pricing for seats"
    everything = candidates(container, subject, query, per_signal=50)
    top = candidates(container, subject, query, per_signal=2)
    assert all(r.lexical is not None for r in top)
    # at most two per signal: vector, sentence vector, text (the subject has no verified facts)
    assert 2 <= len(top) <= 6 < len(everything)
    by_vector = sorted(everything, key=lambda r: (-(r.similarity or 0), r.facts.id))[:2]
    assert {r.facts.id for r in by_vector} <= {r.facts.id for r in top}
    matched = [r for r in top if r.lexical and r.lexical > 0]
    assert matched and all(
        "renew" in r.lexemes or "price" in r.lexemes or "seat" in r.lexemes for r in matched
    )


def test_given_either_path_when_the_broker_ranks_then_it_returns_the_same_memories(
    container, subject, monkeypatch
):
    import agent_memory.services.retrieval as retrieval

    request = RetrieveRequest(subject_id=subject, query="renewal pricing for the extra seats", top_k=2)
    unranked = container.broker.retrieve(AGENT, request)  # per signal max(50, 4 * 2): 12 rows fit
    monkeypatch.setattr(retrieval, "CANDIDATES_PER_SIGNAL", 11)  # 12 rows > 11: SQL ranks them
    ranked = container.broker.retrieve(AGENT, request)
    assert ranked.candidates < unranked.candidates == len(TOPICS)
    # scores are normalised over the candidates, so they differ; the order of what is returned does not
    assert [m["id"] for m in unranked.memories] == [m["id"] for m in ranked.memories]
    assert "renewal pricing" in unranked.memories[0]["content"]
