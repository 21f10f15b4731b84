"""Revalidation by age through the HTTP API (docs/rules.md, Types: facts revalidate after 180 days,
preferences after 365): the age counts from the later of effective_at and last_validated_at;
admission and the nightly run flag what is due (audited); reads and retrieval show the flag, the
context line says so; POST /v1/memories/{id}/revalidate confirms one (agent, integration)."""

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytestmark = pytest.mark.e2e

TENANT = "reval"
DAY = timedelta(days=1)


@pytest.fixture(scope="module")
def tok(api):
    return {
        "agent": api.token(TENANT, "agent-1", ["agent"]),
        "integration": api.token(TENANT, "crm-sync", ["integration"]),
        "restricted": api.token(TENANT, "sync-hi", ["integration", "agent"], clearance="restricted"),
        "reviewer": api.token(TENANT, "rev-1", ["reviewer"]),
        "auditor": api.token(TENANT, "aud-1", ["auditor"]),
        "admin": api.token(TENANT, "adm-1", ["admin"]),
        "other_tenant": api.token("reval-other", "agent-x", ["agent"]),
    }


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def contact_fact(subject: str, days_old: float, **extra):
    return {
        "subject_id": subject,
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "content": "Dana Reyes is the primary contact for the renewal.",
        "source": {"kind": "customer_confirmed", "system": "chat", "reference": "conv-1"},
        "effective_at": iso(datetime.now(UTC) - days_old * DAY),
        **extra,
    }


def channel_preference(subject: str, days_old: float):
    return {
        "subject_id": subject,
        "type": "preference",
        "slot": "preference.contact_channel",
        "content": "Prefers to be contacted by email.",
        "source": {"kind": "customer_confirmed"},
        "effective_at": iso(datetime.now(UTC) - days_old * DAY),
    }


def write(api, tok, body, who="agent"):
    reply = api.post("/v1/memories", body, token=tok[who])
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body
    return reply.body["memory"]


def events(database_url, memory_id):
    with psycopg.connect(database_url) as c:
        rows = c.execute(
            "SELECT event_type, reason, actor, payload FROM memory_events WHERE memory_id = %s ORDER BY seq",
            (memory_id,),
        ).fetchall()
    return rows


def retrieve(api, tok, subject, query="Who is the primary contact for the renewal?"):
    reply = api.post("/v1/retrieve", {"subject_id": subject, "query": query}, token=tok["agent"])
    assert reply.status == 200, reply.body
    return reply.body


def context_line(body, memory_id):
    return next(line for line in body["context"].splitlines() if f"[{memory_id}]" in line)


def run_nightly(container, monkeypatch, at: datetime):
    """The nightly lifecycle run (`memory purge`) for this tenant, as if it ran at `at`."""
    monkeypatch.setattr(container.lifecycle, "clock", lambda: at)
    return container.lifecycle.purge(tenants=[TENANT], consolidate=False)


def test_a_fact_admitted_past_its_age_is_flagged_audited_and_marked_in_reads_and_retrieval(
    api, tok, database_url
):
    # Given a customer's fact about the contact, dated 200 days ago and never confirmed since
    memory = write(api, tok, contact_fact("ACC-R1", 200))

    # Then it is admitted already due for revalidation, and the audit log says why
    assert memory["needs_revalidation"] is True and memory["last_validated_at"] is None
    due = [e for e in events(database_url, memory["id"]) if e[0] == "memory_revalidation_due"]
    assert [(e[1], e[2]) for e in due] == [("revalidation_age_reached", "agent-1")]
    assert "Dana" not in str(due[0][3])  # no content in the event

    # And reads carry the flag
    assert api.get(f"/v1/memories/{memory['id']}", token=tok["agent"]).body["needs_revalidation"] is True
    listed = api.get("/v1/subjects/ACC-R1/memories", token=tok["agent"]).body["memories"]
    assert [m["needs_revalidation"] for m in listed if m["id"] == memory["id"]] == [True]

    # And retrieval still serves it, marked in the response and in its context line
    body = retrieve(api, tok, "ACC-R1")
    shown = next(m for m in body["memories"] if m["id"] == memory["id"])
    assert shown["needs_revalidation"] is True
    assert "needs revalidation" in context_line(body, memory["id"])


