"""The retrieval broker's guarantees as properties, through the HTTP API: for any history of
writes to a subject (versions of a slot from stronger and weaker sources, old and new, some
expired, some above the caller's clearance) and any caller and budget, what comes back is only
active, unexpired, within clearance, one version per slot, in section order, inside the budget,
and every memory shown is in the context block."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_memory.domain.enums import SENSITIVITY_RANK, Sensitivity
from agent_memory.domain.tokens import count_tokens

pytestmark = pytest.mark.e2e
TENANT = "prop"
SECTION_ORDER = ["verified_facts", "relevant", "supporting", "unverified"]
CLEARANCES = ["public", "internal", "confidential", "restricted"]
WORDS = ["renewal", "seat", "price", "discount", "email", "contact", "legal", "team", "invoice", "Friday"]
_subjects = itertools.count()

# (type, slot, category, who writes it, source kind)
KINDS = {
    "sor_price": ("fact", "contract.seat_price", "CONTRACT_COMMERCIAL", "integration", "system_of_record"),
    "claimed_price": ("fact", "contract.seat_price", "CONTRACT_COMMERCIAL", "agent", "customer_confirmed"),
    "sor_industry": ("fact", "profile.industry", "ACCOUNT_PROFILE", "integration", "system_of_record"),
    "claimed_industry": ("fact", "profile.industry", "ACCOUNT_PROFILE", "agent", "customer_confirmed"),
    "preference": ("preference", "preference.contact_channel", None, "agent", "customer_confirmed"),
    "episode": ("episode", None, None, "agent", "customer_confirmed"),
    "sentiment": ("sentiment", None, None, "agent", "customer_claim"),
}
writes = st.lists(
    st.fixed_dictionaries(
        {
            "kind": st.sampled_from(sorted(KINDS)),
            "words": st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
            "day": st.integers(min_value=300, max_value=690),  # days after 2025-01-01: the last year
            "expiring": st.booleans(),  # expires 60 days from now
            "sensitivity": st.sampled_from([None, None, "internal", "confidential", "restricted"]),
        }
    ),
    min_size=1,
    max_size=7,
)


@pytest.fixture(scope="module")
def tokens(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"], clearance="restricted"),
        "integration": api.token(TENANT, "crm", ["integration"]),
        "reader": api.token(TENANT, "rev-1", ["reviewer"], clearance="restricted"),
        **{c: api.token(TENANT, f"agent-{c}", ["agent"], clearance=c) for c in CLEARANCES},
    }


def write_history(api, tokens, subject: str, history: list[dict]) -> None:
    for n, w in enumerate(history):
        mtype, slot, category, writer, source = KINDS[w["kind"]]
        day = datetime(2025, 1, 1, tzinfo=UTC).timestamp() + w["day"] * 86400
        body = {
            "subject_id": subject,
            "type": mtype,
            "content": f"Note {n}: " + " ".join(w["words"]) + ".",
            "source": {"kind": source, **({"system": "crm"} if source == "system_of_record" else {})},
            "effective_at": datetime.fromtimestamp(day, UTC).isoformat(),
        }
        if slot:
            body["slot"] = slot
            if mtype == "fact":
                body["category"] = category
        if w["expiring"]:
            body["expires_at"] = (datetime.now(UTC) + timedelta(days=60)).isoformat()
        if w["sensitivity"]:
            body["sensitivity"] = w["sensitivity"]
        reply = api.post("/v1/memories", body, token=tokens[writer])
        # admitted, or held/contested/refused by policy; or an expiry past what the type keeps (a
        # backdated episode's TTL) refused naming expires_at: a write may only shorten it
        refused_expiry = reply.status == 422 and reply.body["error"]["field"] == "expires_at"
        assert reply.status in (200, 201, 202) or refused_expiry, reply.body


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    history=writes,
    clearance=st.sampled_from(CLEARANCES),
    max_tokens=st.integers(min_value=60, max_value=1500),
    top_k=st.integers(min_value=1, max_value=5),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    days_later=st.sampled_from([0, 90]),
)
def test_whatever_was_written_retrieval_keeps_every_guarantee(
    api, tokens, container, history, clearance, max_tokens, top_k, query, days_later
):
    # Given any history of writes to a fresh subject
    subject = f"ACC-PROP-{next(_subjects)}"
    write_history(api, tokens, subject, history)
    # When an agent of any clearance asks with any budget, now or once some memories have expired
    # (before the nightly purge has run)
    now = datetime.now(UTC) + timedelta(days=days_later)
    clock = container.broker.clock
    container.broker.clock = lambda: now
    try:
        reply = api.post(
            "/v1/retrieve",
            {"subject_id": subject, "query": query, "max_tokens": max_tokens, "top_k": top_k},
            token=tokens[clearance],
        )
    finally:
        container.broker.clock = clock
    # Then it answers, or says clearly that the budget cannot hold the block's frame
    if reply.status == 422:
        assert reply.body["error"]["field"] == "max_tokens"
        return
    assert reply.status == 200, reply.body
    body = reply.body
    # And the block is inside the budget, counted the way the service promises
    assert body["tokens"] <= max_tokens and count_tokens(body["context"]) <= max_tokens
    memories = body["memories"]
    # And sections come in order, one version per slot, at most top_k per section
    sections = [m["section"] for m in memories]
    assert sections == sorted(sections, key=SECTION_ORDER.index)
    slots = [m["slot"] for m in memories if m["slot"]]
    assert len(slots) == len(set(slots))
    assert all(sections.count(s) <= top_k for s in set(sections) - {"verified_facts"})
    for m in memories:
        # And every memory shown is in the block, and is what the store holds now: active, unexpired,
        # this subject's, within the caller's clearance
        assert f"[{m['id']}]" in body["context"]
        stored = api.get(f"/v1/memories/{m['id']}", token=tokens["reader"]).body
        assert stored["status"] == "active" and stored["subject_id"] == subject
        assert stored["expires_at"] is None or datetime.fromisoformat(stored["expires_at"]) > now
        assert SENSITIVITY_RANK[Sensitivity(stored["sensitivity"])] <= CLEARANCES.index(clearance)
    # And nothing else of the subject is in the block: every id it names was returned
    named = {line.split("]")[0][3:] for line in body["context"].splitlines() if line.startswith("- [mem_")}
    assert named == {m["id"] for m in memories}
