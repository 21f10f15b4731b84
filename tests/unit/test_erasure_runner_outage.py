"""The local erasure runner waits out a database outage under the outage policy, as the state
machine does, instead of failing the erasure after the step's three quick attempts."""

from __future__ import annotations

from typing import Any

from agent_memory.domain.erasure_steps import ERASURE_STEPS, OUTAGE_RETRY, STEP_RETRY
from agent_memory.domain.errors import Unavailable
from agent_memory.services.erasure import LocalErasureRunner


class ScriptedSteps:
    """Pure logic stand-in for the service: each step raises the scripted errors, then succeeds."""

    def __init__(self, errors: dict[str, list[Exception]]) -> None:
        self.errors = errors
        self.calls: list[str] = []
        self.failed: list[tuple[str, str]] = []

    def run_step(self, tenant: str, erasure_id: str, step: str) -> dict[str, Any]:
        self.calls.append(step)
        pending = self.errors.get(step) or []
        if pending:
            raise pending.pop(0)
        return {"step": step}

    def fail(self, tenant: str, erasure_id: str, step: str, reason: str) -> None:
        self.failed.append((step, reason))


def run(errors: dict[str, list[Exception]]) -> tuple[str, ScriptedSteps, list[float]]:
    service = ScriptedSteps(errors)
    slept: list[float] = []
    runner = LocalErasureRunner(service, sleep=slept.append)  # type: ignore[arg-type]
    return runner.run({"tenant_id": "t", "erasure_id": "era_1"}), service, slept


def test_an_outage_longer_than_the_step_policy_is_waited_out_and_the_erasure_verifies():
    # Given the database unavailable for more attempts than a step's own policy allows
    failures = STEP_RETRY.max_attempts + 2
    outage = [Unavailable("database unavailable") for _ in range(failures)]
    # When the erasure runs
    result, service, slept = run({"purge_index": outage})
    # Then it waits with the outage policy's backoff and verifies once the database is back
    assert result == "verified" and service.failed == []
    assert slept[:2] == [
        OUTAGE_RETRY.interval_seconds,
        OUTAGE_RETRY.interval_seconds * OUTAGE_RETRY.backoff_rate,
    ]
    assert service.calls.count("purge_index") == failures + 1
    assert service.calls[-1] == ERASURE_STEPS[-1].name


def test_an_outage_that_never_ends_fails_the_erasure_after_the_outage_policy():
    outage = [Unavailable("down") for _ in range(OUTAGE_RETRY.max_attempts + 5)]
    result, service, _ = run({"tombstone": outage})
    assert result == "failed"
    assert service.calls.count("tombstone") == OUTAGE_RETRY.max_attempts
    assert service.failed[0][0] == "tombstone"


def test_an_ordinary_error_still_fails_after_the_steps_own_policy():
    errors = [RuntimeError("bad") for _ in range(STEP_RETRY.max_attempts)]
    result, service, _ = run({"purge_objects": errors})
    assert result == "failed" and service.calls.count("purge_objects") == STEP_RETRY.max_attempts
