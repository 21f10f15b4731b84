"""The system-of-record circuit breaker (pure logic, a hand-driven clock)."""

import pytest

from agent_memory.adapters.sor.breaker import Breaker, CircuitOpen


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def breaker(clock):
    return Breaker(failures=3, cooldown_s=30, clock=clock)


def fail(b: Breaker, times: int) -> None:
    for _ in range(times):
        b.failed(b.before())


def test_it_opens_only_after_the_threshold_of_consecutive_failures(breaker):
    fail(breaker, 2)
    breaker.before()  # two in a row: still asked
    breaker.succeeded()  # a success resets the count
    fail(breaker, 2)
    assert breaker.state == "closed"
    fail(breaker, 1)
    assert breaker.state == "open"
    with pytest.raises(CircuitOpen):
        breaker.before()


def test_after_the_cooldown_exactly_one_trial_goes_through(breaker, clock):
    fail(breaker, 3)
    clock.now += 29.9
    with pytest.raises(CircuitOpen):
        breaker.before()
    clock.now += 0.2
    assert breaker.before()  # the trial (its number)
    with pytest.raises(CircuitOpen):  # everyone else still fails fast while it runs
        breaker.before()


def test_a_failed_trial_opens_the_breaker_for_another_full_cooldown(breaker, clock):
    fail(breaker, 3)
    clock.now += 31
    breaker.failed(breaker.before())
    assert breaker.state == "open"
    clock.now += 29
    with pytest.raises(CircuitOpen):
        breaker.before()
    clock.now += 2
    breaker.before()


def test_a_successful_trial_closes_it(breaker, clock):
    fail(breaker, 3)
    clock.now += 31
    breaker.before()
    breaker.succeeded()
    assert breaker.state == "closed"
    breaker.before()
    breaker.before()  # no longer one at a time


def test_a_late_failure_of_a_call_made_before_it_opened_does_not_extend_the_cooldown(breaker, clock):
    slow = breaker.before()  # a slow call, let through while closed
    fail(breaker, 3)
    opened_at = clock.now
    clock.now += 20
    breaker.failed(slow)  # the slow call ends, failing
    clock.now = opened_at + 30.5
    breaker.before()  # the cooldown still counts from the opening


def test_a_straggler_failing_during_the_trial_neither_ends_it_nor_lets_a_second_one_through(breaker, clock):
    # Given a slow call let through while closed, then the breaker opened and its trial started
    slow = breaker.before()
    fail(breaker, 3)
    clock.now += 31
    breaker.before()  # the trial
    # When the slow call ends, failing, while the trial is still in flight
    breaker.failed(slow)
    # Then the trial is still the only call let through
    with pytest.raises(CircuitOpen):
        breaker.before()
    breaker.succeeded()
    assert breaker.state == "closed"


def test_a_trial_that_got_no_answer_frees_its_place_for_the_next_caller(breaker, clock):
    fail(breaker, 3)
    clock.now += 31
    breaker.release(breaker.before())  # e.g. interrupted, or never sent
    assert breaker.state == "half-open"
    assert breaker.before()  # the next caller is the trial


def test_an_answer_while_open_closes_it(breaker):
    breaker.before()  # a slow call, let through while closed
    fail(breaker, 3)
    breaker.succeeded()  # the system answered after all
    assert breaker.state == "closed"


@pytest.mark.parametrize(("failures", "cooldown"), [(0, 30), (3, 0), (3, -1)])
def test_a_breaker_that_could_never_close_or_open_is_refused(failures, cooldown):
    with pytest.raises(ValueError):
        Breaker(failures=failures, cooldown_s=cooldown)


def test_a_trial_that_outlived_a_later_one_neither_releases_nor_fails_it(breaker, clock):
    # Given a trial still running when a straggler's answer closed the breaker, which then
    # reopened, cooled down and started a second trial
    fail(breaker, 3)
    clock.now += 31
    old_trial = breaker.before()
    breaker.succeeded()  # a straggler's answer
    fail(breaker, 3)
    clock.now += 31
    new_trial = breaker.before()
    assert new_trial and new_trial != old_trial
    # When the old trial gets no answer, or fails
    breaker.release(old_trial)
    breaker.failed(old_trial)
    # Then the new trial is still the only call let through
    with pytest.raises(CircuitOpen):
        breaker.before()
    breaker.succeeded()
    assert breaker.state == "closed"


def test_a_stale_trial_failure_counts_like_any_other_once_closed(breaker, clock):
    fail(breaker, 3)
    clock.now += 31
    old_trial = breaker.before()
    breaker.succeeded()  # closed by another answer
    breaker.failed(old_trial)  # one failure: below the threshold of three
    assert breaker.state == "closed"
