"""The system-of-record circuit breaker (pure logic, a hand-driven clock)."""

import threading

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
        b.before()
        b.failed()


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
    breaker.before()  # the trial
    with pytest.raises(CircuitOpen):  # everyone else still fails fast while it runs
        breaker.before()


def test_a_failed_trial_opens_the_breaker_for_another_full_cooldown(breaker, clock):
    fail(breaker, 3)
    clock.now += 31
    breaker.before()
    breaker.failed()
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
    breaker.before()  # a slow call, let through while closed
    fail(breaker, 3)
    opened_at = clock.now
    clock.now += 20
    breaker.failed()  # the slow call ends, failing
    clock.now = opened_at + 30.5
    breaker.before()  # the cooldown still counts from the opening


def test_callers_never_wait_on_each_other(breaker):
    # Given a call in flight through the breaker (before() returned, the outcome not reported yet)
    breaker.before()
    # When another thread passes the breaker meanwhile
    done = threading.Event()
    t = threading.Thread(target=lambda: (breaker.before(), done.set()))
    t.start()
    t.join(5)
    # Then it was not held up by the first call
    assert done.is_set()


@pytest.mark.parametrize(("failures", "cooldown"), [(0, 30), (3, 0), (3, -1)])
def test_a_breaker_that_could_never_close_or_open_is_refused(failures, cooldown):
    with pytest.raises(ValueError):
        Breaker(failures=failures, cooldown_s=cooldown)
