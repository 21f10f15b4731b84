"""Caps a caller cannot raise: the tenant's token envelope, and `top_k` across every section of a
retrieval (verified facts first within it, each section above the relevance floor)."""

import pytest

pytestmark = pytest.mark.e2e
TENANT = "caps"
WEALTH = "caps-wealth"
SUBJECT = "ACC-CAPS-1"
FACTS = [
    ("account.region", "Data residency region is Frankfurt for the renewal contract."),
    ("account.billing_cycle", "Billing cycle for the renewal is quarterly in advance."),
    ("account.support_tier", "Support tier on renewal is premium with a named engineer."),
]
PREFERENCES = [
    ("preference.contact_channel", "Send renewal paperwork by email, never by phone."),
    ("preference.meeting_day", "Renewal meetings on Tuesdays suit the customer best."),
    ("preference.language", "Renewal documents in German, please."),
]


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="confidential"),
        "integration": api.token(TENANT, "crm", ["integration"]),
        "wealth_agent": api.token(WEALTH, "agent-2", ["agent"]),
        "wealth_admin": api.token(WEALTH, "admin-2", ["admin"]),
        "crm_agent": api.token("caps-crm", "agent-3", ["agent"]),
    }


@pytest.fixture(scope="module")
def seeded(api, t, container):
    for slot, content in FACTS:
        reply = api.post(
            "/v1/memories",
            {
                "subject_id": SUBJECT,
                "type": "fact",
                "category": "ACCOUNT_PROFILE",
                "slot": slot,
                "content": content,
                "source": {"kind": "system_of_record", "system": "crm"},
            },
            token=t["integration"],
        )
        assert reply.status == 201, reply.body
    for slot, content in PREFERENCES:
        reply = api.post(
            "/v1/memories",
            {
                "subject_id": SUBJECT,
                "type": "preference",
                "slot": slot,
                "content": content,
                "source": {"kind": "customer_confirmed"},
            },
            token=t["agent"],
        )
        assert reply.status == 201, reply.body
    reply = api.put("/v1/policy", {"profile": "wealth"}, token=t["wealth_admin"])
    assert reply.status == 200, reply.body
    container.system_of_record.set_values(TENANT, SUBJECT, {"seats": 450})
    return True


def retrieve(api, token, **body):
    body.setdefault("subject_id", SUBJECT)
    return api.post("/v1/retrieve", body, token=token)


@pytest.mark.parametrize("asked", [4000, 8000, 2049])
def test_under_the_wealth_profile_a_budget_above_2048_tokens_is_refused_naming_max_tokens(
    api, t, seeded, asked
):
    # Given a wealth tenant (seed 003: 2,048 tokens is its envelope, not only its default)
    # When an agent asks for more
    reply = retrieve(api, t["wealth_agent"], query="renewal terms", max_tokens=asked)
    # Then it is refused as the crm profile refuses a request above its envelope
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "max_tokens"
    assert "2048" in reply.body["error"]["message"]


def test_under_the_wealth_profile_the_default_and_the_envelope_are_2048_tokens(api, t, seeded):
    # Given a wealth tenant
    # When an agent asks with no budget, then with exactly the envelope
    default = retrieve(api, t["wealth_agent"], query="renewal terms")
    at_cap = retrieve(api, t["wealth_agent"], query="renewal terms", max_tokens=2048)
    # Then both answer within 2,048 tokens
    assert (default.status, at_cap.status) == (200, 200)
    assert default.body["max_tokens"] == at_cap.body["max_tokens"] == 2048


def test_the_crm_profile_refuses_above_its_envelope_the_same_way(api, t, seeded):
    reply = retrieve(api, t["crm_agent"], query="renewal terms", max_tokens=6001)
    assert reply.status == 422 and reply.body["error"]["field"] == "max_tokens"


@pytest.mark.parametrize("envelope", [2049, 8192])
def test_a_tenant_admin_cannot_raise_the_presets_envelope_and_nothing_changes(api, t, seeded, envelope):
    # Given the wealth tenant's policy
    before = api.get("/v1/policy", token=t["wealth_admin"]).body
    # When its admin tries to raise the envelope above the preset's
    reply = api.put(
        "/v1/policy",
        {"profile": "wealth", "overrides": {"envelope_tokens": envelope}},
        token=t["wealth_admin"],
    )
    # Then it is refused naming the field, and the policy is as it was
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "overrides.envelope_tokens"
    assert api.get("/v1/policy", token=t["wealth_admin"]).body == before


def test_a_tenant_admin_may_lower_the_envelope(api, t, seeded):
    reply = api.put(
        "/v1/policy",
        {"profile": "wealth", "overrides": {"envelope_tokens": 1024, "retrieval_max_tokens": 1024}},
        token=t["wealth_admin"],
    )
    try:
        assert reply.status == 200, reply.body
        refused = retrieve(api, t["wealth_agent"], query="renewal terms", max_tokens=2048)
        assert refused.status == 422 and refused.body["error"]["field"] == "max_tokens"
    finally:
        assert api.put("/v1/policy", {"profile": "wealth"}, token=t["wealth_admin"]).status == 200


@pytest.mark.parametrize("top_k", [1, 2, 3, 5])
def test_top_k_caps_the_memories_across_all_sections_with_verified_facts_first(api, t, seeded, top_k):
    # Given a subject with three verified facts and three preferences, all about the renewal
    # When an agent retrieves the top k
    reply = retrieve(api, t["agent"], query="renewal", top_k=top_k)
    # Then at most k memories come back, in all sections together, verified facts first
    assert reply.status == 200, reply.body
    memories = reply.body["memories"]
    assert len(memories) == top_k
    sections = [m["section"] for m in memories]
    verified = sum(1 for s in sections if s == "verified_facts")
    assert verified == min(top_k, len(FACTS))
    assert sections == sorted(sections, key=lambda s: s != "verified_facts")
    # and what top_k left out is counted
    assert reply.body["excluded"].get("top_k", 0) == len(FACTS) + len(PREFERENCES) - top_k


