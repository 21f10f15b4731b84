"""Tokens bound to subjects, enforced by row-level security (migration 0019), checked directly in
SQL as the application role: what a bound transaction can see and write, beside the tenant."""

from datetime import UTC, datetime

import psycopg
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.request_scope import acting_as

pytestmark = pytest.mark.integration


def agent(tenant: str, subjects: frozenset[str] | None = None) -> Principal:
    return Principal(
        sub=f"agent@{tenant}", tenant_id=tenant, roles=frozenset({Role.AGENT}), subjects=subjects
    )


def remember(container, tenant: str, subject: str, content: str):
    return container.gateway.write(
        agent(tenant),
        MemoryWrite(
            subject_id=subject, type="episode", content=content, source={"kind": "customer_confirmed"}
        ),
    ).memory


@pytest.fixture(scope="module")
def seeded(container):
    """Subjects B-1 and B-2 in tenant bind-a, and B-1 in tenant bind-b (the same id)."""
    return {
        ("bind-a", "B-1"): remember(container, "bind-a", "B-1", "Bind A one asked about invoice exports"),
        ("bind-a", "B-2"): remember(container, "bind-a", "B-2", "Bind A two asked about invoice exports"),
        ("bind-b", "B-1"): remember(container, "bind-b", "B-1", "Bind B one asked about invoice exports"),
    }


SUBJECT_TABLES = ["memory_records", "memory_sentences", "memory_events", "retrieval_log", "sessions"]


def test_given_a_binding_when_a_query_names_no_subject_then_only_the_bound_subjects_rows_are_seen(
    container, seeded
):
    # Given a transaction of tenant bind-a bound to B-1
    with container.db.tenant_transaction("bind-a", subjects=["B-1"]) as conn:
        # When every subject-bearing table is read with no WHERE at all
        seen = {
            t: {r["subject_id"] for r in conn.execute(f"SELECT subject_id FROM {t}").fetchall()}
            for t in SUBJECT_TABLES
        }
        tenants = {r["tenant_id"] for r in conn.execute("SELECT tenant_id FROM memory_records").fetchall()}
    # Then only B-1's rows of tenant bind-a (never B-2's, never tenant bind-b's B-1)
    assert seen["memory_records"] == {"B-1"} and tenants == {"bind-a"}
    assert all(subjects <= {"B-1"} for subjects in seen.values())
    # And the same transaction unbound sees both subjects
    with container.db.tenant_transaction("bind-a", subjects=None) as conn:
        both = {r["subject_id"] for r in conn.execute("SELECT subject_id FROM memory_records").fetchall()}
    assert both == {"B-1", "B-2"}


def test_given_a_binding_to_another_tenants_subject_then_the_tenant_still_bounds_it(container, seeded):
    # Given tenant bind-b, bound to B-2 (which only tenant bind-a holds)
    with container.db.tenant_transaction("bind-b", subjects=["B-2"]) as conn:
        rows = conn.execute("SELECT id FROM memory_records").fetchall()
    # Then nothing: the binding narrows the tenant, it never reaches another one
    assert rows == []


def test_given_a_binding_when_a_row_of_another_subject_is_written_then_rls_refuses_it(container, seeded):
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="row-level security"),
        container.db.tenant_transaction("bind-a", subjects=["B-1"]) as conn,
    ):
        conn.execute(
            "INSERT INTO tombstones (tenant_id, subject_id, content_hash) VALUES ('bind-a', 'B-2', 'h')"
        )


def test_given_a_binding_when_a_row_is_moved_to_another_subject_then_rls_refuses_it(container, seeded):
    own = seeded[("bind-a", "B-1")]
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        container.db.tenant_transaction("bind-a", subjects=["B-1"]) as conn,
    ):
        conn.execute("UPDATE memory_records SET subject_id = 'B-2' WHERE id = %s", (own.id,))


def test_given_a_binding_when_another_subjects_rows_are_updated_or_deleted_then_none_is_touched(
    container, seeded
):
    other = seeded[("bind-a", "B-2")]
    with container.db.tenant_transaction("bind-a", subjects=["B-1"]) as conn:
        updated = conn.execute(
            "UPDATE memory_records SET importance = 0.1 WHERE id = %s", (other.id,)
        ).rowcount
        deleted = conn.execute("DELETE FROM memory_sentences WHERE memory_id = %s", (other.id,)).rowcount
    assert (updated, deleted) == (0, 0)


def test_given_a_bound_transaction_when_the_read_path_function_runs_then_the_binding_applies_to_it(
    container, seeded
):
    # Given the read path's function (it sets the tenant itself only when none is in force)
    call = (
        "SELECT id FROM memory_retrieval_scoped_rows("
        "'bind-a', %s, NULL, 'invoice exports', '{}', now(), 9, NULL, 50, NULL)"
    )
    # When it runs inside a transaction bound to B-1, for B-2 and for B-1
    with container.db.tenant_transaction("bind-a", subjects=["B-1"]) as conn:
        other = conn.execute(call, ("B-2",)).fetchall()
        own = conn.execute(call, ("B-1",)).fetchall()
    # Then B-2 has nothing (as an unknown subject), B-1 its memory
    assert other == [] and [r["id"] for r in own] == [seeded[("bind-a", "B-1")].id]


