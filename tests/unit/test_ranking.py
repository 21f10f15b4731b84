"""Pure ranking rules: BM25 from database counts, relevance before age, newest version first."""

from collections import Counter
from datetime import UTC, datetime, timedelta
from itertools import pairwise

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.enums import Authority, MemoryType, Status
from agent_memory.domain.ranking import (
    BM25_B,
    BM25_K1,
    SUPERSEDE_MARGIN,
    SUPERSEDE_SIMILARITY,
    Candidate,
    bm25_counts,
    names_what_it_names,
    rank_candidates,
)
from agent_memory.domain.records import MemoryRecord, Source

NOW = datetime(2026, 10, 1, tzinfo=UTC)


def record(
    rid: str, *, days_old: float, session: str, mtype: MemoryType = MemoryType.EPISODE
) -> MemoryRecord:
    when = NOW - timedelta(days=days_old)
    return MemoryRecord(
        id=rid,
        tenant_id="t",
        subject_id="S-1",
        session_id=session,
        type=mtype,
        category="EPISODE",
        content=f"content of {rid}",
        source=Source(kind=Authority.CUSTOMER_CONFIRMED),
        actor="x",
        authority=Authority.CUSTOMER_CONFIRMED,
        confidence=0.9,
        status=Status.ACTIVE,
        created_at=when,
        effective_at=when,
        content_hash=rid,
    )


def unit(v: list[float]) -> np.ndarray:
    a = np.array(v, dtype=np.float32)
    return a / np.linalg.norm(a)


words = st.lists(st.sampled_from(["plan", "seat", "renew", "email", "price", "cake"]), max_size=12)


def textbook_bm25(query: list[str], docs: list[list[str]]) -> list[float]:
    """Okapi BM25 written out term by term over token lists (the reference, deliberately naive)."""
    n = len(docs)
    avg = sum(len(d) for d in docs) / n or 1.0
    scores = []
    for d in docs:
        score = 0.0
        for term in dict.fromkeys(query):
            f = d.count(term)
            if not f:
                continue
            df = sum(1 for other in docs if term in other)
            idf = np.log(1 + (n - df + 0.5) / (df + 0.5))
            score += idf * f * (BM25_K1 + 1) / (f + BM25_K1 * (1 - BM25_B + BM25_B * len(d) / avg))
        scores.append(score)
    return scores


@given(query=words, docs=st.lists(words, min_size=1, max_size=8))
def test_bm25_from_database_counts_equals_bm25_over_the_tokens(query, docs):
    # Given documents as token lists, and the same documents as the database counts them
    wanted = set(query)
    counts = [{t: n for t, n in Counter(d).items() if t in wanted} for d in docs]
    # When both forms are scored
    from_tokens = textbook_bm25(query, docs)
    from_counts = bm25_counts(query, counts, [len(d) for d in docs])
    # Then the scores agree
    np.testing.assert_allclose(from_counts, from_tokens)


def test_a_document_with_the_rarer_query_term_scores_higher():
    # Given three documents, one holding the term only it has
    counts = [{"renew": 1}, {"renew": 1, "seat": 1}, {"renew": 1}]
    # When BM25 scores them for "renew seat"
    scores = bm25_counts(["renew", "seat"], counts, [5, 5, 5])
    # Then the one with the rare term is first and the others tie
    assert scores[1] > scores[0] == scores[2] > 0


def test_a_long_message_is_not_buried_by_its_length():
    # Given a short memory and one five times longer, each holding the query term once
    counts = [{"renew": 1}, {"renew": 1}, {}]
    # When BM25 scores them
    short, long, _ = bm25_counts(["renew"], counts, [4, 20, 12])
    # Then the long one keeps most of the short one's score: its evidence is one clause among many,
    # not a weaker match (the textbook b = 0.75 would leave it under 0.6 of the short one's)
    assert 0.8 * short <= long < short


def test_relevance_outvotes_age():
    # Given an old, closely matching memory and a new, weakly matching one
    old = Candidate(record("old", days_old=400, session="a"), similarity=0.9, lexical=0.0)
    new = Candidate(record("new", days_old=1, session="b"), similarity=0.2, lexical=0.0)
    # When ranked
    ranked = rank_candidates([new, old], NOW)
    # Then relevance decides
    assert [c.record.id for c in ranked] == ["old", "new"]