def test_records_within_their_age_or_without_one_are_not_flagged(api, tok):
    # Given a fact of 170 days, a preference of 200 days (its age is 365) and an old episode
    fact = write(api, tok, contact_fact("ACC-R2", 170))
    pref = write(api, tok, channel_preference("ACC-R2", 200))
    episode = write(
        api,
        tok,
        {
            "subject_id": "ACC-R2",
            "type": "episode",
            "content": "Walked through the renewal contract with the contact.",
            "source": {"kind": "customer_confirmed"},
            "effective_at": iso(datetime.now(UTC) - 60 * DAY),
        },
    )
    # Then none is due, in reads and in retrieval (no marker on any line)
    for m in (fact, pref, episode):
        assert m["needs_revalidation"] is False
    body = retrieve(api, tok, "ACC-R2", "renewal contact email")
    assert all(m["needs_revalidation"] is False for m in body["memories"]) and body["memories"]
    assert "needs revalidation" not in body["context"]


def test_a_preference_past_365_days_is_flagged(api, tok):
    assert write(api, tok, channel_preference("ACC-R3", 366))["needs_revalidation"] is True


def test_a_backdated_fact_from_the_system_of_record_is_confirmed_by_its_own_write(api, tok):
    # Given a system of record stating a fact effective 400 days ago
    memory = write(
        api,
        tok,
        contact_fact("ACC-R4", 400, source={"kind": "system_of_record", "system": "crm", "reference": "C-1"}),
        who="integration",
    )
    # Then its write is its confirmation: validated now, not due
    assert memory["needs_revalidation"] is False
    validated = datetime.fromisoformat(memory["last_validated_at"])
    assert abs(validated - datetime.now(UTC)) < timedelta(minutes=5)


def test_the_nightly_run_flags_what_ages_past_the_policy_once_with_an_audit_event(
    api, tok, container, monkeypatch, database_url
):
    # Given a fact stated today, and a preference stated today
    fact = write(api, tok, contact_fact("ACC-R5", 0))
    pref = write(api, tok, channel_preference("ACC-R5", 0))
    assert fact["needs_revalidation"] is False

    # When the nightly run happens 179 days later, nothing is due
    now = datetime.now(UTC)
    run_nightly(container, monkeypatch, now + 179 * DAY)
    assert api.get(f"/v1/memories/{fact['id']}", token=tok["agent"]).body["needs_revalidation"] is False

    # When it happens 181 days later, the fact is flagged (one event) and the preference is not
    report = run_nightly(container, monkeypatch, now + 181 * DAY)
    assert report.revalidation_flagged >= 1
    assert api.get(f"/v1/memories/{fact['id']}", token=tok["agent"]).body["needs_revalidation"] is True
    assert api.get(f"/v1/memories/{pref['id']}", token=tok["agent"]).body["needs_revalidation"] is False
    due = [e for e in events(database_url, fact["id"]) if e[0] == "memory_revalidation_due"]
    assert [(e[1], e[2], e[3]["revalidate_after_days"]) for e in due] == [
        ("revalidation_age_reached", "lifecycle", 180)
    ]

    # And a second run flags nothing again
    run_nightly(container, monkeypatch, now + 182 * DAY)
    assert len([e for e in events(database_url, fact["id"]) if e[0] == "memory_revalidation_due"]) == 1
    body = retrieve(api, tok, "ACC-R5")
    assert next(m for m in body["memories"] if m["id"] == fact["id"])["needs_revalidation"] is True


def test_a_dry_run_counts_what_is_due_and_flags_nothing(api, tok, container, monkeypatch):
    fact = write(api, tok, contact_fact("ACC-R6", 0))
    monkeypatch.setattr(container.lifecycle, "clock", lambda: datetime.now(UTC) + 200 * DAY)
    report = container.lifecycle.purge(tenants=[TENANT], dry_run=True)
    assert report.revalidation_flagged >= 1
    assert api.get(f"/v1/memories/{fact['id']}", token=tok["agent"]).body["needs_revalidation"] is False


