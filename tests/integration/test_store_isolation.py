"""Row-level security and the storage invariants, on the real embedded PostgreSQL."""

import psycopg
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal

pytestmark = pytest.mark.integration


def agent(tenant: str) -> Principal:
    return Principal(sub=f"agent@{tenant}", tenant_id=tenant, roles=frozenset({Role.AGENT}))


def remember(container, tenant: str, subject: str, content: str):
    return container.gateway.write(
        agent(tenant),
        MemoryWrite(
            subject_id=subject, type="episode", content=content, source={"kind": "customer_confirmed"}
        ),
    )


def test_given_two_tenants_when_a_query_forgets_its_tenant_filter_then_it_still_sees_only_its_tenant(
    container,
):
    remember(container, "tenant-a", "S-1", "Tenant A migrated to the new billing portal")
    remember(container, "tenant-b", "S-1", "Tenant B asked about invoice exports")
    with container.db.tenant_transaction("tenant-a") as conn:
        rows = conn.execute("SELECT tenant_id, content FROM memory_records").fetchall()  # no WHERE on purpose
        events = conn.execute("SELECT DISTINCT tenant_id FROM memory_events").fetchall()
    assert {r["tenant_id"] for r in rows} == {"tenant-a"}
    assert {r["tenant_id"] for r in events} == {"tenant-a"}


def test_given_the_candidates_function_when_called_with_another_tenant_then_it_refuses(container):
    # Given subject S-1 in both tenants (the retrieval query runs inside a function that takes the
    # tenant as an argument)
    remember(container, "tenant-a", "S-1", "Tenant A migrated to the new billing portal")
    remember(container, "tenant-b", "S-1", "Tenant B asked about invoice exports")
    call = (
        "SELECT id FROM memory_retrieval_scoped_rows("
        "%s, 'S-1', NULL, 'billing portal invoice exports', '{}', now(), 9, NULL, 50, NULL)"
    )
    with container.db.tenant_transaction("tenant-a") as conn:
        own = conn.execute(call, ("tenant-a",)).fetchall()
    # When a caller passes another tenant than its transaction's
    # Then the function, which can set the tenant itself, refuses the call outright
    with (
        container.db.tenant_transaction("tenant-a") as conn,
        pytest.raises(psycopg.errors.InsufficientPrivilege, match="scoped to another tenant"),
    ):
        conn.execute(call, ("tenant-b",))
    assert len(own) >= 1


def test_given_a_transaction_without_tenant_when_a_read_path_call_runs_then_it_leaves_no_tenant_behind(
    container,
):
    # Given a transaction with no tenant in force
    remember(container, "tenant-a", "S-1", "Tenant A migrated to the new billing portal")
    with container.db.transaction() as conn:
        # When the read path's two functions run in it for tenant A
        rows = conn.execute(
            "SELECT id FROM memory_retrieval_scoped_rows('tenant-a', 'S-1', NULL, 'billing portal', '{}',"
            " now(), 9, NULL, 50, NULL)"
        ).fetchall()
        conn.execute("SELECT memory_log_retrieval('tenant-a', 'acc_left', 'S-1', 'a-left', '{}', '{}')")
        # Then they found tenant A's rows, and the rest of the transaction sees no tenant at all
        left = conn.execute("SELECT current_setting('app.tenant_id', true) AS t").fetchone()["t"]
        visible = conn.execute("SELECT count(*) AS n FROM memory_records").fetchone()["n"]
    assert rows and not left and visible == 0


def test_given_a_caller_that_opened_a_transaction_when_the_reader_returns_its_connection_then_it_is_reset(
    container,
):
    # Given the read path's autocommit connection, on which a caller opened a transaction by hand
    with container.db.statements() as conn:
        conn.execute("BEGIN")
        conn.execute("SELECT 1")
        held = conn
    # Then the pool gets it back idle and out of autocommit (or closed, to be replaced)
    assert held.closed or (not held.autocommit and held.info.transaction_status.name == "IDLE")


