"""The retrieval answer lists memories by section and says each one's place by relevance (`rank`),
on the real embedded PostgreSQL through the broker."""

import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.retrieval import RetrieveRequest

pytestmark = pytest.mark.integration

TENANT = "tenant-rank"
AGENT = Principal(sub="agent@rank", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
SUBJECT = "S-RANK"


@pytest.fixture(scope="module")
def subject(container):
    # Given an episode that answers the question (listed under supporting context) and a preference
    # that only touches it (listed under relevant memories, a section that comes first)
    writes = {
        "episode": (
            "episode",
            None,
            "Renewal call: the customer asked whether a discount is possible for 600 seats.",
        ),
        "preference": (
            "preference",
            "preference.contact_channel",
            "Prefers email, not phone, for seat discounts.",
        ),
        "other": ("episode", None, "The onboarding webinar for the new analysts was rated excellent."),
    }
    ids = {}
    for name, (kind, slot, text) in writes.items():
        result = container.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id=SUBJECT, type=kind, slot=slot, content=text, source={"kind": "customer_confirmed"}
            ),
        )
        ids[name] = result.memory.id
    return ids


def test_given_the_best_match_in_a_later_section_when_retrieved_then_its_rank_is_one(container, subject):
    # When the broker is asked about the discount
    answer = container.broker.retrieve(
        AGENT, RetrieveRequest(subject_id=SUBJECT, query="Did they ask for a discount on 600 seats?", top_k=5)
    )
    listed = [(m["id"], m["section"], m["rank"]) for m in answer.memories]
    # Then the preference is listed first, by section
    assert listed[0][:2] == (subject["preference"], "relevant")
    # And the episode about the discount is the most relevant: rank 1
    by_rank = sorted(answer.memories, key=lambda m: m["rank"])
    assert by_rank[0]["id"] == subject["episode"]
    # And the ranks are 1..n in the order of the scores
    assert [m["rank"] for m in by_rank] == list(range(1, len(by_rank) + 1))
    assert [m["score"] for m in by_rank] == sorted((m["score"] for m in by_rank), reverse=True)