def test_the_newer_version_of_the_same_thing_moves_above_the_older():
    # Given two memories about the same thing from different sessions, the older slightly more similar
    v = unit([1.0, 0.2, 0.0])
    older = Candidate(record("older", days_old=200, session="a"), similarity=0.80, lexical=0.0, embedding=v)
    newer = Candidate(record("newer", days_old=10, session="b"), similarity=0.75, lexical=0.0, embedding=v)
    filler = Candidate(
        record("other", days_old=5, session="c"), similarity=0.1, lexical=0.0, embedding=unit([0, 0, 1.0])
    )
    # When ranked
    ranked = rank_candidates([older, newer, filler], NOW, head=3)
    # Then the newer version wins, and reported scores stay non-increasing
    assert [c.record.id for c in ranked][:2] == ["newer", "older"]
    assert all(a.score >= b.score for a, b in pairwise(ranked))


def test_unrelated_newer_memories_do_not_jump_the_queue():
    # Given a newer memory whose vector is unrelated to the better-ranked older one
    older = Candidate(
        record("older", days_old=200, session="a"), similarity=0.80, lexical=0.0, embedding=unit([1.0, 0, 0])
    )
    newer = Candidate(
        record("newer", days_old=10, session="b"), similarity=0.75, lexical=0.0, embedding=unit([0, 1.0, 0])
    )
    # When ranked
    ranked = rank_candidates([older, newer], NOW, head=2)
    # Then the order is by score
    assert [c.record.id for c in ranked] == ["older", "newer"]


QUESTION = ["sso", "rollout", "escal"]  # "what did we agree about the SSO rollout after they escalated?"


def episode(
    rid: str, *, days_old: float, session: str, similarity: float, terms: dict[str, int], v: np.ndarray
):
    return Candidate(
        record(rid, days_old=days_old, session=session),
        similarity=similarity,
        lexical=float(bool(terms)),
        embedding=v,
        term_counts=terms,
        length=20,
    )


def test_given_a_newer_episode_about_something_else_when_ranked_then_the_clearly_more_similar_older_one_stays_first():
    # Given the asked-for episode (older, clearly the most similar, naming the topic and what happened)
    asked = episode(
        "asked",
        days_old=400,
        session="a",
        similarity=0.80,
        terms={"sso": 1, "rollout": 1, "escal": 1},
        v=unit([1.0, 0.0, 0.0]),
    )
    # And a newer call on another topic after the same kind of escalation: written alike (its vector
    # near the asked-for one's) and close in score, but naming only part of the question
    other_topic = episode(
        "other_topic",
        days_old=20,
        session="b",
        similarity=0.72,
        terms={"escal": 1},
        v=unit([0.5, 0.866, 0.0]),
    )
    filler = episode("filler", days_old=5, session="c", similarity=0.10, terms={}, v=unit([0.0, 0.0, 1.0]))
    # When ranked
    ranked = rank_candidates([asked, other_topic, filler], NOW, query_tokens=QUESTION, head=5)
    # Then it is the case the newest-version reorder looks at (similar vectors, within the margin)
    assert float(asked.embedding @ other_topic.embedding) >= SUPERSEDE_SIMILARITY
    assert other_topic.score >= asked.score - SUPERSEDE_MARGIN
    # And the asked-for episode keeps first place
    assert [c.record.id for c in ranked] == ["asked", "other_topic", "filler"]


def test_given_a_newer_version_naming_what_the_older_names_when_ranked_then_it_moves_above():
    # Given an older answer and a newer one about the same thing, one question term reworded
    older = episode(
        "older",
        days_old=200,
        session="a",
        similarity=0.80,
        terms={"sso": 1, "rollout": 1, "escal": 1},
        v=unit([1.0, 0.2, 0.0]),
    )
    newer = episode(
        "newer",
        days_old=10,
        session="b",
        similarity=0.74,
        terms={"sso": 2, "rollout": 1},
        v=unit([1.0, 0.3, 0.0]),
    )
    filler = episode("filler", days_old=5, session="c", similarity=0.10, terms={}, v=unit([0.0, 0.0, 1.0]))
    # When ranked
    ranked = rank_candidates([older, newer, filler], NOW, query_tokens=QUESTION, head=5)
    # Then the newer version comes first, and reported scores stay non-increasing
    assert [c.record.id for c in ranked] == ["newer", "older", "filler"]
    assert all(a.score >= b.score for a, b in pairwise(ranked))


