"""Commitments are stateful: open until closed, then kept for the policy's retention (docs/rules.md, Types)."""

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.admission import classify
from agent_memory.domain.commitments import CommitmentOutcome, close, opening_value
from agent_memory.domain.errors import Conflict, InvalidRequest
from agent_memory.domain.policy import profile
from agent_memory.domain.records import MemoryWrite

NOW = datetime(2026, 10, 1, tzinfo=UTC)
POLICY = profile("support")


def commitment(value: dict, **kw) -> MemoryWrite:
    return MemoryWrite.model_validate(
        {
            "subject_id": "ACC-1",
            "type": "commitment",
            "content": "I will send the revised SOW by Friday",
            "value": opening_value(value),
            "source": {"kind": "agent_inference"},
            "effective_at": NOW - timedelta(days=60),
            **kw,
        }
    )


def classified(w: MemoryWrite):
    return classify(w, policy=POLICY, now=NOW, masked_kinds=[], injection_signals=())


def test_given_a_commitment_without_state_when_opened_then_it_is_open_and_never_expires_on_its_own():
    w = commitment({"owner": "agent", "due": "Friday"})
    assert w.value["state"] == "open"
    c = classified(w)
    assert c.final is None and c.expires_at is None


@pytest.mark.parametrize("state", ["done", "OPEN", "", None])
def test_given_an_unknown_state_when_opened_then_422_names_value_state(state):
    with pytest.raises(InvalidRequest) as err:
        opening_value({"state": state})
    assert err.value.field == "value.state"


@pytest.mark.parametrize("closed_at", [None, "last week", "2026-09-01T10:00:00"])
def test_given_a_closed_commitment_without_a_zoned_close_time_when_opened_then_422_names_closed_at(closed_at):
    with pytest.raises(InvalidRequest) as err:
        opening_value({"state": "closed", "closed_at": closed_at})
    assert err.value.field == "value.closed_at"


def test_given_a_commitment_recorded_as_closed_when_classified_then_it_expires_retention_days_after_closing():
    closed_at = NOW - timedelta(days=5)
    c = classified(commitment({"state": "closed", "closed_at": closed_at.isoformat()}))
    assert c.expires_at == closed_at + timedelta(days=POLICY.commitment_closed_retention_days)
    assert c.final is None


def test_given_a_commitment_closed_longer_ago_than_the_retention_when_classified_then_rejected_as_expired():
    closed_at = NOW - timedelta(days=POLICY.commitment_closed_retention_days + 1)
    c = classified(commitment({"state": "closed", "closed_at": closed_at.isoformat()}))
    assert "already_expired" in c.reasons


def test_given_an_open_commitment_when_closed_then_state_outcome_and_expiry_follow_the_policy():
    value, expires = close(
        {"state": "open", "owner": "agent", "due": "Friday"},
        outcome=CommitmentOutcome.CANCELLED,
        at=NOW,
        by="agent-7",
        policy=POLICY,
        requested_expiry=None,
    )
    assert value == {
        "state": "closed",
        "owner": "agent",
        "due": "Friday",
        "outcome": "cancelled",
        "closed_at": NOW.isoformat(),
        "closed_by": "agent-7",
    }
    assert expires == NOW + timedelta(days=30)


def test_given_an_earlier_expiry_when_closed_then_closing_never_extends_the_record_life():
    earlier = NOW + timedelta(days=3)
    _, expires = close(
        {"state": "open"},
        outcome=CommitmentOutcome.DONE,
        at=NOW,
        by="a",
        policy=POLICY,
        requested_expiry=earlier,
    )
    assert expires == earlier


def test_given_a_closed_commitment_when_closed_again_then_conflict():
    with pytest.raises(Conflict):
        close(
            {"state": "closed", "closed_at": NOW.isoformat()},
            outcome=CommitmentOutcome.DONE,
            at=NOW,
            by="a",
            policy=POLICY,
            requested_expiry=None,
        )


@pytest.mark.parametrize("days", [1, -61], ids=["in the future", "before it was made"])
def test_given_a_close_time_outside_the_commitments_life_when_classified_then_422_names_closed_at(days):
    closed_at = NOW + timedelta(days=days)
    with pytest.raises(InvalidRequest) as err:
        classified(commitment({"state": "closed", "closed_at": closed_at.isoformat()}))
    assert err.value.field == "value.closed_at"
