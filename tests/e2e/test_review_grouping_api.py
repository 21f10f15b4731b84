"""A review queue worth a reviewer's time: the same commercial claim extracted several times for one
subject is shown as one group (`similar_pending`; `group_similar=true` lists its newest item only),
while a different claim, or the same words about another subject, stays apart."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

TENANT = "review-groups"


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="confidential"),
        "internal_reviewer": api.token(TENANT, "rev-2", ["reviewer"], clearance="internal"),
    }


def claim(subject: str, content: str, slot: str = "contract.discount") -> dict:
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "CONTRACT_COMMERCIAL",
        "slot": slot,
        "content": content,
        "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
        "confidence": 0.7,
    }


def test_near_identical_pending_items_of_one_subject_are_reviewed_as_one(api, t):
    # Given the same discount claim written three times in other words for one account, a claim
    # worded alike with another figure, and the same words for another account
    same = [
        "The customer says we promised them a 20% discount on the renewal.",
        "Per the customer, a 20% renewal discount was promised by us.",
        "Customer claims a 20% renewal discount was promised to them.",
    ]
    ids = []
    for text in same:
        reply = api.post("/v1/memories", claim("ACC-G1", text), token=t["agent"])
        assert reply.status == 201 and reply.body["decision"] == "pending_approval", reply.body
        ids.append(reply.body["memory"]["id"])
    # (a sentence as alike as the others, with another figure: a different claim)
    other = api.post(
        "/v1/memories",
        claim("ACC-G1", "The customer says we promised them a 25% discount on the renewal."),
        token=t["agent"],
    ).body["memory"]["id"]
    elsewhere = api.post("/v1/memories", claim("ACC-G2", same[0]), token=t["agent"]).body["memory"]["id"]

    # When the reviewer reads the queue
    items = {i["memory"]["id"]: i for i in api.get("/v1/review?limit=50", token=t["reviewer"]).body["items"]}
    # Then each of the three names the other two, newest first, and nothing else is grouped
    for mine in ids:
        assert sorted(items[mine]["similar_pending"]) == sorted(set(ids) - {mine}), items[mine]
    assert items[ids[0]]["similar_pending"] == [ids[2], ids[1]]
    assert "similar_pending" not in items[other] and "similar_pending" not in items[elsewhere]

    # When the reviewer asks for the grouped queue, a page at a time
    grouped, cursor = [], None
    while True:
        path = "/v1/review?limit=2&group_similar=true" + (f"&cursor={cursor}" if cursor else "")
        page = api.get(path, token=t["reviewer"]).body
        grouped += [i["memory"]["id"] for i in page["items"]]
        cursor = page.get("next_cursor")
        if not cursor:
            break
    # Then the group is listed once, by its newest item, and the others as they were
    assert sorted(grouped) == sorted([ids[2], other, elsewhere])

    # And when one of the group is decided, the others no longer name it
    rejected = api.post(f"/v1/memories/{ids[2]}/reject", {"note": "not agreed"}, token=t["reviewer"])
    assert rejected.status == 200, rejected.body
    items = {i["memory"]["id"]: i for i in api.get("/v1/review?limit=50", token=t["reviewer"]).body["items"]}
    assert items[ids[1]]["similar_pending"] == [ids[0]]


def test_a_reviewer_below_the_items_clearance_sees_no_group_member(api, t):
    # Given two near-identical confidential claims
    for text in (
        "The customer says we promised them a 5% SLA credit.",
        "Per the customer, a 5% SLA credit was promised by us.",
    ):
        assert (
            api.post("/v1/memories", claim("ACC-G3", text, slot="contract.sla"), token=t["agent"]).status
            == 201
        )
    # When a reviewer with internal clearance reads the queue, Then neither appears, nor its id
    page = api.get("/v1/review?limit=200", token=t["internal_reviewer"]).body
    assert all(i["memory"]["subject_id"] != "ACC-G3" for i in page["items"])
    assert all("similar_pending" not in i for i in page["items"])
