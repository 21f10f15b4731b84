"""The read path's SQL functions have one definition, sql/retrieval_functions.sql: every migrate
applies it again after the numbered migrations, and the functions it replaced are gone (on the
real embedded PostgreSQL)."""

import psycopg
import pytest

from agent_memory.adapters.postgres import database
from agent_memory.adapters.postgres.retrieval import CANDIDATES_FUNCTION, candidates_query

pytestmark = pytest.mark.integration

MIGRATE = dict(embedding_dim=384, embedding_model="local-minilm-onnx")


@pytest.fixture(scope="module")
def migrated(database_url: str) -> str:
    database.migrate(database_url, **MIGRATE)
    return database_url


def test_given_a_migrated_database_then_the_candidates_function_runs_the_files_query(migrated):
    # Given a database every numbered migration and the repeatable file were applied to
    with psycopg.connect(migrated) as conn:
        # When the candidates function's source is read back
        (source,) = conn.execute(
            "SELECT prosrc FROM pg_proc WHERE oid = %s::regproc", (CANDIDATES_FUNCTION,)
        ).fetchone()
    # Then it holds the query exactly as the file states it
    query = candidates_query()
    assert "FROM memory_records r" in query and query in source


def test_given_a_migrated_database_then_the_superseded_retrieval_functions_are_gone(migrated):
    with psycopg.connect(migrated) as conn:
        found = {
            name: conn.execute("SELECT to_regproc(%s) IS NOT NULL", (name,)).fetchone()[0]
            for name in (
                "memory_retrieval_candidates",
                "memory_retrieval_rows",
                "memory_retrieval_scoped_rows",
                "memory_log_retrieval",
                "memory_enter_tenant",
            )
        }
    assert found == {
        "memory_retrieval_candidates": False,
        "memory_retrieval_rows": False,
        "memory_retrieval_scoped_rows": True,
        "memory_log_retrieval": True,
        "memory_enter_tenant": True,
    }


def test_given_a_function_changed_by_hand_when_migrate_runs_again_then_the_files_definition_is_back(
    migrated,
):
    log = "SELECT memory_log_retrieval('tenant-f', %s, 'S-1', 'agent-f', '{}', '{}')"
    written = "SELECT count(*) FROM retrieval_log WHERE tenant_id = 'tenant-f' AND id = %s"
    # Given the access-event function replaced by one that writes nothing
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute(
            "CREATE OR REPLACE FUNCTION memory_log_retrieval(p_tenant text, p_id text, p_subject text,"
            " p_actor text, p_memory_ids text[], p_payload jsonb) RETURNS void LANGUAGE sql AS $$ SELECT $$"
        )
        conn.execute(log, ("acc_tampered",))
    # When migrate runs again, with no numbered migration left to apply
    applied = database.migrate(migrated, **MIGRATE)
    # Then the file's definition is back: the access event is written again
    with psycopg.connect(migrated, autocommit=True) as conn:
        conn.execute(log, ("acc_restored",))
        with conn.transaction():
            conn.execute("SELECT set_config('app.tenant_id', 'tenant-f', true)")
            counts = [conn.execute(written, (i,)).fetchone()[0] for i in ("acc_tampered", "acc_restored")]
    assert applied == [] and counts == [0, 1]
