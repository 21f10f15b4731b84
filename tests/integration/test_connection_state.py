"""What a pooled connection carries between requests. Behind RDS Proxy (the AWS stack) a connection
that holds session state, such as a named prepared statement or a session-level setting, is pinned to
one database connection for its whole life, and the proxy can no longer share it. The stack turns
prepared statements off; these tests show what is then left on the connection after real traffic."""

from collections.abc import Iterator
from typing import Any

import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.retrieval import ResolutionSearchRequest, RetrieveRequest

pytestmark = pytest.mark.integration

TENANT = "tenant-conn"
AGENT = Principal(sub="agent@conn", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
# Settings the owner's embedded login needs: it switches to the application role for the whole
# session, with the application role's server-side timeouts. In AWS the functions log in as that
# role, whose own defaults carry the timeouts, so there is no SET to pin on.
EMBEDDED_ONLY = {"role", "session_authorization", "statement_timeout", "lock_timeout"}


@pytest.fixture(params=[False, True], ids=["behind-proxy", "prepared"])
def one_connection(request: pytest.FixtureRequest, serve_container: Any) -> Iterator[Any]:
    """A container whose pool holds exactly one connection, so every request reuses it."""
    with serve_container(pool_min_size=1, pool_max_size=1, database_prepared_statements=request.param) as c:
        yield c


def session_state(container: Any) -> dict[str, Any]:
    with container.db.pool.connection() as conn:
        prepared = conn.execute("SELECT count(*) AS n FROM pg_prepared_statements").fetchone()
        changed = conn.execute(
            "SELECT name FROM pg_settings WHERE source = 'session' AND name <> ALL(%s) ORDER BY name",
            (sorted(EMBEDDED_ONLY),),
        ).fetchall()
        tenant = conn.execute("SELECT current_setting('app.tenant_id', true) AS t").fetchone()
        other = conn.execute(
            """SELECT (SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'advisory') AS locks,
                      (SELECT count(*) FROM pg_cursors) AS cursors,
                      (SELECT count(*) FROM pg_listening_channels()) AS channels,
                      (SELECT count(*) FROM pg_class WHERE relpersistence = 't') AS temp_tables"""
        ).fetchone()
        conn.rollback()
    return {
        "prepared": prepared["n"],
        "settings": [r["name"] for r in changed],
        "tenant": tenant["t"] or None,
        "held": {k: v for k, v in other.items() if v},
    }


def test_requests_leave_no_session_state_without_prepared_statements(one_connection: Any) -> None:
    # Given a subject with memories, written and read through the service
    for i in range(3):
        one_connection.gateway.write(
            AGENT,
            MemoryWrite(
                subject_id="S-CONN",
                type="episode",
                content=f"Customer asked about the renewal quote, round {i}",
                source={"kind": "customer_confirmed"},
            ),
        )
    one_connection.gateway.write(  # a slot: its writes take a transaction-level lock
        AGENT,
        MemoryWrite(
            subject_id="S-CONN",
            type="preference",
            slot="preference.contact_channel",
            content="Prefers email for renewal quotes",
            source={"kind": "customer_confirmed"},
        ),
    )
    # When the hot read path runs more often than psycopg's prepare threshold (5), with the
    # tenant-wide search (which tunes the HNSW scan) and the nightly purge (locks, sealing)
    for _ in range(8):
        result = one_connection.broker.retrieve(
            AGENT, RetrieveRequest(subject_id="S-CONN", query="renewal quote")
        )
        assert result.memories, "the reads must find what was written"
        one_connection.broker.search_resolutions(AGENT, ResolutionSearchRequest(query="renewal quote"))
    one_connection.lifecycle.purge(tenants=[TENANT])
    state = session_state(one_connection)

    # Then the tenant setting, the plan mode and the HNSW settings ended with each transaction,
    # never with the session; no lock, cursor, channel or temporary table outlived its transaction
    assert state["tenant"] is None
    assert state["settings"] == []
    assert state["held"] == {}
    # And named prepared statements exist only where the setting allows them
    if one_connection.settings.database_prepared_statements:
        assert state["prepared"] > 0, "the control: prepared statements are visible when on"
    else:
        assert state["prepared"] == 0
