"""One commercial truth per account and family (seed 000 INV-MEM-03: "injecting multiple
conflicting versions of a commercial term in the same prompt is prohibited"; MC-CR-01): a system of
record's "$42/seat, no discount" and an approved "20% discount" (another slot of the price family)
are never both injected as verified facts. The reviewer approving a family's term is shown the
family's active terms and chooses what it supersedes, or says why it is independent; retrieval
keeps the source that spoke last."""

import pytest

pytestmark = pytest.mark.e2e

TENANT = "families"


@pytest.fixture(scope="module")
def tok(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "crm": api.token(TENANT, "crm", ["integration"], clearance="confidential"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"], clearance="confidential"),
        "auditor": api.token(TENANT, "aud-1", ["auditor"], clearance="confidential"),
    }


def sor_price(api, tok, subject: str) -> str:
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": subject,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.seat_price",
            "content": "Renewal price is $42 per seat per month, no discount.",
            "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
        },
        token=tok["crm"],
    )
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
    return reply.body["memory"]["id"]


def promised_discount(api, tok, subject: str) -> str:
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": subject,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "We promised them a 20% discount on the renewal price.",
            "source": {"kind": "customer_claim"},
        },
        token=tok["agent"],
    )
    assert reply.status == 201 and reply.body["decision"] == "pending_approval", reply.body
    return reply.body["memory"]["id"]


def retrieve_ids(api, tok, subject: str) -> tuple[list[str], dict]:
    reply = api.post(
        "/v1/retrieve", {"subject_id": subject, "query": "renewal price discount"}, token=tok["agent"]
    )
    assert reply.status == 200, reply.body
    return [m["id"] for m in reply.body["memories"]], reply.body["excluded"]


def approve(api, tok, memory_id: str, **body):
    return api.post(
        f"/v1/memories/{memory_id}/approve",
        {"evidence_ref": "signed-order-2026-118", **body},
        token=tok["reviewer"],
    )


def test_the_review_item_shows_the_familys_active_terms(api, tok):
    # Given the system of record's seat price and a discount waiting for a reviewer
    price = sor_price(api, tok, "ACC-FAM-QUEUE")
    discount = promised_discount(api, tok, "ACC-FAM-QUEUE")
    # When the reviewer reads the queue
    items = api.get("/v1/review", token=tok["reviewer"]).body["items"]
    item = next(i for i in items if i["memory"]["id"] == discount)
    # Then the discount's item names the seat price it may contradict
    assert [m["id"] for m in item["family_active"]] == [price]


def test_approving_without_a_choice_is_a_409_naming_supersedes_and_nothing_changes(api, tok):
    price = sor_price(api, tok, "ACC-FAM-409")
    discount = promised_discount(api, tok, "ACC-FAM-409")
    # When the reviewer approves the discount without saying what it supersedes
    reply = approve(api, tok, discount)
    # Then it is refused naming the field and the rival term, and nothing changed
    assert reply.status == 409, reply.body
    assert reply.body["error"]["field"] == "supersedes" and price in reply.body["error"]["message"]
    assert api.get(f"/v1/memories/{discount}", token=tok["agent"]).body["status"] == "pending_approval"
    assert api.get(f"/v1/memories/{price}", token=tok["agent"]).body["status"] == "active"
    # And the refusal is in the audit chain, with the rule named
    events = api.get(f"/v1/audit?memory_id={discount}", token=tok["auditor"]).body["events"]
    assert any(
        e["event_type"] == "memory_approval_refused" and e["reason"] == "commercial_family_choice"
        for e in events
    )


def test_a_term_that_supersedes_its_family_leaves_one_truth_in_the_prompt(api, tok):
    price = sor_price(api, tok, "ACC-FAM-SUP")
    discount = promised_discount(api, tok, "ACC-FAM-SUP")
    # When the reviewer approves the discount as superseding the seat price
    reply = approve(api, tok, discount, supersedes=[price])
    # Then the seat price is superseded and only the discount is served
    assert reply.status == 200, reply.body
    assert price in reply.body["superseded"]
    assert api.get(f"/v1/memories/{price}", token=tok["agent"]).body["status"] == "superseded"
    ids, _ = retrieve_ids(api, tok, "ACC-FAM-SUP")
    assert discount in ids and price not in ids


def test_a_term_approved_as_independent_stands_beside_its_family(api, tok):
    price = sor_price(api, tok, "ACC-FAM-IND")
    discount = promised_discount(api, tok, "ACC-FAM-IND")
    reply = approve(api, tok, discount, independent_reason="the discount applies on top of the list price")
    assert reply.status == 200, reply.body
    assert reply.body["superseded"] == []
    ids, excluded = retrieve_ids(api, tok, "ACC-FAM-IND")
    assert {price, discount} <= set(ids)
    assert "commercial_family_superseded" not in excluded


def test_supersedes_naming_a_record_outside_the_family_is_a_422(api, tok):
    sor_price(api, tok, "ACC-FAM-422")
    discount = promised_discount(api, tok, "ACC-FAM-422")
    reply = approve(api, tok, discount, supersedes=["mem_not_in_the_family"])
    assert reply.status == 422 and reply.body["error"]["field"] == "supersedes", reply.body


def test_when_the_system_of_record_speaks_after_an_approved_term_its_truth_alone_is_served(api, tok):
    # Given a discount approved while the account had no other price term
    discount = promised_discount(api, tok, "ACC-FAM-LATE")
    assert approve(api, tok, discount).status == 200
    # When the system of record later states the seat price with no discount
    price = sor_price(api, tok, "ACC-FAM-LATE")
    # Then retrieval serves the system of record's price and leaves the discount out, saying why
    ids, excluded = retrieve_ids(api, tok, "ACC-FAM-LATE")
    assert price in ids and discount not in ids
    assert excluded.get("commercial_family_superseded") == 1
