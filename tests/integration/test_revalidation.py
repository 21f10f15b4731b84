"""store.revalidate against the real database: of two checks that flag or clear a memory, the
one whose live value was read later decides, whichever commits last (agreement with a memory
that is not flagged is not recorded); a repeated answer rewrites nothing; two retrievals
deciding the same memories in opposite ways never deadlock."""

import threading
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

pytestmark = pytest.mark.integration
T = "reval"


@pytest.fixture(scope="module")
def memories(api):
    integ = api.token(T, "crm", ["integration"])

    def write(subject: str) -> str:
        r = api.post(
            "/v1/memories",
            {
                "subject_id": subject,
                "type": "fact",
                "category": "ACCOUNT_PROFILE",
                "slot": "account.seats",
                "content": "The account has 12 seats.",
                "value": {"seats": 12},
                "source": {"kind": "system_of_record", "system": "crm"},
            },
            token=integ,
        )
        assert r.status in (200, 201), r.body
        return r.body["memory"]["id"]

    return write


def row(database_url, mid):
    with psycopg.connect(database_url) as c:
        return c.execute(
            "SELECT needs_revalidation, revalidation_checked_at, xmin::text FROM memory_records WHERE id = %s",
            (mid,),
        ).fetchone()


def check(container, contradicting, agreeing, at):
    with container.store.tenant(T) as s:
        return s.revalidate(contradicting, agreeing, at)


T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_the_later_read_decides_whichever_commits_last(container, memories, database_url):
    mid = memories("S-ORDER")
    assert check(container, [mid], [], T0) == ([mid], [])  # flagged
    assert check(container, [], [mid], T0 + timedelta(seconds=3)) == ([], [mid])  # cleared by a later read
    # an older contradicting read arriving last does not re-flag it
    assert check(container, [mid], [], T0 + timedelta(seconds=2)) == ([], [])
    assert row(database_url, mid)[:2] == (False, T0 + timedelta(seconds=3))
    # a newer one does
    assert check(container, [mid], [], T0 + timedelta(seconds=4)) == ([mid], [])
    # and an older agreeing read arriving last does not clear it
    assert check(container, [], [mid], T0 + timedelta(seconds=3, milliseconds=500)) == ([], [])
    assert row(database_url, mid)[:2] == (True, T0 + timedelta(seconds=4))


def test_the_same_answer_again_rewrites_nothing(container, memories, database_url):
    # Given a memory flagged by a live value read at T0 (a cached answer keeps that time)
    mid = memories("S-SAME")
    check(container, [mid], [], T0)
    version = row(database_url, mid)[2]
    # When retrievals keep deciding on that same answer
    for _ in range(3):
        assert check(container, [mid], [], T0) == ([], [])
    # Then the row was not written again
    assert row(database_url, mid)[2] == version


def test_opposite_decisions_at_once_wait_for_each_other_and_never_deadlock(container, memories, database_url):
    # Given two flagged memories, and two retrievals deciding them in opposite ways at once
    a, b = memories("S-DL-A"), memories("S-DL-B")
    check(container, [a, b], [], T0)
    errors: list[str] = []
    for round_ in range(10):
        barrier = threading.Barrier(2)

        def run(contradicting, agreeing, at, barrier=barrier):
            try:
                barrier.wait()
                check(container, contradicting, agreeing, at)
            except Exception as exc:  # a deadlock surfaces as an error of one of them
                errors.append(type(exc).__name__)

        t1 = T0 + timedelta(seconds=10 * round_ + 1)
        t2 = t1 + timedelta(seconds=1)
        threads = [
            threading.Thread(target=run, args=([a], [b], t1)),
            threading.Thread(target=run, args=([b], [a], t2)),
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join(20)
    assert errors == []
    # And the later read decided b (it contradicted); a agreed in the later read, which clears it
    # if it was flagged then; had the older read flagged it afterwards (agreement with an
    # unflagged memory is not recorded: that would write on every retrieval), the next check clears it
    last = T0 + timedelta(seconds=92)
    assert row(database_url, b)[:2] == (True, last)
    assert row(database_url, a)[:2] in [(False, last), (True, last - timedelta(seconds=1))]
