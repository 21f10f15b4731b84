"""The audit log is a hash chain: editing, dropping or reordering a row is detected."""

from datetime import UTC, datetime

from agent_memory.domain.audit import event_hash_fields, verify_chain
from agent_memory.domain.hashing import GENESIS_HASH, chain_hash
from agent_memory.domain.records import AuditEvent


def _chain(n: int) -> list[AuditEvent]:
    prev, out = GENESIS_HASH, []
    for i in range(1, n + 1):
        e = AuditEvent(
            tenant_id="t",
            seq=i,
            id=f"evt_{i}",
            event_type="memory_created",
            memory_id=f"m{i}",
            subject_id="s",
            actor="a",
            reason=None,
            payload={"i": i},
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            prev_hash=prev,
            hash="",
        )
        e.hash = chain_hash(prev, event_hash_fields(e))
        prev = e.hash
        out.append(e)
    return out


def test_given_an_untouched_chain_when_verified_then_ok():
    report = verify_chain("t", _chain(5))
    assert report.ok and report.events == 5


def test_given_an_edited_payload_when_verified_then_the_row_is_named():
    events = _chain(5)
    events[2].payload = {"i": 999}
    report = verify_chain("t", events)
    assert not report.ok and report.broken_at_seq == 3


def test_given_a_deleted_row_when_verified_then_the_gap_is_found():
    events = _chain(5)
    del events[1]
    report = verify_chain("t", events)
    assert not report.ok and report.broken_at_seq == 3
