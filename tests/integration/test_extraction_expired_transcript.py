"""The extraction worker when a queued session's transcript was already removed by its retention."""

from typing import Any

import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.extraction import ExtractionResult
from agent_memory.domain.records import Principal
from agent_memory.services.extraction import ExtractionWorker
from agent_memory.services.sessions import CloseSessionRequest

pytestmark = pytest.mark.integration

TENANT = "t-expired-transcript"


class NeverCalled:
    name, version = "stub", "1"

    def __init__(self) -> None:
        self.calls = 0

    def extract(self, transcript: Any) -> ExtractionResult:
        self.calls += 1
        return ExtractionResult(candidates=[])


def test_a_session_whose_transcript_key_was_cleared_fails_at_once_as_missing(container):
    # Given a closed session whose transcript retention ended before it was extracted
    agent = Principal(sub="a", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
    request = {
        "subject_id": "CUST-EXP",
        "occurred_at": "2026-10-02T00:00:00Z",
        "turns": [{"speaker": "customer", "text": "Hello there, please email me."}],
    }
    container.sessions.close(agent, "s-exp", CloseSessionRequest.model_validate(request))
    with container.store.tenant(TENANT) as s:
        s.clear_transcript_keys(["s-exp"])
    extractor = NeverCalled()
    worker = ExtractionWorker(
        container.store, container.objects, extractor, container.gateway, max_receive_count=5
    )
    # When its message is delivered for the first time
    outcome = worker.process({"tenant_id": TENANT, "session_id": "s-exp"}, receive_count=1)
    # Then the session fails permanently, saying its transcript is gone, without asking for redelivery
    assert outcome == {"status": "failed", "reason": "transcript object missing (expired or erased)"}
    assert extractor.calls == 0
    with container.store.tenant(TENANT) as s:
        row = s.get_session("s-exp")
    assert row is not None
    assert row["status"] == "failed"
    assert row["failure_reason"] == "transcript object missing (expired or erased)"