def test_given_no_transaction_when_the_read_path_calls_run_then_each_is_scoped_to_its_tenant_alone(
    container,
):
    from datetime import UTC, datetime

    # Given subject S-1 in both tenants, and the read path's autocommit connection (no tenant set)
    remember(container, "tenant-a", "S-1", "Tenant A migrated to the new billing portal")
    b = remember(container, "tenant-b", "S-1", "Tenant B asked about invoice exports").memory
    query = dict(
        subject_id="S-1",
        query_embedding=None,
        query_text="billing portal invoice exports",
        types=None,
        max_sensitivity_rank=9,
        now=datetime.now(UTC),
        per_signal=50,
    )
    with container.store.reader("tenant-a") as reader:
        # When tenant A's candidates are read and its access event written
        rows = reader.retrieval_candidates(**query)
        reader.log_retrieval(subject_id="S-1", actor="a", memory_ids=[r.facts.id for r in rows], payload={})
        # Then they are tenant A's only, and no tenant setting outlives the statements
        left = reader.conn.execute("SELECT current_setting('app.tenant_id', true) AS t").fetchone()["t"]
        unscoped = reader.conn.execute("SELECT count(*) AS n FROM memory_records").fetchone()["n"]
    assert rows and b.id not in {r.facts.id for r in rows}
    assert all(r.content.startswith("Tenant A") for r in rows)
    assert not left and unscoped == 0
    with container.db.tenant_transaction("tenant-a") as conn:
        logged = conn.execute("SELECT tenant_id, actor FROM retrieval_log WHERE actor = 'a'").fetchall()
    assert logged == [{"tenant_id": "tenant-a", "actor": "a"}]


def test_given_a_tenant_transaction_when_the_access_event_names_another_tenant_then_rls_refuses_it(container):
    # Given a transaction scoped to tenant A; When the access-event function is called for tenant B
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        container.db.tenant_transaction("tenant-a") as conn,
    ):
        conn.execute("SELECT memory_log_retrieval('tenant-b', 'acc_x', 'S-1', 'a', '{}', '{}')")
    # Then row-level security refuses the row (the transaction's tenant stands)


def test_given_no_tenant_context_when_querying_then_nothing_is_visible(container):
    remember(container, "tenant-c", "S-2", "Tenant C renewed early")
    with container.db.transaction() as conn:
        assert conn.execute("SELECT count(*) AS n FROM memory_records").fetchone()["n"] == 0


def test_given_the_app_connection_then_it_runs_as_a_role_that_owns_nothing(container):
    with container.db.transaction() as conn:
        row = conn.execute(
            "SELECT current_user AS who, (SELECT tableowner FROM pg_tables WHERE tablename = 'memory_records') AS owner,"
            " (SELECT rolbypassrls FROM pg_roles WHERE rolname = current_user) AS bypass"
        ).fetchone()
    assert row["who"] == "memory_app" and row["owner"] != "memory_app" and row["bypass"] is False


def test_given_a_row_of_another_tenant_when_inserting_then_rls_refuses_it(container):
    with (
        pytest.raises(psycopg.errors.InsufficientPrivilege),
        container.db.tenant_transaction("tenant-a") as conn,
    ):
        conn.execute(
            "INSERT INTO tombstones (tenant_id, subject_id, content_hash) VALUES ('tenant-b', 'S', 'h')"
        )


def test_given_an_active_slot_when_a_second_active_row_is_forced_in_then_the_index_refuses(container):
    w = MemoryWrite(
        subject_id="S-9",
        type="preference",
        slot="preference.contact_channel",
        content="Prefers email",
        source={"kind": "customer_confirmed"},
    )
    result = container.gateway.write(agent("tenant-a"), w)
    with pytest.raises(psycopg.errors.UniqueViolation), container.db.tenant_transaction("tenant-a") as conn:
        conn.execute(
            """INSERT INTO memory_records (id, tenant_id, subject_id, scope, type, category, slot, content, source,
                       actor, authority, authority_rank, confidence, sensitivity, sensitivity_rank, status, created_at,
                       effective_at, content_hash)
                   SELECT 'mem_forged', tenant_id, subject_id, scope, type, category, slot, 'Prefers phone', source,
                       actor, authority, authority_rank, confidence, sensitivity, sensitivity_rank, 'active', created_at,
                       effective_at, 'other' FROM memory_records WHERE id = %s""",
            (result.memory.id,),
        )


def test_given_the_audit_log_when_the_app_tries_to_edit_a_row_then_it_is_refused(container):
    remember(container, "tenant-a", "S-3", "Tenant A asked for a QBR deck")
    with pytest.raises(psycopg.errors.Error), container.db.tenant_transaction("tenant-a") as conn:
        conn.execute("UPDATE memory_events SET reason = 'edited'")


def test_given_a_stored_dimension_when_the_setting_differs_then_start_fails_clearly(container):
    from agent_memory.adapters.postgres.database import migrate
    from agent_memory.domain.errors import ConfigurationError

    with pytest.raises(ConfigurationError, match="dimension mismatch"):
        migrate(
            container.settings.database_url,
            embedding_dim=1536,
            embedding_model="openai:text-embedding-3-small",
        )


