"""The freshness gate of one retrieval (domain.freshness.FreshnessGate): memories in slots the
system of record owns yield to the live value, and what it decided is what the store records."""

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.freshness import FreshnessGate
from agent_memory.domain.records import RetrievedMemory, Source

READ_AT = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class Live:
    field: str
    value: Any
    read_at: datetime = READ_AT


def seats(memory_id: str, content: str) -> RetrievedMemory:
    return RetrievedMemory(
        id=memory_id,
        type=MemoryType.FACT,
        category="ACCOUNT_PROFILE",
        slot="account.seats",
        content=content,
        value={},
        source=Source(kind="customer_claim"),
        authority=Authority.CUSTOMER_CLAIM,
        confidence=0.8,
        effective_at=READ_AT - timedelta(days=30),
        expires_at=None,
        session_id=None,
    )


def test_a_memory_contradicting_the_live_value_is_left_out_and_decided_stale():
    # Given a memory in the seats slot saying 40 while the system of record says 55
    gate = FreshnessGate(owned={"m1": "seats"}, live={"seats": Live("seats", 55)})
    # When the gate checks it
    reason = gate.exclusion("m1", lambda: seats("m1", "We have 40 seats"), flagged=False)
    # Then it is left out as stale, named under the live value it yields to, and decided stale
    decided = gate.decisions()
    assert reason == "stale_vs_live"
    assert gate.overrides == {"seats": ["m1"]}
    assert (decided.contradicting, decided.agreeing, decided.read_at) == ({"m1": "seats"}, {}, READ_AT)


def test_a_flagged_memory_agreeing_again_is_shown_cleared_and_not_marked_due():
    # Given a memory flagged earlier that now names the live value
    gate = FreshnessGate(owned={"m1": "seats"}, live={"seats": Live("seats", 55)})
    # When the gate checks it
    reason = gate.exclusion("m1", lambda: seats("m1", "We have 55 seats now"), flagged=True)
    # Then it is shown, decided agreeing, and its line does not say it needs revalidation
    assert reason is None
    assert gate.decisions().agreeing == {"m1": "seats"} and not gate.decisions().contradicting
    assert gate.due("m1", flagged=True) is False


def test_a_flagged_memory_with_no_live_value_to_confirm_it_stays_out_and_nothing_is_decided():
    # Given the system of record gave no value for the slot (an outage, a withheld value)
    gate = FreshnessGate(owned={"m1": "seats", "m2": "seats"}, live={})
    # When a flagged and an unflagged memory of the slot are checked
    flagged = gate.exclusion("m1", lambda: seats("m1", "40 seats"), flagged=True)
    unflagged = gate.exclusion("m2", lambda: seats("m2", "40 seats"), flagged=False)
    # Then the flagged one stays out, the other is shown as last recorded, and nothing is recorded
    decided = gate.decisions()
    assert (flagged, unflagged) == ("needs_revalidation", None)
    assert decided.read_at is None and not (decided.contradicting or decided.agreeing)


def test_a_memory_no_system_of_record_owns_is_never_read_by_the_gate():
    # Given a memory whose slot the system of record does not own
    gate = FreshnessGate(owned={}, live={"seats": Live("seats", 55)})

    def unread() -> RetrievedMemory:
        raise AssertionError("the gate parsed a memory it does not judge")

    # When the gate checks it (flagged by age)
    reason = gate.exclusion("m9", unread, flagged=True)
    # Then it passes unread, and its line still says it needs revalidation
    assert reason is None and gate.due("m9", flagged=True) is True


def test_the_decisions_are_dated_by_the_oldest_live_value_read():
    # Given two live values read at different times (one from a cache)
    older = READ_AT - timedelta(minutes=5)
    gate = FreshnessGate(
        owned={"m1": "seats", "m2": "plan"},
        live={"seats": Live("seats", 55), "plan": Live("plan", "Enterprise", older)},
    )
    gate.exclusion("m1", lambda: seats("m1", "40 seats"), flagged=False)
    # Then what was decided is ordered by the older read (store.revalidate keeps the newest)
    assert gate.decisions().read_at == older
