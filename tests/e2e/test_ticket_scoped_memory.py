"""Ticket-scoped memory (seed 001's task memory): a memory written with scope `ticket` serves that
ticket only, and ends a policy number of days after the ticket resolves (the nightly run asks the
system of record)."""

import itertools
from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.ports.system_of_record import TicketState
from agent_memory.services.lifecycle import LifecycleService

pytestmark = pytest.mark.e2e
TENANT = "ticketco"
_n = itertools.count(1)


@pytest.fixture(scope="module")
def t(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "admin": api.token(TENANT, "admin-1", ["admin"]),
        "auditor": api.token(TENANT, "aud-1", ["auditor"]),
    }


def write(api, t, subject, content, **kw):
    body = {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed"},
        **kw,
    }
    return api.post("/v1/memories", body, token=t["agent"])


def retrieved_ids(api, t, subject, **kw):
    reply = api.post(
        "/v1/retrieve", {"subject_id": subject, "query": "printer driver reinstall", **kw}, token=t["agent"]
    )
    assert reply.status == 200, reply.body
    return {m["id"] for m in reply.body["memories"]}


@pytest.fixture
def subject():
    return f"ACC-TICKET-{next(_n)}"


@pytest.fixture
def ticket(subject):
    """A ticket of this subject's alone (the system of record keys tickets by id)."""
    return f"T-{subject}"


@pytest.fixture
def scoped(api, t, subject, ticket):
    scoped_reply = write(
        api,
        t,
        subject,
        "Printer driver reinstall tried twice; next step is a clean profile.",
        scope="ticket",
        ticket_id=ticket,
    )
    general = write(api, t, subject, "Customer runs the printer driver on a shared terminal server.")
    assert (scoped_reply.status, general.status) == (201, 201), (scoped_reply.body, general.body)
    return scoped_reply.body["memory"]["id"], general.body["memory"]["id"]


def test_a_ticket_scoped_memory_is_retrieved_for_its_ticket_only(api, t, subject, ticket, scoped):
    ticket_memory, general = scoped
    # When an agent retrieves for the ticket, for another ticket, and for none
    own = retrieved_ids(api, t, subject, ticket_id=ticket)
    other = retrieved_ids(api, t, subject, ticket_id="T-200")
    none = retrieved_ids(api, t, subject)
    # Then only the retrieval for its own ticket sees it; the subject's memory serves every one
    assert ticket_memory in own and general in own
    assert ticket_memory not in other and general in other
    assert ticket_memory not in none and general in none


@pytest.mark.parametrize("ticket_id", [None, "", "   "])
def test_scope_ticket_without_a_ticket_id_is_422_naming_it_and_writes_nothing(api, t, subject, ticket_id):
    body = {"scope": "ticket"} if ticket_id is None else {"scope": "ticket", "ticket_id": ticket_id}
    reply = write(api, t, subject, "A note for a ticket nobody named.", **body)
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "ticket_id"
    listed = api.get(f"/v1/subjects/{subject}/memories", token=t["agent"]).body
    assert listed["memories"] == []


def nightly(container, now):
    return LifecycleService(
        container.store,
        container.policies,
        container.objects,
        transcript_ttl_days=7,
        system_of_record=container.system_of_record,
        clock=lambda: now,
    ).purge(tenants=[TENANT], consolidate=False)


def memory(api, t, memory_id):
    return api.get(f"/v1/memories/{memory_id}", token=t["agent"]).body


