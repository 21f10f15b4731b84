"""The nightly revalidation pass on the real database: batched by id (a batch smaller than what
is due still reaches every record), one audit event per record, nothing flagged twice, and only
active records of a type with a revalidation age."""

import itertools
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.lifecycle import LifecycleService

pytestmark = pytest.mark.integration
TENANT = "reval-batch"
AGENT = Principal(sub="agent", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
_slots = itertools.count()


def fact(container, subject, content, *, days_old=0.0, slot=None):
    body = {
        "subject_id": subject,
        "type": "fact",
        "category": "TECHNICAL_ENVIRONMENT",
        "slot": slot or f"tech.component_{next(_slots)}",
        "content": content,
        "source": {"kind": "customer_confirmed"},
        "effective_at": (datetime.now(UTC) - timedelta(days=days_old)).isoformat(),
    }
    result = container.gateway.write(AGENT, MemoryWrite.model_validate(body))
    assert result.memory is not None
    return result.memory


def nightly(container, now, batch_size):
    return LifecycleService(
        container.store,
        container.policies,
        None,
        transcript_ttl_days=7,
        clock=lambda: now,
        batch_size=batch_size,
    ).flag_revalidation_due(TENANT, container.policies.for_tenant(TENANT), now)


def flags_and_events(database_url, ids):
    with psycopg.connect(database_url) as c:
        flags = dict(
            c.execute("SELECT id, needs_revalidation FROM memory_records WHERE id = ANY(%s)", (ids,))
        )
        events = c.execute(
            "SELECT memory_id, count(*) FROM memory_events WHERE memory_id = ANY(%s)"
            " AND event_type = 'memory_revalidation_due' GROUP BY memory_id",
            (ids,),
        ).fetchall()
    return flags, dict(events)


def test_a_batch_smaller_than_what_is_due_still_flags_each_record_once(container, database_url):
    # Given seven facts written today and one superseded version
    facts = [fact(container, "S-B1", f"Runs component {i} on premises") for i in range(7)]
    old = fact(container, "S-B1", "Uses Okta for single sign-on", slot="tech.sso")
    newer = fact(container, "S-B1", "Uses Entra ID for single sign-on", slot="tech.sso")
    ids = [f.id for f in facts] + [old.id, newer.id]
    later = datetime.now(UTC) + timedelta(days=200)
    # When the nightly pass runs 200 days later in batches of three, and again
    first = nightly(container, later, batch_size=3)
    second = nightly(container, later + timedelta(days=1), batch_size=3)
    # Then every active fact is flagged with one event, the superseded version is not, and the
    # second pass flags nothing
    flags, events = flags_and_events(database_url, ids)
    assert first == 8 and second == 0
    assert {i for i, f in flags.items() if f} == {f.id for f in facts} | {newer.id}
    assert events == dict.fromkeys([f.id for f in facts] + [newer.id], 1)
