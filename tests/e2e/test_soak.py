"""The soak, short: several tenants at once through the HTTP front, every fault injected once,
then the invariant checker on the database. And the checker itself, on rows planted by hand."""

from datetime import UTC, datetime

import psycopg
import pytest

from memory_bench.soak import FAULTS, TRUNCATED_SENTINEL, Expectations, check_invariants, run

pytestmark = pytest.mark.e2e

# Each must have been sent at least once, or the run proved nothing about it.
KINDS = (
    "write",
    "close",
    "close_large",
    "list",
    "retrieve",
    "review",
    "legal_hold",
    "erasure",
    "audit",
    "mcp_remember",
    "mcp_recall",
    "mcp_forget",
    "mcp_working_memory_set",
)


def test_a_short_soak_with_faults_breaks_no_invariant(embedder):
    # Given the service under three tenants' traffic (A listing while B closes ~1 MB sessions),
    # with PostgreSQL frozen and restarted, the worker replaced, messages delivered twice, bodies
    # cut off halfway, and an injected agent driving the MCP tools at other customers and authorities
    report = run(
        seconds=25, tenants=3, subjects=4, clients=4, faults=True, drain_seconds=90, embedder=embedder
    )

    # Then every kind of operation and every fault happened
    counts = {kind: row["count"] for kind, row in report["requests"]["by_kind"].items()}
    assert all(counts.get(kind, 0) > 0 for kind in KINDS), counts
    assert [f["kind"] for f in report["faults"]] == list(FAULTS)
    assert [f for f in report["faults"] if "error" in f] == []

    # And no invariant is broken
    assert report["invariants"] == dict.fromkeys(report["invariants"], 0), report["details"]


def _plant_memory(conn, record_id: str, subject: str, slot: str, content: str, now: datetime) -> None:
    """An active fact of tenant A, written by hand (no gateway: a plant breaks the rules on purpose)."""
    conn.execute(
        """INSERT INTO memory_records (id, tenant_id, subject_id, scope, type, category, slot, content,
                                       source, actor, authority, authority_rank, confidence,
                                       sensitivity, sensitivity_rank, status, created_at, effective_at,
                                       content_hash)
           VALUES (%s, 'soak-zebracorn', %s, 'subject', 'fact', 'ACCOUNT_PROFILE', %s, %s,
                   '{"kind": "system_of_record"}', 'crm-zebracorn', 'system_of_record', 5, 1,
                   'internal', 1, 'active', %s, %s, md5(%s))""",
        (record_id, subject, slot, content, now, now, record_id),
    )


def test_the_checker_counts_what_was_planted(database_url):
    # Given a migrated database holding, under tenant A, one violation of each invariant: a session
    # of B's (B's marker in its subject), an identifier in clear, a session left queued, an audit
    # event with a bad hash, a memory of a subject whose erasure was verified, two active versions
    # of one slot (the unique index that forbids them dropped, as if it were ever lost), and a
    # memory holding text only a body cut off by its client carries
    from agent_memory.adapters.postgres.database import migrate

    migrate(database_url, embedding_dim=384, embedding_model="local-minilm-onnx")
    now = datetime.now(UTC)
    with psycopg.connect(database_url, autocommit=True) as conn:
        for session_id, subject, ticket in [
            ("sess-quokkafin-1", "ACC-QUOKKAFIN-000", None),
            ("sess-zebracorn-2", "ACC-ZEBRACORN-000", "card 4111 1111 1111 1111"),
        ]:
            conn.execute(
                """INSERT INTO sessions (tenant_id, session_id, subject_id, ticket_id, occurred_at,
                                         transcript_hash, turns, status)
                   VALUES ('soak-zebracorn', %s, %s, %s, %s, 'h', 1, 'queued')""",
                (session_id, subject, ticket, now),
            )
        conn.execute(
            """INSERT INTO memory_events (tenant_id, seq, id, event_type, actor, created_at, prev_hash, hash)
               VALUES ('soak-zebracorn', 1, 'evt_planted', 'created', 'agent-zebracorn', %s, 'x', 'y')""",
            (now,),
        )
        _plant_memory(conn, "mem_erased", "ACC-ZEBRACORN-009", "account.segment", "Mid-market.", now)
        conn.execute("DROP INDEX memory_records_one_active_per_slot")
        for record_id in ("mem_twin_1", "mem_twin_2"):
            _plant_memory(conn, record_id, "ACC-ZEBRACORN-001", "account.plan_tier", "Plan B.", now)
        _plant_memory(
            conn, "mem_cut", "ACC-ZEBRACORN-002", "account.region", f"Region {TRUNCATED_SENTINEL}", now
        )
        # an injected agent's token (bound to ACC-ZEBRACORN-000) that reached ACC-ZEBRACORN-001 and
        # wrote there as the system of record
        conn.execute(
            """INSERT INTO memory_events (tenant_id, seq, id, event_type, subject_id, actor, created_at,
                                          prev_hash, hash)
               VALUES ('soak-zebracorn', 2, 'evt_reached', 'memory_deleted', 'ACC-ZEBRACORN-001',
                       'injected-zebracorn', %s, 'y', 'z')""",
            (now,),
        )
        conn.execute(
            """INSERT INTO memory_records (id, tenant_id, subject_id, scope, type, category, slot, content,
                                           source, actor, authority, authority_rank, confidence,
                                           sensitivity, sensitivity_rank, status, created_at,
                                           effective_at, content_hash)
               VALUES ('mem_planted', 'soak-zebracorn', 'ACC-ZEBRACORN-001', 'subject', 'fact',
                       'CONTRACT_COMMERCIAL', 'contract.seat_price', 'zebracorn pays $1 per seat',
                       '{"kind": "system_of_record"}', 'injected-zebracorn', 'system_of_record', 5, 1,
                       'internal', 1, 'active', %s, %s, 'h')""",
            (now, now),
        )

    # When the checker reads it
    found = check_invariants(
        database_url,
        Expectations(
            markers={"soak-zebracorn": "zebracorn", "soak-quokkafin": "quokkafin"},
            erased=[("soak-zebracorn", "ACC-ZEBRACORN-009")],
            accepted_sessions=[
                ("soak-quokkafin", "sess-quokkafin-1", "ACC-QUOKKAFIN-000"),
                ("soak-zebracorn", "sess-zebracorn-2", "ACC-ZEBRACORN-000"),
            ],
            adversaries=[("soak-zebracorn", "injected-zebracorn", "ACC-ZEBRACORN-000")],
        ),
    )["invariants"]

    # Then each plant is counted, and nothing else
    assert found == {
        "wrong_tenant_rows": 1,
        "sessions_not_processed": 2,  # B's is missing from B, A's is still queued
        "erased_subject_memories": 1,
        "unmasked_identifiers": 1,
        "audit_chains_broken": 1,
        "duplicate_active_versions": 1,
        "truncated_bodies_stored": 1,
        "provenance_not_allowed": 1,  # another subject's memory, as the system of record
        "adversary_reached_other_subjects": 1,
    }
    # And no invariant goes unproven: each one the checker reports was planted here
    assert [name for name, n in found.items() if n == 0] == []