def test_a_resolved_tickets_memories_expire_thirty_days_after_it_resolved(
    api, t, container, subject, ticket, scoped
):
    ticket_memory, general = scoped
    now = datetime.now(UTC)
    # Given the ticket resolved five days ago
    resolved_at = now - timedelta(days=5)
    container.system_of_record.set_ticket(
        TENANT, TicketState(ticket, "Resolved", None, None, resolved_at), subject
    )
    # When the nightly run passes
    report = nightly(container, now)
    # Then the ticket's memory ends 30 days (the default) after the resolution, the other is untouched
    assert report.ticket_memories_bounded >= 1
    ends = datetime.fromisoformat(memory(api, t, ticket_memory)["expires_at"])
    assert ends == resolved_at + timedelta(days=30)
    assert memory(api, t, ticket_memory)["status"] == "active"
    assert memory(api, t, general)["expires_at"] is None or memory(api, t, general)["expires_at"] != ends
    # and once those 30 days are over, the next nightly run expires it, audited
    nightly(container, resolved_at + timedelta(days=30, minutes=1))
    assert memory(api, t, ticket_memory)["status"] == "expired"
    assert memory(api, t, general)["status"] == "active"
    events = api.get(f"/v1/audit?memory_id={ticket_memory}", token=t["auditor"]).body["events"]
    assert "ticket_resolved_expiry_set" in [e["reason"] for e in events]
    assert "memory_expired" in [e["event_type"] for e in events]


def test_a_ticket_resolved_long_ago_ends_its_memories_in_the_same_run(
    api, t, container, subject, ticket, scoped
):
    ticket_memory, _ = scoped
    now = datetime.now(UTC)
    container.system_of_record.set_ticket(
        TENANT, TicketState(ticket, "closed", None, None, now - timedelta(days=31)), subject
    )
    nightly(container, now)
    assert memory(api, t, ticket_memory)["status"] == "expired"


@pytest.mark.parametrize("status", ["open", "pending", "in_progress"])
def test_an_open_tickets_memories_keep_their_expiry(api, t, container, subject, ticket, scoped, status):
    ticket_memory, _ = scoped
    before = memory(api, t, ticket_memory)["expires_at"]
    container.system_of_record.set_ticket(
        TENANT, TicketState(ticket, status, None, None, datetime.now(UTC) - timedelta(days=90)), subject
    )
    nightly(container, datetime.now(UTC))
    after = memory(api, t, ticket_memory)
    assert (after["status"], after["expires_at"]) == ("active", before)


def test_the_retention_and_the_resolved_statuses_are_the_tenants_policy(
    api, t, container, subject, ticket, scoped
):
    ticket_memory, _ = scoped
    reply = api.put(
        "/v1/policy",
        {
            "profile": "support",
            "overrides": {"ticket_memory_retention_days": 7, "ticket_resolved_statuses": ["done"]},
        },
        token=t["admin"],
    )
    assert reply.status == 200, reply.body
    try:
        now = datetime.now(UTC)
        container.system_of_record.set_ticket(
            TENANT, TicketState(ticket, "resolved", None, None, now), subject
        )
        nightly(container, now)
        assert memory(api, t, ticket_memory)["expires_at"] is None or (
            datetime.fromisoformat(memory(api, t, ticket_memory)["expires_at"]) != now + timedelta(days=30)
        )
        container.system_of_record.set_ticket(TENANT, TicketState(ticket, "Done", None, None, now), subject)
        nightly(container, now)
        assert datetime.fromisoformat(memory(api, t, ticket_memory)["expires_at"]) == now + timedelta(days=7)
    finally:
        assert api.put("/v1/policy", {"profile": "support"}, token=t["admin"]).status == 200


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        ({"ticket_memory_retention_days": -1}, "overrides.ticket_memory_retention_days"),
        ({"ticket_memory_retention_days": 3651}, "overrides.ticket_memory_retention_days"),
        ({"ticket_resolved_statuses": []}, "overrides.ticket_resolved_statuses"),
        ({"ticket_resolved_statuses": [""]}, "overrides.ticket_resolved_statuses.0"),
    ],
)
def test_a_bad_ticket_policy_is_422_naming_the_field_and_changes_nothing(api, t, overrides, field):
    before = api.get("/v1/policy", token=t["admin"]).body
    reply = api.put("/v1/policy", {"profile": "support", "overrides": overrides}, token=t["admin"])
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"].startswith(field)
    assert api.get("/v1/policy", token=t["admin"]).body == before
