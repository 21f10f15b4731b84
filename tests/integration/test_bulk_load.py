"""The bulk load (adapters/postgres/bulk_load.py) stores what the normal insert stores."""

from __future__ import annotations

import numpy as np
import psycopg
import pytest
from psycopg.rows import dict_row

from agent_memory.adapters.postgres.bulk_load import BULK_LOAD_REASON, LoadRow, load_records
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.records import MemoryRecord, MemoryWrite, Principal, new_id

pytestmark = pytest.mark.integration

TENANT = "bulk-tenant"
AGENT = Principal(
    sub="agent@bulk",
    tenant_id=TENANT,
    roles=frozenset({Role.AGENT, Role.INTEGRATION}),
    clearance=Sensitivity.CONFIDENTIAL,
)


def written(container, principal: Principal, **fields: object) -> MemoryRecord:
    """A memory as the gateway stored it."""
    result = container.gateway.write(principal, MemoryWrite.model_validate(fields))
    assert result.memory is not None
    with container.store.tenant(principal.tenant_id) as s:
        record = s.get_record(result.memory.id)
    assert record is not None
    return record


def stored_row(url: str, memory_id: str) -> dict[str, object]:
    with psycopg.connect(url, row_factory=dict_row) as conn:
        conn.execute("SELECT set_config('app.tenant_id', %s, false)", (TENANT,))
        row = conn.execute(
            "SELECT *, embedding::text AS embedding, content_tsv::text AS content_tsv"
            " FROM memory_records WHERE id = %s",
            (memory_id,),
        ).fetchone()
        assert row is not None
        return dict(row)


def lineage_and_sentences(url: str, memory_id: str) -> tuple[set[str], int]:
    with psycopg.connect(url) as conn:
        conn.execute("SELECT set_config('app.tenant_id', %s, false)", (TENANT,))
        keys = conn.execute("SELECT lineage_key FROM memory_lineage WHERE memory_id = %s", (memory_id,))
        lineage = {r[0] for r in keys.fetchall()}
        count = conn.execute("SELECT count(*) FROM memory_sentences WHERE memory_id = %s", (memory_id,))
        row = count.fetchone()
        assert row is not None
        return lineage, int(row[0])


def test_given_a_record_the_gateway_stored_when_a_copy_is_bulk_loaded_then_every_column_matches(
    container, database_url
):
    # Given a confidential memory written through the gateway, and its stored vector
    original = written(
        container,
        AGENT,
        subject_id="S-BULK",
        type="preference",
        slot="preference.contact_channel",
        content="Prefers email for renewal questions",
        source={"kind": "customer_confirmed", "system": "crm"},
        sensitivity="confidential",
        session_id="ses-bulk-1",
    )
    before = stored_row(database_url, original.id)
    vector = np.array([float(x) for x in str(before["embedding"]).strip("[]").split(",")], dtype=np.float32)

    # When the same record under another id (and slot, one active version per slot) is bulk-loaded
    copy = original.model_copy(update={"id": new_id("mem"), "slot": "preference.meeting_time"})
    report = load_records(
        database_url,
        TENANT,
        [[LoadRow(copy, vector, [vector, vector])]],
        actor="importer",
    )

    # Then every column holds what the normal insert wrote, the ranks and full text included
    after = stored_row(database_url, copy.id)
    differing = {k for k in before if before[k] != after[k]}
    assert differing == {"id", "slot"}
    assert (
        after["authority_rank"] == before["authority_rank"]
        and after["sensitivity_rank"] == Sensitivity.CONFIDENTIAL.rank
    )
    assert after["content_tsv"] and after["embedding"] == before["embedding"]
    # And the lineage trigger ran for it, its sentence vectors are stored, and the load was counted
    lineage, sentences = lineage_and_sentences(database_url, copy.id)
    assert lineage == set(copy.lineage_keys) and lineage
    assert (report.records, report.sentences, sentences) == (1, 2, 2)


def test_given_a_bulk_load_when_the_audit_chain_is_verified_then_one_event_records_it(
    container, database_url
):
    # Given a load of three records into a tenant with no history
    tenant = "bulk-fresh"
    template = written(
        container,
        Principal(sub="a", tenant_id="bulk-template", roles=frozenset({Role.AGENT})),
        subject_id="S-1",
        type="episode",
        content="Asked for a summary",
        source={"kind": "customer_claim"},
    )
    rows = [
        LoadRow(
            template.model_copy(update={"id": new_id("mem"), "tenant_id": tenant, "subject_id": f"S-{i}"})
        )
        for i in range(3)
    ]

    # When they are bulk-loaded
    load_records(database_url, tenant, [rows[:2], rows[2:]], actor="importer")

    # Then the tenant's chain holds one event naming the load and its count, and it verifies
    with container.store.tenant(tenant) as s:
        events = s.audit_events(subject_id=None, memory_id=None, since=None, after_seq=0, limit=10)
    assert [(e.event_type, e.actor, e.reason, e.payload) for e in events] == [
        ("memory_updated", "importer", BULK_LOAD_REASON, {"records": 3, "sentences": 0})
    ]
    assert container.reads.verify_audit(tenant).ok


def test_given_a_record_of_another_tenant_when_bulk_loaded_then_nothing_is_loaded(container, database_url):
    # Given a batch whose second record belongs to another tenant
    template = written(
        container,
        AGENT,
        subject_id="S-MIX",
        type="episode",
        content="Called about invoices",
        source={"kind": "customer_claim"},
    )
    own = template.model_copy(update={"id": new_id("mem")})
    foreign = template.model_copy(update={"id": new_id("mem"), "tenant_id": "someone-else"})

    # When it is loaded, Then the load refuses it and keeps none of the batch (one transaction)
    with pytest.raises(ValueError, match="another tenant"):
        load_records(database_url, TENANT, [[LoadRow(own), LoadRow(foreign)]], actor="importer")
    with container.store.tenant(TENANT) as s:
        assert s.get_record(own.id) is None