def test_given_query_terms_when_compared_then_a_newer_memory_may_leave_out_at_most_one_the_older_names():
    v = unit([1.0, 0.0, 0.0])
    older = episode("o", days_old=9, session="a", similarity=0.5, terms={"a": 1, "b": 2, "c": 1, "z": 0}, v=v)

    def newer(terms: dict[str, int]) -> Candidate:
        return episode("n", days_old=1, session="b", similarity=0.5, terms=terms, v=v)

    assert names_what_it_names(newer({"a": 1, "b": 1, "c": 3}), older)
    assert names_what_it_names(newer({"a": 1, "b": 1, "d": 4}), older)  # one left out
    assert not names_what_it_names(newer({"a": 1, "d": 4}), older)  # two left out
    assert not names_what_it_names(newer({"a": 1, "b": 0, "z": 5}), older)  # a zero count names nothing
    # And with no full-text terms at all the test does not hold a memory back
    none = episode("none", days_old=9, session="a", similarity=0.5, terms={}, v=v)
    assert names_what_it_names(newer({}), none)


def test_verified_facts_do_not_decay_but_episodes_do():
    # Given the same relevance for an old fact and an old episode
    fact = Candidate(
        record("fact", days_old=720, session="a", mtype=MemoryType.FACT), similarity=0.5, lexical=0.0
    )
    episode = Candidate(record("episode", days_old=720, session="b"), similarity=0.5, lexical=0.0)
    anchor = Candidate(record("anchor", days_old=0, session="c"), similarity=0.0, lexical=0.0)
    # When ranked
    rank_candidates([fact, episode, anchor], NOW, head=0)
    # Then only the episode lost score to age
    assert fact.score > episode.score


def test_given_a_question_when_made_topical_then_filler_words_go_and_topic_words_stay():
    from agent_memory.domain.ranking import topical_query

    kept = topical_query("How many weeks ago did I mention my current job at NovaTech?")
    words = kept.lower().split()
    assert "current" in words and "job" in words and "novatech?" in words
    assert not {"many", "weeks", "ago", "mention"} & set(words)
    assert "currently" not in topical_query("What plan am I currently on?").lower().split()


def test_given_a_question_of_filler_only_when_made_topical_then_it_is_kept_whole():
    from agent_memory.domain.ranking import topical_query

    assert topical_query("many times?") == "many times?"
    assert topical_query("How many times?").split() == ["How", "?"]  # "how": a stop word to PostgreSQL


@given(
    st.lists(
        st.tuples(
            st.floats(min_value=-1, max_value=1),
            st.floats(min_value=0, max_value=3000),
            st.sampled_from(list(MemoryType)),
            st.sampled_from(list(Authority)),
            st.floats(min_value=0, max_value=1),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_scores_are_the_written_out_product_and_the_order_is_by_score_then_newest_then_id(rows):
    # Given candidates of any type, authority, confidence, age and similarity
    from agent_memory.domain import ranking as r

    cands = []
    for i, (similarity, days, mtype, authority, confidence) in enumerate(rows):
        rec = record(f"m{i:02d}", days_old=days, session=f"s{i}", mtype=mtype)
        rec = rec.model_copy(update={"authority": authority, "confidence": confidence})
        cands.append(Candidate(rec, similarity, 0.0))
    # When ranked with no newest-version window
    ranked = rank_candidates(cands, NOW, head=0)
    # Then each score is relevance x trust x verified bonus x confidence x recency, as written out
    for c in ranked:
        rec = c.record
        trust = r.TRUST_BASE + r.TRUST_PER_RANK * rec.authority.rank
        verified = r.VERIFIED_BOOST if rec.verified else 1.0
        confidence = r.CONFIDENCE_BASE + r.CONFIDENCE_WEIGHT * rec.confidence
        recency = 1 - r.RECENCY_WEIGHT + r.RECENCY_WEIGHT * r.recency_weight(rec.type, rec.effective_at, NOW)
        assert c.score == c.relevance * trust * verified * confidence * recency
    # And the order is by score, then the newer first, then by id
    keys = [(-c.score, -c.record.effective_at.timestamp(), c.record.id) for c in ranked]
    assert keys == sorted(keys)
