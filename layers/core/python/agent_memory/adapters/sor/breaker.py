"""A circuit breaker for the system of record: during an outage, retrievals stop waiting for it.

Without one, every retrieval that needs a live value waits a full timeout while the system of
record is down, and each of those waits holds a worker. With one, after `failures` outages in a
row the breaker opens and calls fail at once (the retrieval answers from memory and says
`live_unavailable` or `ticket_unavailable`); after `cooldown_s` a single trial call is let
through, and its outcome closes or re-opens the breaker. Concurrent callers never wait for one
another: the lock guards only the state, never the call.

Hand-written rather than pybreaker: pybreaker 1.4 holds its lock for the whole guarded call, so
every call to the system of record would run one at a time behind it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from agent_memory.observability import logger
from agent_memory.ports.system_of_record import SystemOfRecordUnavailable


class CircuitOpen(SystemOfRecordUnavailable):
    """The system of record was not asked: it failed recently and is cooling down."""


DEFAULT_FAILURES = 5  # the composition root passes Settings.sor_breaker_failures
DEFAULT_COOLDOWN_S = 30.0  # the composition root passes Settings.sor_breaker_cooldown_s


class Breaker:
    def __init__(
        self,
        failures: int = DEFAULT_FAILURES,
        cooldown_s: float = DEFAULT_COOLDOWN_S,
        clock: Callable[[], float] = time.monotonic,
    ):
        if failures < 1 or cooldown_s <= 0:
            raise ValueError("a breaker needs failures >= 1 and a positive cooldown")
        self.failures = failures
        self.cooldown_s = cooldown_s
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive = 0
        self._opened_at: float | None = None  # None: closed
        self._trial = 0  # the half-open trial call in flight (its number), or 0
        self._trials = 0

    @property
    def state(self) -> str:
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "half-open" if self._clock() - self._opened_at >= self.cooldown_s else "open"

    def before(self) -> int:
        """Raise CircuitOpen unless this call may go to the system of record. Returns the call's
        trial number when it is the half-open trial, else 0. Whatever happens to the call, its
        outcome must be reported: succeeded(), failed(trial), or release(trial) when it got no
        answer either way. failed() and release() honour a number only while its trial is the
        current one, so a trial that outlived a later one can neither fail nor free it;
        succeeded() closes the breaker whoever answered (any answer shows the system is up)."""
        with self._lock:
            if self._opened_at is None:
                return 0
            if self._clock() - self._opened_at >= self.cooldown_s and not self._trial:
                self._trials += 1
                self._trial = self._trials  # this caller is the trial; the others still fail fast
                return self._trial
        raise CircuitOpen("circuit open: the system of record failed recently")

    def succeeded(self) -> None:
        """The system of record answered (an answer of any kind is evidence it is up)."""
        with self._lock:
            reopened = self._opened_at is not None
            self._consecutive = 0
            self._opened_at = None
            self._trial = 0
        if reopened:
            logger.info("system of record answers again; circuit closed")

    def failed(self, trial: int = 0) -> None:
        """An outage. Only the current trial's, or one while closed, counts: a straggler let
        through earlier says nothing about the system of record now."""
        with self._lock:
            current = bool(trial) and trial == self._trial
            if current:
                self._trial = 0
            elif self._opened_at is not None:
                return
            self._consecutive += 1
            if not current and self._consecutive < self.failures:
                return
            self._opened_at = self._clock()
            consecutive = self._consecutive
        logger.warning(
            "system of record failing; circuit opened",
            extra={"consecutive_failures": consecutive, "cooldown_s": self.cooldown_s},
        )

    def release(self, trial: int) -> None:
        """The call got no answer and no outage either (never sent, interrupted): nothing learned,
        but the current trial frees its place for the next caller."""
        with self._lock:
            if trial and trial == self._trial:
                self._trial = 0
