"""Pure rules of revalidation by age and of dates bounded from admission (docs/rules.md, Types;
INV-MEM-02): ages count from the later of effective_at and last_validated_at; no record is dated
more than a day ahead; a hard TTL bound runs from admission."""

from datetime import UTC, datetime, timedelta

import pytest

from agent_memory.domain.admission import classify
from agent_memory.domain.context import REVALIDATION_NOTE, mark_needs_revalidation
from agent_memory.domain.enums import MemoryType
from agent_memory.domain.errors import InvalidRequest
from agent_memory.domain.policy import profile
from agent_memory.domain.records import MemoryWrite
from agent_memory.domain.revalidation import revalidation_anchor, revalidation_due

NOW = datetime(2026, 10, 1, tzinfo=UTC)
CRM = profile("crm")
DAY = timedelta(days=1)


def write(**kw) -> MemoryWrite:
    base = {
        "subject_id": "ACC-1",
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "content": "Dana Reyes is the primary contact",
        "source": {"kind": "customer_confirmed"},
    }
    base.update(kw)
    return MemoryWrite.model_validate(base)


def classified(w: MemoryWrite):
    return classify(w, policy=CRM, now=NOW, masked_kinds=[], injection_signals=())


def test_given_no_confirmation_when_aged_then_the_age_counts_from_the_effective_date():
    assert revalidation_anchor(NOW - 200 * DAY, None) == NOW - 200 * DAY


def test_given_a_later_confirmation_when_aged_then_the_age_counts_from_the_confirmation():
    assert revalidation_anchor(NOW - 400 * DAY, NOW - 10 * DAY) == NOW - 10 * DAY
    assert not revalidation_due(MemoryType.FACT, "s", NOW - 400 * DAY, NOW - 10 * DAY, CRM, NOW)


@pytest.mark.parametrize(
    ("memory_type", "days", "due"),
    [
        (MemoryType.FACT, 179, False),
        (MemoryType.FACT, 180, True),
        (MemoryType.PREFERENCE, 364, False),
        (MemoryType.PREFERENCE, 365, True),
        (MemoryType.EPISODE, 3000, False),  # no revalidation age for the type
    ],
)
def test_given_a_record_of_an_age_when_checked_then_due_exactly_from_the_policy_age(memory_type, days, due):
    assert revalidation_due(memory_type, "slot.x", NOW - days * DAY, None, CRM, NOW) is due


def test_given_a_slot_the_system_of_record_owns_when_old_then_not_aged():
    assert not revalidation_due(MemoryType.FACT, "account.seats", NOW - 900 * DAY, None, CRM, NOW)


def test_given_a_backdated_fact_when_classified_then_flagged_and_not_confirmed():
    c = classified(write(effective_at=NOW - 200 * DAY))
    assert c.needs_revalidation is True and c.last_validated_at is None


def test_given_a_backdated_fact_from_the_system_of_record_when_classified_then_confirmed_now():
    c = classified(write(effective_at=NOW - 200 * DAY, source={"kind": "system_of_record"}))
    assert c.last_validated_at == NOW and c.needs_revalidation is False


@pytest.mark.parametrize("memory_type", list(MemoryType))
def test_given_any_type_dated_more_than_a_day_ahead_when_classified_then_422_names_effective_at(
    memory_type,
):
    slotted = memory_type in (MemoryType.FACT, MemoryType.PREFERENCE)
    w = write(
        type=memory_type.value,
        category="STAKEHOLDER" if memory_type is MemoryType.FACT else None,
        slot="x.y" if slotted else None,
        effective_at=NOW + DAY + timedelta(seconds=1),
    )
    with pytest.raises(InvalidRequest) as err:
        classified(w)
    assert err.value.field == "effective_at"


def test_given_a_date_within_a_day_ahead_when_classified_then_accepted():
    assert classified(write(effective_at=NOW + DAY)).effective_at == NOW + DAY


def test_given_a_sentiment_dated_ahead_asking_for_longer_when_classified_then_refused():
    # a write may only shorten its type's retention: asking past the bound is 422 naming expires_at
    with pytest.raises(InvalidRequest) as refused:
        classified(
            write(
                type="sentiment",
                category=None,
                slot=None,
                content="Might expand next winter",
                effective_at=NOW + 20 * 60 * timedelta(minutes=1),
                expires_at=NOW + 400 * DAY,
            )
        )
    assert refused.value.field == "expires_at"


def test_given_a_sentiment_dated_ahead_when_classified_then_bounded_from_admission():
    c = classified(
        write(
            type="sentiment",
            category=None,
            slot=None,
            content="Might expand next winter",
            effective_at=NOW + 20 * 60 * timedelta(minutes=1),
        )
    )
    assert c.expires_at == NOW + 180 * DAY


def test_given_a_backdated_episode_when_classified_then_its_ttl_still_runs_from_its_date():
    c = classified(write(type="episode", category=None, slot=None, effective_at=NOW - 10 * DAY))
    assert c.expires_at == NOW + 355 * DAY  # crm: episodes 365 days


def test_given_a_line_when_marked_then_the_note_sits_inside_its_provenance():
    line = "- [mem_1] Dana is the contact (source: crm; authority: customer_confirmed; fact; effective 2026-01-01)"
    assert mark_needs_revalidation(line) == line[:-1] + f"; {REVALIDATION_NOTE})"