def test_given_a_bound_request_when_the_reader_runs_then_another_subject_answers_as_an_unknown_one(
    container, seeded
):
    query = dict(
        query_embedding=None,
        query_text="invoice exports",
        types=None,
        max_sensitivity_rank=9,
        now=datetime.now(UTC),
        per_signal=50,
    )
    # Given a request whose token is bound to B-1 (the reader takes the binding from the request)
    with acting_as(agent("bind-a", frozenset({"B-1"}))), container.store.reader("bind-a") as reader:
        other = reader.retrieval_candidates(subject_id="B-2", **query)
        unknown = reader.retrieval_candidates(subject_id="B-404", **query)
        own = reader.retrieval_candidates(subject_id="B-1", **query)
    assert other == unknown == [] and [r.facts.id for r in own] == [seeded[("bind-a", "B-1")].id]
    # And without a request (a worker), the same reader is unrestricted
    with container.store.reader("bind-a") as reader:
        assert [r.facts.id for r in reader.retrieval_candidates(subject_id="B-2", **query)] == [
            seeded[("bind-a", "B-2")].id
        ]


def test_given_a_bound_transaction_when_the_next_one_on_the_connection_runs_then_no_binding_is_left(
    container, seeded
):
    # Given a pool of one connection, so the second transaction reuses the first one's connection
    from agent_memory.adapters.postgres.database import Database

    db = Database(container.settings.database_url, min_size=1, max_size=1)
    db.open()
    try:
        with db.tenant_transaction("bind-a", subjects=["B-1"]) as conn:
            first = conn.execute("SELECT current_setting('app.subjects', true) AS s").fetchone()["s"]
        with db.tenant_transaction("bind-a", subjects=None) as conn:
            second = conn.execute("SELECT current_setting('app.subjects', true) AS s").fetchone()["s"]
            n = conn.execute("SELECT count(DISTINCT subject_id) AS n FROM memory_records").fetchone()["n"]
        with db.transaction() as conn:
            third = conn.execute("SELECT current_setting('app.subjects', true) AS s").fetchone()["s"]
    finally:
        db.close()
    assert first == "{B-1}" and second == "" and not third and n == 2


def test_an_empty_binding_is_refused_rather_than_read_as_unbound(container):
    with (
        pytest.raises(ValueError, match="at least one subject"),
        container.db.tenant_transaction("bind-a", subjects=[]),
    ):
        pass


def test_every_table_with_a_subject_column_carries_the_subject_binding(container):
    # A table added later with a subject_id column and no binding policy would be readable across
    # subjects by a bound token: this lists what is missing.
    with psycopg.connect(container.settings.database_url) as conn:
        rows = conn.execute(
            """SELECT c.table_name,
                      bool_or(p.policyname = 'subject_binding_read') AS bound
                 FROM information_schema.columns c
                 JOIN pg_tables t ON t.tablename = c.table_name AND t.schemaname = 'public'
                 LEFT JOIN pg_policies p ON p.tablename = c.table_name AND p.schemaname = 'public'
                WHERE c.table_schema = 'public' AND c.column_name = 'subject_id'
                GROUP BY c.table_name"""
        ).fetchall()
    assert rows and [name for name, bound in rows if not bound] == []


def test_given_a_bound_request_then_the_http_system_of_record_is_not_asked_about_another_subject():
    from pytest_httpserver import HTTPServer

    from agent_memory.adapters.sor.http import HttpSystemOfRecord

    # Given a system of record that knows subject B-2's account and ticket
    srv = HTTPServer(host="127.0.0.1", port=0)
    srv.expect_request("/tenants/bind-a/accounts/B-2").respond_with_json(
        {"fields": {"plan_tier": {"value": "premium", "as_of": "2026-10-01T00:00:00Z"}}}
    )
    srv.expect_request("/tenants/bind-a/tickets/T-9").respond_with_json(
        {"ticket_id": "T-9", "subject_id": "B-2", "status": "open", "updated_at": "2026-10-01T00:00:00Z"}
    )
    srv.start()
    try:
        sor = HttpSystemOfRecord(srv.url_for(""), cache_seconds=0)
        # When a request bound to B-1 asks about B-2
        with acting_as(agent("bind-a", frozenset({"B-1"}))):
            values = sor.account_values("bind-a", "B-2")
            ticket = sor.ticket("bind-a", "B-2", "T-9")
        asked = len(srv.log)
        # Then it answers as for an unknown subject, without asking
        assert (values, ticket, asked) == ({}, None, 0)
        # And without a binding the same calls are asked and answered
        unbound_ticket = sor.ticket("bind-a", "B-2", "T-9")
        assert unbound_ticket is not None and len(srv.log) == 1
    finally:
        srv.clear()
        srv.stop()