def test_with_room_after_the_verified_facts_the_rest_fill_it_in_rank_order(api, t, seeded):
    reply = retrieve(api, t["agent"], query="renewal", top_k=5)
    sections = [m["section"] for m in reply.body["memories"]]
    assert sections.count("verified_facts") == len(FACTS) and sections.count("relevant") == 2


@pytest.mark.parametrize("top_k", [6, 10, 50])
def test_top_k_above_the_tenants_ceiling_is_refused_naming_the_field_and_the_limit(api, t, seeded, top_k):
    # Given a crm tenant (seed 000: top-5 semantic retrieval)
    # When an agent asks for more than five memories
    reply = retrieve(api, t["agent"], query="renewal", top_k=top_k)
    # Then it is refused, naming top_k and the ceiling, rather than quietly served five
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "top_k" and "5" in reply.body["error"]["message"]


def test_a_tenant_admin_cannot_raise_the_top_k_ceiling(api, t, seeded):
    # Given the wealth tenant (seed 003: max 5 chunks)
    before = api.get("/v1/policy", token=t["wealth_admin"]).body
    # When its admin tries to raise the ceiling or the default above it
    raised = api.put(
        "/v1/policy", {"profile": "wealth", "overrides": {"retrieval_top_k_max": 20}}, token=t["wealth_admin"]
    )
    default = api.put(
        "/v1/policy", {"profile": "wealth", "overrides": {"retrieval_top_k": 8}}, token=t["wealth_admin"]
    )
    # Then both are refused naming the field, and the policy is as it was
    assert raised.status == 422 and raised.body["error"]["field"] == "overrides.retrieval_top_k_max"
    assert default.status == 422 and default.body["error"]["field"] == "overrides.retrieval_top_k"
    assert api.get("/v1/policy", token=t["wealth_admin"]).body == before


@pytest.mark.parametrize(("memory_type", "days"), [("episode", 91), ("episode", 3650), ("sentiment", 181)])
def test_a_tenant_admin_cannot_keep_a_type_longer_than_the_preset(api, t, seeded, memory_type, days):
    # Given the wealth tenant (RET-01: episodes 90 days; INV-MEM-02: sentiment 180 days)
    # When its admin tries to lengthen a type's retention
    reply = api.put(
        "/v1/policy",
        {"profile": "wealth", "overrides": {"ttl_days": {memory_type: days}}},
        token=t["wealth_admin"],
    )
    # Then it is refused naming the field
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "overrides.ttl_days"


def test_live_values_do_not_count_in_top_k(api, t, seeded):
    # Given a live value for the subject's seats, and a slot the system of record owns in memory
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.seats",
            "content": "Renewal covers 450 seats.",
            "value": {"seats": 450},
            "source": {"kind": "system_of_record", "system": "crm"},
        },
        token=t["integration"],
    )
    assert reply.status == 201, reply.body
    # When an agent retrieves one memory about the seats
    got = retrieve(api, t["agent"], query="how many seats at renewal", top_k=1)
    # Then the live value is shown besides the one memory, in the budget, not in top_k
    assert got.status == 200, got.body
    assert len(got.body["memories"]) == 1
    assert [lv["field"] for lv in got.body["live"]] == ["seats"]
    assert "seats = 450" in got.body["context"]


FLOOR_SUBJECT = "ACC-CAPS-FLOOR"


@pytest.fixture(scope="module")
def unrelated_fact(api, t):
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": FLOOR_SUBJECT,
            "type": "fact",
            "category": "TECHNICAL_ENVIRONMENT",
            "slot": "environment.database",
            "content": "Runs PostgreSQL 15 on premises.",
            "source": {"kind": "system_of_record", "system": "cmdb"},
        },
        token=t["integration"],
    )
    assert reply.status == 201, reply.body
    return reply.body["memory"]["id"]


UNRELATED_QUERY = "zebra giraffe savanna migration"


def test_a_verified_fact_below_the_relevance_floor_is_left_out(api, t, unrelated_fact):
    # Given a verified fact that has nothing to do with the question
    # When an agent asks about something else
    reply = retrieve(api, t["agent"], subject_id=FLOOR_SUBJECT, query=UNRELATED_QUERY)
    # Then the fact does not pass the floor just for being verified
    assert reply.status == 200, reply.body
    assert reply.body["memories"] == []
    assert reply.body["excluded"] == {"below_threshold": 1}
    assert unrelated_fact not in reply.body["context"]


@pytest.mark.parametrize(
    "named",
    [{"slots": ["environment.database"]}, {"query": UNRELATED_QUERY + " environment.database"}],
    ids=["slots field", "slot in the query"],
)
def test_a_slot_asked_for_by_name_skips_the_floor(api, t, unrelated_fact, named):
    body = {"query": UNRELATED_QUERY, **named}
    reply = retrieve(api, t["agent"], subject_id=FLOOR_SUBJECT, **body)
    assert reply.status == 200, reply.body
    assert [m["id"] for m in reply.body["memories"]] == [unrelated_fact]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"slots": ["Not A Slot"]}, "slots.0"),
        ({"slots": "environment.database"}, "slots"),
        ({"slots": ["a.b"] * 21}, "slots"),
    ],
)
def test_a_malformed_slots_list_is_422_naming_the_field(api, t, seeded, body, field):
    reply = retrieve(api, t["agent"], query="renewal", **body)
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == field
