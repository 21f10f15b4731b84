"""Dates bounded from admission through the HTTP API and the extraction worker (INV-MEM-02:
sentiment and notes carry `expires_at <= now() + 180 days`, counted from when the memory is admitted
whatever `effective_at` says; no memory of any type is dated more than a day ahead)."""

from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytestmark = pytest.mark.e2e

TENANT = "dates"
DAY = timedelta(days=1)

BODIES = {
    "fact": {
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "content": "Dana Reyes is the primary contact.",
    },
    "preference": {
        "type": "preference",
        "slot": "preference.contact_channel",
        "content": "Prefers to be contacted by email.",
    },
    "episode": {"type": "episode", "content": "Walked through the renewal with the customer."},
    "resolution": {
        "type": "resolution",
        "content": "Clearing the SSO cache fixed the login loop.",
        "value": {"outcome_confirmed": True},
    },
    "observation": {"type": "observation", "content": "The customer seems price sensitive."},
    "sentiment": {"type": "sentiment", "content": "Might expand to the EMEA team next winter."},
    "commitment": {
        "type": "commitment",
        "content": "I will send the revised quote by Friday.",
        "value": {"owner": "agent-1"},
    },
}


@pytest.fixture(scope="module")
def tok(api):
    return {"agent": api.token(TENANT, "agent-1", ["agent"])}


def iso(at: datetime) -> str:
    return at.isoformat().replace("+00:00", "Z")


def body(memory_type: str, subject: str, **extra):
    return {
        "subject_id": subject,
        "source": {"kind": "customer_confirmed"},
        **BODIES[memory_type],
        **extra,
    }


def stored(database_url, subject):
    """Rows and audit events about a subject, read past row-level security."""
    with psycopg.connect(database_url) as c:
        rows = c.execute("SELECT count(*) FROM memory_records WHERE subject_id = %s", (subject,)).fetchone()
        evs = c.execute("SELECT count(*) FROM memory_events WHERE subject_id = %s", (subject,)).fetchone()
    return rows[0], evs[0]


@pytest.mark.parametrize("memory_type", sorted(BODIES))
def test_any_type_dated_more_than_a_day_ahead_is_422_naming_effective_at_and_nothing_written(
    api, tok, database_url, memory_type
):
    # Given a memory of any type dated two days ahead
    subject = f"ACC-D-{memory_type}"
    ahead = iso(datetime.now(UTC) + 2 * DAY)
    # When it is written
    reply = api.post("/v1/memories", body(memory_type, subject, effective_at=ahead), token=tok["agent"])
    # Then 422 names the field, and neither a record nor an event was written
    assert reply.status == 422, reply.body
    assert reply.body["error"]["field"] == "effective_at", reply.body
    assert stored(database_url, subject) == (0, 0)


def test_a_sentiment_dated_2028_is_refused_not_kept_until_2028(api, tok, database_url):
    reply = api.post(
        "/v1/memories",
        body("sentiment", "ACC-D-2028", effective_at="2028-03-01T00:00:00Z"),
        token=tok["agent"],
    )
    assert reply.status == 422 and reply.body["error"]["field"] == "effective_at", reply.body
    assert stored(database_url, "ACC-D-2028") == (0, 0)


def test_a_date_a_few_hours_ahead_is_a_clock_difference_and_accepted(api, tok):
    ahead = datetime.now(UTC) + timedelta(hours=6)
    reply = api.post(
        "/v1/memories", body("episode", "ACC-D-soon", effective_at=iso(ahead)), token=tok["agent"]
    )
    assert reply.status == 201 and reply.body["decision"] == "admitted", reply.body


def test_a_sentiment_is_bounded_from_admission_whatever_its_dates_ask(api, tok):
    # Given a sentiment dated a few hours ahead
    before = datetime.now(UTC)
    future = iso(before + timedelta(hours=20))
    # When it asks to be kept for two years, Then it is refused naming expires_at (a write only
    # shortens its type's retention), and nothing is stored
    refused = api.post(
        "/v1/memories",
        body("sentiment", "ACC-D-bound", effective_at=future, expires_at=iso(before + 730 * DAY)),
        token=tok["agent"],
    )
    assert refused.status == 422 and refused.body["error"]["field"] == "expires_at", refused.body
    listed = api.get("/v1/subjects/ACC-D-bound/memories", token=tok["agent"])
    assert listed.status in (200, 404) and not (listed.body.get("items") or listed.body.get("memories"))
    # When it asks for nothing, Then it expires at most 180 days after it was admitted
    reply = api.post(
        "/v1/memories", body("sentiment", "ACC-D-bound", effective_at=future), token=tok["agent"]
    )
    after = datetime.now(UTC)
    assert reply.status == 201, reply.body
    memory = reply.body["memory"]
    expires = datetime.fromisoformat(memory["expires_at"])
    created = datetime.fromisoformat(memory["created_at"])
    assert before <= created <= after
    assert expires <= created + 180 * DAY
    assert expires >= before + 180 * DAY - timedelta(minutes=5)  # the bound, not something shorter


def test_a_backdated_sentiment_expires_180_days_after_its_date(api, tok):
    effective = datetime.now(UTC) - 100 * DAY
    reply = api.post(
        "/v1/memories", body("sentiment", "ACC-D-old", effective_at=iso(effective)), token=tok["agent"]
    )
    assert reply.status == 201, reply.body
    assert datetime.fromisoformat(reply.body["memory"]["expires_at"]) == effective + 180 * DAY


def test_a_session_dated_ahead_is_refused_at_close_and_stores_nothing(api, tok, local_aws, database_url):
    # Given a session closed with a date three days ahead
    subject = "ACC-D-session"
    closed = api.post(
        "/v1/sessions/sess-dates-ahead/close",
        {
            "subject_id": subject,
            "channel": "chat",
            "occurred_at": iso(datetime.now(UTC) + 3 * DAY),
            "turns": [
                {"speaker": "customer", "text": "I prefer email communication."},
                {"speaker": "customer", "text": "We might look at expanding next winter."},
            ],
        },
        token=tok["agent"],
    )
    # Then it is refused at once, naming the field (every memory drawn from it would be refused)
    assert closed.status == 422 and closed.body["error"]["field"] == "occurred_at", closed.body
    # And nothing was stored or queued for it
    assert api.get("/v1/sessions/sess-dates-ahead", token=tok["agent"]).status == 404
    with psycopg.connect(database_url) as c:
        rows = c.execute("SELECT count(*) FROM memory_records WHERE subject_id = %s", (subject,)).fetchone()
        sessions = c.execute("SELECT count(*) FROM sessions WHERE subject_id = %s", (subject,)).fetchone()
    assert rows[0] == 0 and sessions[0] == 0
