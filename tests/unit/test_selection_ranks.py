"""The place of each returned memory in the ranking (`rank` in the retrieval answer): the answer lists
memories by section, and rank is how to read them by relevance."""

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.ranking import Candidate, CandidateFacts, rank_candidates
from agent_memory.domain.relevance import RelevanceBar
from agent_memory.domain.selection import returned_ranks, select

NOW = datetime(2026, 10, 1, tzinfo=UTC)


def candidate(rid: str, mtype: MemoryType, authority: Authority, similarity: float) -> Candidate:
    facts = CandidateFacts(rid, mtype, authority, 0.9, NOW - timedelta(days=30), f"ses-{rid}", None)
    return Candidate(facts, similarity=similarity, lexical=0.0)


def test_given_an_episode_more_relevant_than_a_fact_when_selected_then_it_is_listed_later_but_ranked_first():
    # Given an episode that answers the question and a customer-confirmed fact that matches it less
    episode = candidate("episode", MemoryType.EPISODE, Authority.CUSTOMER_CLAIM, 0.80)
    fact = candidate("fact", MemoryType.FACT, Authority.CUSTOMER_CONFIRMED, 0.40)
    floor = candidate("weak", MemoryType.EPISODE, Authority.CUSTOMER_CLAIM, 0.20)
    ranked = rank_candidates([fact, episode, floor], NOW, head=5)
    # When selected, and listed as the answer lists them: section by section
    chosen = select(ranked, RelevanceBar(0.15, 0.15), 2, 20, lambda c: None)
    answer = [c.record.id for bucket in chosen.buckets for c in bucket]
    # Then the fact is listed first (the relevant section comes before unverified notes)
    assert answer == ["fact", "episode"]
    # And the ranks say the episode is the most relevant of the two returned
    assert returned_ranks(ranked, set(answer)) == {"episode": 1, "fact": 2}


@given(
    st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=20),
    st.data(),
)
def test_the_ranks_of_any_returned_memories_are_one_to_n_in_ranking_order(similarities, data):
    # Given ranked candidates and any subset of them returned (plus keys that are not memories)
    ranked = rank_candidates(
        [
            candidate(f"m{i:02d}", MemoryType.EPISODE, Authority.CUSTOMER_CLAIM, s)
            for i, s in enumerate(similarities)
        ],
        NOW,
        head=5,
    )
    ids = [c.record.id for c in ranked]
    returned = set(data.draw(st.lists(st.sampled_from(ids), unique=True)))
    # When their ranks are read
    ranks = returned_ranks(ranked, returned | {"working:cart", "live:plan_tier"})
    # Then they are 1..n, in the order of the ranking
    assert sorted(ranks.values()) == list(range(1, len(returned) + 1))
    assert sorted(ranks, key=ranks.__getitem__) == [i for i in ids if i in returned]
