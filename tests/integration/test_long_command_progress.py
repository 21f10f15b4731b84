"""Progress of long local commands on the real database: the purge's steps, reindexing and
migrations report what they do to a progress bar, with totals where the time left needs one."""

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from agent_memory.adapters.postgres import database
from agent_memory.domain.enums import Decision, Role
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.services.lifecycle import LifecycleService
from agent_memory.services.write_gateway import WriteGateway

pytestmark = pytest.mark.integration
TENANT = "prog"
AGENT = Principal(sub="agent", tenant_id=TENANT, roles=frozenset({Role.AGENT}))


@dataclass
class RecordedBar:
    description: str
    total: int | None
    unit: str
    updates: list[int] = field(default_factory=list)
    postfixes: list[str] = field(default_factory=list)
    closed: bool = False

    def update(self, n: int = 1) -> None:
        self.updates.append(n)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        self.postfixes.append(s)

    def close(self) -> None:
        self.closed = True


class RecordedBars:
    def __init__(self) -> None:
        self.bars: list[RecordedBar] = []

    def __call__(self, description: str, *, total: int | None, unit: str) -> RecordedBar:
        bar = RecordedBar(description, total, unit)
        self.bars.append(bar)
        return bar

    def named(self, description: str) -> RecordedBar:
        (bar,) = [b for b in self.bars if b.description == description]
        return bar


@pytest.fixture
def empty_database(pg_server: Any) -> Iterator[str]:
    name = f"prog_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield pg_server.get_uri(name)
    with psycopg.connect(pg_server.get_uri(), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def expiring_note(container, subject: str, content: str, now: datetime):
    body = {
        "subject_id": subject,
        "type": "sentiment",
        "content": content,
        "source": {"kind": "customer_claim"},
        "effective_at": (now - timedelta(days=5)).isoformat(),
        "expires_at": (now + timedelta(seconds=1)).isoformat(),
    }
    return container.gateway.write(AGENT, MemoryWrite.model_validate(body))


def test_given_expired_memories_when_purging_with_progress_then_the_expire_bar_counts_them_against_its_total(
    container,
):
    # Given five memories past their expiry, purged in batches of two
    now = datetime.now(UTC)
    topics = ["a move to Lisbon", "a new CFO", "a second warehouse", "annual billing", "a partner program"]
    for topic in topics:
        expiring_note(container, "S-PROG", f"Thinking about {topic}", now)
    service = LifecycleService(
        container.store,
        container.policies,
        container.objects,
        transcript_ttl_days=7,
        clock=lambda: now + timedelta(minutes=5),
        batch_size=2,
    )
    bars = RecordedBars()

    # When the purge runs with progress bars
    report = service.purge(tenants=[TENANT], consolidate=False, progress=bars)

    # Then the expire bar's total was known up front, each batch moved it, and every bar was closed
    expire = bars.named(f"purge {TENANT}: expire")
    assert report.expired == 5
    assert expire.total == 5 and sum(expire.updates) == 5 and expire.unit == "record"
    assert len(expire.updates) >= 3  # batches of two: the bar moved batch by batch, not once at the end
    assert bars.named(f"purge {TENANT}: delete").total == 0
    assert all(b.closed for b in bars.bars)


def test_given_no_progress_when_purging_then_the_report_is_the_same_and_nothing_is_drawn(container):
    # Given a memory past its expiry
    now = datetime.now(UTC)
    expiring_note(container, "S-PROG-QUIET", "Thinking about a hiring freeze", now)
    service = LifecycleService(
        container.store,
        container.policies,
        container.objects,
        transcript_ttl_days=7,
        clock=lambda: now + timedelta(minutes=5),
    )
    # When the purge runs without a progress factory (as in Lambda) / Then it expires the memory
    assert service.purge(tenants=[TENANT], consolidate=False).expired == 1


def test_given_records_written_while_the_embedder_was_down_when_reindexing_with_progress_then_the_bar_counts_them(
    container,
):
    # Given two records written while the embedder failed
    class Broken:
        name, dimension = "broken", 384

        def embed(self, texts):
            raise RuntimeError("embedding endpoint down")

    gateway = WriteGateway(container.store, Broken(), container.policies)
    for content in ("Asked for the SOC 2 report", "Asked for the DPA template"):
        r = gateway.write(
            AGENT,
            MemoryWrite.model_validate(
                {
                    "subject_id": "S-REIDX",
                    "type": "episode",
                    "content": content,
                    "source": {"kind": "customer_claim"},
                }
            ),
        )
        assert r.decision is Decision.ADMITTED and "embedding_pending" in r.memory.flags
    bars = RecordedBars()

    # When the embedder is back and reindexing runs with progress, one record per batch
    done = container.lifecycle.reindex_pending(TENANT, batch=1, progress=bars)

    # Then one bar counted every record, batch by batch, and was closed
    bar = bars.named(f"reindex {TENANT}")
    assert done >= 2 and sum(bar.updates) == done and len(bar.updates) == done and bar.closed
    # And with nothing left to do, no bar is drawn at all
    again = RecordedBars()
    assert container.lifecycle.reindex_pending(TENANT, progress=again) == 0 and again.bars == []


def test_given_a_new_database_when_migrating_with_progress_then_the_bar_names_each_migration_in_order(
    empty_database,
):
    # Given an empty database
    url = empty_database
    bars = RecordedBars()

    # When it is migrated with progress
    applied = database.migrate(url, embedding_dim=384, embedding_model="local-minilm-onnx", progress=bars)

    # Then one bar, whose total is the pending migrations, named each one as it ran
    (bar,) = bars.bars
    assert applied and bar.total == len(applied) and bar.unit == "migration"
    assert bar.postfixes == applied and sum(bar.updates) == len(applied) and bar.closed
    # And migrating again draws nothing: nothing is pending
    again = RecordedBars()
    assert database.migrate(url, embedding_dim=384, embedding_model="local-minilm-onnx", progress=again) == []
    assert again.bars == []
