"""Relevance holds for every memory (seed 000 MC-RT-01: top-5 above a similarity cutoff; seed 001:
"Customer likes dark mode" is operationally irrelevant to another request): the embedder's
calibrated floor, a shared word lifting only a memory close enough to the question, and verified
facts held to it too unless the tenant's policy makes their category mandatory."""

import pytest

pytestmark = pytest.mark.e2e
CRM = "relevance-crm"  # the default preset: crm
SUPPORT = "relevance-support"
SUBJECT = "ACC-RELEVANCE-1"
CONTACT_QUESTION = "Which contact channel does the customer prefer?"


@pytest.fixture(scope="module")
def t(api):
    return {
        tenant: {
            "agent": api.token(tenant, "agent-1", ["agent"], clearance="confidential"),
            "integration": api.token(tenant, "crm", ["integration"]),
            "admin": api.token(tenant, "admin-1", ["admin"]),
        }
        for tenant in (CRM, SUPPORT)
    }


def _write(api, token, body):
    reply = api.post("/v1/memories", {"subject_id": SUBJECT, **body}, token=token)
    assert reply.status == 201, reply.body
    return reply.body["memory"]["id"]


@pytest.fixture(scope="module")
def memories(api, t):
    """The same memories in both tenants: two preferences, an unrelated verified fact of a
    technical category, and a verified commercial term."""
    ids = {}
    reply = api.put("/v1/policy", {"profile": "support"}, token=t[SUPPORT]["admin"])
    assert reply.status == 200, reply.body
    for tenant in (CRM, SUPPORT):
        agent, integration = t[tenant]["agent"], t[tenant]["integration"]
        ids[tenant] = {
            "dark_mode": _write(
                api,
                agent,
                {
                    "type": "preference",
                    "slot": "preference.ui_theme",
                    "content": "Prefers dark mode in the dashboard.",
                    "source": {"kind": "customer_confirmed"},
                },
            ),
            "email": _write(
                api,
                agent,
                {
                    "type": "preference",
                    "slot": "preference.contact_channel",
                    "content": "Prefers email, not phone, for anything about the account.",
                    "source": {"kind": "customer_confirmed"},
                },
            ),
            "database": _write(
                api,
                integration,
                {
                    "type": "fact",
                    "category": "TECHNICAL_ENVIRONMENT",
                    "slot": "environment.database",
                    "content": "Runs PostgreSQL 15 on premises.",
                    "source": {"kind": "system_of_record", "system": "cmdb"},
                },
            ),
            "renewal": _write(
                api,
                integration,
                {
                    "type": "fact",
                    "category": "CONTRACT_COMMERCIAL",
                    "slot": "contract.renewal_date",
                    "content": "The enterprise contract renews on 2027-09-01.",
                    "source": {"kind": "system_of_record", "system": "crm"},
                },
            ),
        }
    return ids


def _ask(api, token, query):
    reply = api.post("/v1/retrieve", {"subject_id": SUBJECT, "query": query}, token=token)
    assert reply.status == 200, reply.body
    return reply.body


def test_a_memory_sharing_only_a_word_with_the_question_is_not_served(api, t, memories):
    # Given a customer who prefers email, and who also prefers dark mode (a word in common with the
    # question, and nothing else)
    ids = memories[CRM]
    # When an agent asks which contact channel the customer prefers
    body = _ask(api, t[CRM]["agent"], CONTACT_QUESTION)
    served = {m["id"] for m in body["memories"]}
    # Then the contact preference is served and dark mode is not, counted with why
    assert ids["email"] in served
    assert ids["dark_mode"] not in served
    assert "dark mode" not in body["context"]
    assert body["relevance_excluded"].get("keyword_only_below_bar", 0) >= 1
    assert body["keyword_bar"] < body["relevance_floor"]
    # And the breakdown accounts for every memory counted below the threshold
    assert sum(body["relevance_excluded"].values()) == body["excluded"]["below_threshold"]


def test_a_verified_fact_unrelated_to_the_question_is_excluded_with_a_reason(api, t, memories):
    # Given a verified technical fact (a category the crm preset does not make mandatory)
    ids = memories[CRM]
    # When an agent asks about the contact channel
    body = _ask(api, t[CRM]["agent"], CONTACT_QUESTION)
    # Then the fact is not served for being verified, and the answer says why it was left out
    assert ids["database"] not in {m["id"] for m in body["memories"]}
    assert "PostgreSQL" not in body["context"]
    assert body["relevance_excluded"].get("below_similarity_floor", 0) >= 1


def test_a_verified_fact_of_a_mandatory_category_is_served_whatever_the_question(api, t, memories):
    # Given a verified commercial term, a category the crm preset makes mandatory (seed 000:
    # "inject verified account facts")
    ids = memories[CRM]
    # When an agent asks about something else
    body = _ask(api, t[CRM]["agent"], CONTACT_QUESTION)
    # Then the term is served among the verified facts all the same
    sections = {m["id"]: m["section"] for m in body["memories"]}
    assert sections.get(ids["renewal"]) == "verified_facts"


def test_under_a_preset_without_mandatory_categories_the_same_term_must_be_relevant(api, t, memories):
    # Given the same memories under the support preset, which makes no category mandatory
    ids = memories[SUPPORT]
    policy = api.get("/v1/policy", token=t[SUPPORT]["admin"]).body
    assert policy["effective"]["mandatory_fact_categories"] == []
    # When an agent asks about the contact channel
    body = _ask(api, t[SUPPORT]["agent"], CONTACT_QUESTION)
    served = {m["id"] for m in body["memories"]}
    # Then the commercial term is left out as unrelated, and the contact preference is served
    assert ids["renewal"] not in served and ids["database"] not in served
    assert ids["email"] in served
    # And asked about the renewal, the term is served
    about_renewal = _ask(api, t[SUPPORT]["agent"], "When does the contract renew?")
    assert ids["renewal"] in {m["id"] for m in about_renewal["memories"]}
