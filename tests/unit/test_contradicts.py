"""Does a memory contradict the live value of its slot? (domain.freshness.contradicts)

When in doubt it says yes: the memory is then withheld and flagged, while the live value is shown
anyway. The one known miss runs the other way: a text that names the live value among others."""

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.freshness import contradicts
from agent_memory.domain.records import RetrievedMemory, Source


def mem(content, value=None):
    return RetrievedMemory(
        id="m",
        type=MemoryType.FACT,
        category="ACCOUNT_PROFILE",
        slot="account.seats",
        content=content,
        value=value or {},
        source=Source(kind="system_of_record"),
        authority=Authority.SYSTEM_OF_RECORD,
        confidence=1.0,
        effective_at=datetime(2026, 1, 1, tzinfo=UTC),
        expires_at=None,
        session_id=None,
    )


CASES = [
    # (content, value, field, live, expected)
    ("The account has 120 seats.", None, "seats", 12, True),  # substring "12" in "120"
    # known miss: the text names the live value, among others (the live value is pinned above it)
    ("Downgraded from Enterprise to Basic.", None, "plan_tier", "enterprise", False),
    ("Plan is Enterprise.", None, "plan_tier", "enterprise", False),
    ("Plan is Pro Plus.", None, "plan_tier", "enterprise", True),
    ("The account has 12 seats.", {"seats": 12.0}, "seats", 12, False),  # 12.0 vs 12
    ("The account has 1,000 seats.", {"seats": "1,000"}, "seats", 1000, False),
    ("Twelve seats.", None, "seats", 12, True),  # spelled numbers are not read: withheld, the live 12 shown
    ("Plan tier is Enterprise.", {"plan_tier": " ENTERPRISE "}, "plan_tier", "enterprise", False),
    ("Seats: 12", {"seats": "12"}, "seats", 12, False),
    ("The account has 40, renewing in May.", None, "seats", 40, False),  # a comma after the number
    ("Seats: 1,000.", None, "seats", 1000, False),
    ("Build v12 is deployed.", None, "seats", 12, True),  # a number inside a word is not a number
    ("Credit balance", {"seats": "-5"}, "seats", -5, False),
    ("Huge", {"seats": 10**400}, "seats", 10**400, False),  # no float conversion to overflow
    ("Huge", {"seats": 10**400}, "seats", 12, True),
    ("Long", {"seats": "12345678901234567890123456789"}, "seats", 12345678901234567890123456789, False),
    ("Long", {"seats": "12345678901234567890123456788"}, "seats", 12345678901234567890123456789, True),
    # a date or a time of day names no count (session 7)
    ("Renewed 2026-03-12 with 40 seats.", None, "seats", 12, True),
    ("Renewed 2026-03-12T09:30:00Z with 40 seats.", None, "seats", 12, True),
    ("Renewed on 12/03/2026 with 40 seats.", None, "seats", 12, True),
    ("Renewed on 12.03.2026 with 40 seats.", None, "seats", 12, True),
    ("Call booked at 12:30 about the 40 seats.", None, "seats", 12, True),
    ("Renewed 2026-03-12 with 12 seats.", None, "seats", 12, False),
    ("Renewed on March 12, 2026 with 40 seats.", None, "seats", 12, True),
    ("Renewed on 12 March 2026 with 40 seats.", None, "seats", 12, True),
    ("Renewed on the 12th of March with 40 seats.", None, "seats", 12, True),
    ("Renewed Mar. 12 with 40 seats.", None, "seats", 12, True),
    ("Renews 12/2026 with 40 seats.", None, "seats", 12, True),
    ("Renewal 2026-12, 40 seats.", None, "seats", 12, True),
    ("Call at 12:30pm about the 40 seats.", None, "seats", 12, True),
    ("Call at 12:30h about the 40 seats.", None, "seats", 12, True),
    ("Call at 12pm about the 40 seats.", None, "seats", 12, True),
    ("12 marketing seats.", None, "seats", 12, False),  # a word that starts like a month is not one
    ("12 seats from May 2026.", None, "seats", 12, False),
    ("Renewed on the 12th of May with 40 seats.", None, "seats", 12, True),
    ("Renewed May 12, 2026 with 40 seats.", None, "seats", 12, True),
    ("Renewed 12 May 2026 with 40 seats.", None, "seats", 12, True),
    # ... but "may" the verb and plain ratios are not dates (second review, session 7)
    ("Of the 40 seats, 12 may be unused.", None, "seats", 12, False),
    ("The customer says 12 may not be enough.", None, "seats", 12, False),
    ("40/1000 seats in use.", None, "seats", 1000, False),
    # third review: "May 12" is a date; a day over 31 is a count
    ("Renewed May 12 with 40 seats.", None, "seats", 12, True),
    ("Renewed may. 12 with 40 seats.", None, "seats", 12, True),
    ("Renewed 12 May with 40 seats.", None, "seats", 12, True),
    ("Renewed on 12 May.", None, "seats", 12, True),
    ("Since June 40 seats have been idle.", None, "seats", 40, False),
    ("In April 50 licenses were added.", None, "seats", 50, False),
    ("Renewal 05/2026: 40 seats.", None, "seats", 5, True),
    ("Renewed 2026-03-12: 40 seats.", None, "seats", 12, True),
    ("Called at 12:30:15, 40 seats.", None, "seats", 12, True),
    ("On 12/03/2026: 40 seats.", None, "seats", 40, False),
    ("The account has 1,200.5 seats at 3.5 each.", None, "seats", 3.5, False),  # decimals are not dates
    # a leading zero makes a code, not a number (session 7)
    ("Branch code recorded.", {"branch": "02134"}, "branch", 2134, True),
    ("Branch code recorded.", {"branch": "02134"}, "branch", "02134", False),
    ("Branch 02134.", None, "branch", "02134", False),
    ("Branch 02134.", None, "branch", 2134, True),
    ("Zero seats.", {"seats": "0"}, "seats", 0, False),
    ("Half a seat.", {"seats": "0.5"}, "seats", 0.5, False),
]


@pytest.mark.parametrize("content,value,field,live,expected", CASES)
def test_contradiction_table(content, value, field, live, expected):
    got = contradicts(mem(content, value), field, live)
    assert got is expected


@given(n=st.integers(min_value=1, max_value=10_000), extra=st.integers(min_value=0, max_value=9))
def test_a_different_seat_count_in_the_text_always_contradicts(n, extra):
    other = int(f"{n}{extra}")  # n followed by another digit: a different number containing n
    assert contradicts(mem(f"The account has {other} seats."), "seats", n)