def test_revalidating_confirms_now_clears_the_flag_and_restarts_the_age(
    api, tok, container, monkeypatch, database_url
):
    # Given a fact flagged as due
    memory = write(api, tok, contact_fact("ACC-R7", 300))
    assert memory["needs_revalidation"] is True

    # When the agent confirms it
    before = datetime.now(UTC)
    reply = api.post(f"/v1/memories/{memory['id']}/revalidate", token=tok["agent"])

    # Then 200 with the record: validated now, the flag cleared, the same id, version and content
    assert reply.status == 200, reply.body
    assert reply.body["id"] == memory["id"] and reply.body["version"] == memory["version"]
    assert reply.body["needs_revalidation"] is False and reply.body["content"] == memory["content"]
    validated = datetime.fromisoformat(reply.body["last_validated_at"])
    assert before <= validated <= datetime.now(UTC)
    assert reply.body["status"] == "active" and reply.body["effective_at"] == memory["effective_at"]

    # And reads and retrieval no longer mark it
    assert api.get(f"/v1/memories/{memory['id']}", token=tok["agent"]).body["needs_revalidation"] is False
    body = retrieve(api, tok, "ACC-R7")
    assert next(m for m in body["memories"] if m["id"] == memory["id"])["needs_revalidation"] is False
    assert "needs revalidation" not in context_line(body, memory["id"])

    # And the confirmation is audited, without content
    confirmed = [e for e in events(database_url, memory["id"]) if e[0] == "memory_revalidated"]
    assert [(e[1], e[2], e[3]["was_flagged"]) for e in confirmed] == [
        ("revalidated_by_caller", "agent-1", True)
    ]

    # And its age restarts from the confirmation: not due 179 days on, due 181 days on
    run_nightly(container, monkeypatch, validated + 179 * DAY)
    assert api.get(f"/v1/memories/{memory['id']}", token=tok["agent"]).body["needs_revalidation"] is False
    run_nightly(container, monkeypatch, validated + 181 * DAY)
    assert api.get(f"/v1/memories/{memory['id']}", token=tok["agent"]).body["needs_revalidation"] is True


def test_an_integration_may_revalidate_and_a_record_not_due_is_confirmed_too(api, tok):
    memory = write(api, tok, contact_fact("ACC-R8", 5))
    reply = api.post(f"/v1/memories/{memory['id']}/revalidate", {}, token=tok["integration"])
    assert reply.status == 200 and reply.body["last_validated_at"] is not None


@pytest.mark.parametrize("who", ["reviewer", "auditor", "admin"])
def test_other_roles_may_not_revalidate_and_nothing_changes(api, tok, who, database_url):
    memory = write(api, tok, contact_fact(f"ACC-R9-{who}", 250))
    reply = api.post(f"/v1/memories/{memory['id']}/revalidate", token=tok[who])
    assert reply.status == 403, reply.body
    after = api.get(f"/v1/memories/{memory['id']}", token=tok["agent"]).body
    assert after["needs_revalidation"] is True and after["last_validated_at"] is None
    assert "memory_revalidated" not in [e[0] for e in events(database_url, memory["id"])]


def test_an_unknown_memory_or_another_tenants_is_404(api, tok):
    assert api.post("/v1/memories/mem_not_there/revalidate", token=tok["agent"]).status == 404
    memory = write(api, tok, contact_fact("ACC-R10", 250))
    assert api.post(f"/v1/memories/{memory['id']}/revalidate", token=tok["other_tenant"]).status == 404


def test_a_memory_above_the_callers_clearance_answers_404_and_stays_flagged(api, tok, database_url):
    # Given a restricted fact, due for revalidation
    secret = write(api, tok, {**contact_fact("ACC-R11", 250), "sensitivity": "restricted"}, who="restricted")
    assert secret["needs_revalidation"] is True
    # When an internal-clearance agent tries to confirm it
    reply = api.post(f"/v1/memories/{secret['id']}/revalidate", token=tok["agent"])
    # Then it answers as if absent, and nothing changed
    assert reply.status == 404 and reply.body["error"]["code"] == "not_found"
    assert "Dana" not in str(reply.body)
    assert api.get(f"/v1/memories/{secret['id']}", token=tok["restricted"]).body["needs_revalidation"] is True
    assert "memory_revalidated" not in [e[0] for e in events(database_url, secret["id"])]
    # And a cleared caller may
    assert api.post(f"/v1/memories/{secret['id']}/revalidate", token=tok["restricted"]).status == 200


def test_a_superseded_version_is_not_revalidated(api, tok):
    old = write(api, tok, contact_fact("ACC-R12", 250))
    write(api, tok, {**contact_fact("ACC-R12", 0), "content": "Lee Park is now the primary contact."})
    reply = api.post(f"/v1/memories/{old['id']}/revalidate", token=tok["agent"])
    assert reply.status == 409, reply.body


def test_a_bad_memory_id_is_422_naming_it(api, tok):
    reply = api.post("/v1/memories/bad%20id!/revalidate", token=tok["agent"])
    assert reply.status == 422 and reply.body["error"]["field"] == "memory_id", reply.body


