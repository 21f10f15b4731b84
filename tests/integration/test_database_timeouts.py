"""The server's own timeouts bound every statement the service runs: in a tenant transaction, on the
read path's autocommit calls, and for a login as the application role (AWS); an API request runs
with the shorter request timeouts, background work with the longer ones."""

from __future__ import annotations

import contextvars
from typing import Any

import pytest

from agent_memory.request_scope import begin_request

pytestmark = pytest.mark.integration


def _timeouts(conn: Any) -> tuple[str, str]:
    row = conn.execute(
        "SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l"
    ).fetchone()
    return row["s"], row["l"]


def _in_a_request(fn: Any) -> Any:
    """Run `fn` as an API request does: in its own context, after `begin_request`."""

    def run() -> Any:
        begin_request()
        return fn()

    return contextvars.copy_context().run(run)


def test_the_read_path_outside_a_transaction_runs_under_the_servers_statement_timeout(container: Any) -> None:
    # Given the service's pool (statement timeout 10 s, lock timeout 5 s by default)
    # When a statement runs the way the read path runs its functions: autocommit, no tenant transaction
    with container.db.statements() as conn:
        seen = _timeouts(conn)
    # Then the server itself would cancel it, not only the client give up on it
    assert seen == ("10s", "5s")


def test_an_api_request_runs_its_transactions_under_the_shorter_request_timeouts(container: Any) -> None:
    # Given a tenant transaction opened by background work, and one opened inside an API request
    def opened() -> tuple[str, str]:
        with container.db.tenant_transaction("tenant-timeouts", subjects=None) as conn:
            return _timeouts(conn)

    background, request = opened(), _in_a_request(opened)
    # Then the request's statements are cancelled by the server after 2 s, the job's after 10 s
    assert background == ("10s", "5s")
    assert request == ("2s", "2s")


def test_a_login_as_the_application_role_starts_with_the_server_side_timeouts(
    container: Any, database_url: str
) -> None:
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    from agent_memory.adapters.postgres.database import Database, grant_app_login

    # Given the application role granted its login as the AWS deployment grants it
    grant_app_login(database_url, "local-test-password", statement_timeout_s=7, lock_timeout_s=3)
    params = conninfo_to_dict(database_url)
    params.update(user="memory_app", password="local-test-password")
    db = Database(make_conninfo(**params), min_size=1, max_size=1)
    db.open()
    try:
        # When it runs a statement outside any transaction (no SET of its own: nothing to pin)
        with db.statements() as conn:
            seen = _timeouts(conn)
            session_set = conn.execute(
                "SELECT count(*) AS n FROM pg_settings WHERE source = 'session'"
                " AND name IN ('statement_timeout', 'lock_timeout')"
            ).fetchone()["n"]
    finally:
        db.close()
        grant_app_login(database_url, "local-test-password")  # the defaults again
    # Then the server bounds it with the role's defaults
    assert seen == ("7s", "3s")
    assert session_set == 0