def test_given_a_migrated_database_when_migrating_again_then_nothing_changes(container):
    from agent_memory.adapters.postgres.database import migrate

    # a restart (make serve twice, a second deploy) runs migrate on an up-to-date database
    assert (
        migrate(container.settings.database_url, embedding_dim=384, embedding_model="local-minilm-onnx") == []
    )
    assert (
        migrate(container.settings.database_url, embedding_dim=384, embedding_model="local-minilm-onnx") == []
    )
    with container.db.transaction() as conn:
        indexes = {r["indexname"] for r in conn.execute("SELECT indexname FROM pg_indexes").fetchall()}
    assert "memory_records_tenant_hnsw" in indexes and "memory_records_embedding_hnsw" not in indexes


@pytest.mark.parametrize("reuse_plans", [False, True])
def test_given_a_pooled_connection_whose_backend_died_when_handed_out_then_the_pool_replaces_it(
    container, database_url, reuse_plans
):
    import time

    from agent_memory.adapters.postgres.database import Database

    db = Database(database_url, min_size=1, max_size=1)
    db.open()
    try:
        with db.tenant_transaction("tenant-a", reuse_plans=reuse_plans) as conn:
            first = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        # a restart or failover, for one backend
        with psycopg.connect(database_url, autocommit=True) as owner:
            owner.execute("SELECT pg_terminate_backend(%s)", (first,))
            deadline = time.monotonic() + 10
            while owner.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", (first,)).fetchone():
                assert time.monotonic() < deadline, "the backend did not exit"
                time.sleep(0.02)  # gone: its goodbye is on the idle socket
        with db.tenant_transaction("tenant-a", reuse_plans=reuse_plans) as conn:
            second = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]
        assert second != first
    finally:
        db.close()


def test_given_the_pipelined_read_transaction_when_a_write_in_it_fails_then_nothing_of_it_commits(container):
    # Given the read path's transaction (pipeline mode: a write's error arrives late, at the latest at COMMIT)
    from agent_memory.ports.store import RetryableConflict

    logged: list[str] = []
    with (
        pytest.raises((psycopg.errors.UniqueViolation, RetryableConflict)),
        container.store.tenant("tenant-pipe", reuse_plans=True) as session,
    ):
        # When an access event is logged and then a second write fails
        log_id = session.log_retrieval(subject_id="S-P", actor="a", memory_ids=["m1"], payload={})
        logged.append(log_id)
        session.conn.execute(
            "INSERT INTO retrieval_log (tenant_id, id, subject_id, actor, memory_ids, payload)"
            " VALUES ('tenant-pipe', %s, 'S-P', 'a', '{}', '{}')",
            (log_id,),
        )
    # Then the error is raised to the caller and the first write was rolled back with it
    with container.db.tenant_transaction("tenant-pipe") as conn:
        assert (
            conn.execute("SELECT count(*) AS n FROM retrieval_log WHERE id = %s", logged).fetchone()["n"] == 0
        )
    # And the pool's connection is usable again
    with container.store.tenant("tenant-pipe", reuse_plans=True) as session:
        session.log_retrieval(subject_id="S-P", actor="a", memory_ids=[], payload={})


def test_given_the_application_role_logs_in_itself_then_no_session_role_is_set_and_rls_still_holds(
    container, database_url
):
    """As in AWS: the functions log in as memory_app (their own secret), so a pooled connection
    carries no SET ROLE (which would pin it to one backend behind RDS Proxy)."""
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from agent_memory.adapters.postgres.database import Database, grant_app_login

    remember(container, "tenant-login-a", "S-9", "Tenant A asked for the audit report")
    remember(container, "tenant-login-b", "S-9", "Tenant B asked for the SOC 2 letter")
    grant_app_login(database_url, "local-test-password")
    params = conninfo_to_dict(database_url)
    params.update(user="memory_app", password="local-test-password")
    db = Database(make_conninfo(**params), min_size=1, max_size=1)
    db.open()
    try:
        with db.tenant_transaction("tenant-login-a") as conn:
            who = conn.execute(
                "SELECT session_user AS s, current_user AS c, current_setting('role') AS r,"
                " (SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user) AS privileged"
            ).fetchone()
            tenants = {
                r["tenant_id"] for r in conn.execute("SELECT tenant_id FROM memory_records").fetchall()
            }
    finally:
        db.close()
    assert (who["s"], who["c"], who["r"], who["privileged"]) == ("memory_app", "memory_app", "none", False)
    assert tenants == {"tenant-login-a"}