def test_a_slot_the_system_of_record_owns_is_not_aged(api, tok, container, monkeypatch):
    seats = write(
        api,
        tok,
        {
            "subject_id": "ACC-R13",
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.seats",
            "content": "The account has 40 seats.",
            "value": {"seats": 40},
            "source": {"kind": "system_of_record", "system": "crm", "reference": "ACC-R13"},
        },
        who="integration",
    )
    run_nightly(container, monkeypatch, datetime.now(UTC) + 400 * DAY)
    assert api.get(f"/v1/memories/{seats['id']}", token=tok["agent"]).body["needs_revalidation"] is False


def test_the_policy_sets_the_ages_within_bounds(api, tok, container, monkeypatch):
    # Given the tenant lowers the fact age to 30 days
    ok = api.put(
        "/v1/policy",
        {"profile": "crm", "overrides": {"revalidate_after_days": {"fact": 30}}},
        token=tok["admin"],
    )
    assert ok.status == 200, ok.body
    try:
        # Then a fact 40 days old is admitted due
        assert write(api, tok, contact_fact("ACC-R14", 40))["needs_revalidation"] is True
        # And out-of-range ages are refused naming the field, the policy unchanged
        for bad in (0, -5, 5000, "soon"):
            reply = api.put(
                "/v1/policy",
                {"profile": "crm", "overrides": {"revalidate_after_days": {"fact": bad}}},
                token=tok["admin"],
            )
            assert reply.status == 422, (bad, reply.body)
            assert reply.body["error"]["field"].startswith("overrides.revalidate_after_days"), reply.body
        shown = api.get("/v1/policy", token=tok["admin"]).body
        assert shown["effective"]["revalidate_after_days"]["fact"] == 30, shown
    finally:
        api.put("/v1/policy", {"profile": "crm", "overrides": {}}, token=tok["admin"])


def test_a_record_that_comes_due_between_nightly_runs_is_flagged_when_read(api, database_url):
    # Given a tenant of its own (its policy changes below), facts 20 days old under the 180-day age,
    # one of them confirmed today, and then the tenant's fact age lowered to 10 days (no nightly run)
    t = "reval-read"
    tok = {"agent": api.token(t, "agent-1", ["agent"]), "admin": api.token(t, "adm-1", ["admin"])}
    read, confirmed, retrieved, listed = (
        write(api, tok, contact_fact(subject, 20)) for subject in ("ACC-RR1", "ACC-RR2", "ACC-RR3", "ACC-RR4")
    )
    assert api.post(f"/v1/memories/{confirmed['id']}/revalidate", {}, token=tok["agent"]).status == 200
    lowered = api.put(
        "/v1/policy",
        {"profile": "crm", "overrides": {"revalidate_after_days": {"fact": 10}}},
        token=tok["admin"],
    )
    assert lowered.status == 200, lowered.body

    # When each is read: one by id, one in a retrieval, one in the subject's list
    by_id = api.get(f"/v1/memories/{read['id']}", token=tok["agent"]).body
    body = retrieve(api, {"agent": tok["agent"]}, "ACC-RR3")
    in_list = api.get("/v1/subjects/ACC-RR4/memories", token=tok["agent"]).body["memories"]

    # Then each read shows it due at once, as the nightly run would have flagged it
    assert by_id["needs_revalidation"] is True
    shown = next(m for m in body["memories"] if m["id"] == retrieved["id"])
    assert shown["needs_revalidation"] is True
    assert "needs revalidation" in context_line(body, retrieved["id"])
    assert [m["needs_revalidation"] for m in in_list if m["id"] == listed["id"]] == [True]
    # And it is flagged in the store, audited once as the nightly run audits it
    for memory in (read, retrieved, listed):
        due = [e for e in events(database_url, memory["id"]) if e[0] == "memory_revalidation_due"]
        assert [(e[1], e[2], e[3]["revalidate_after_days"]) for e in due] == [
            ("revalidation_age_reached", "lifecycle", 10)
        ]
    retrieve(api, {"agent": tok["agent"]}, "ACC-RR3")
    assert len([e for e in events(database_url, retrieved["id"]) if e[0] == "memory_revalidation_due"]) == 1
    # But a record confirmed since is not due: its age restarted at the confirmation
    assert api.get(f"/v1/memories/{confirmed['id']}", token=tok["agent"]).body["needs_revalidation"] is False
