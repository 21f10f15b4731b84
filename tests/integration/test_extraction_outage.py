"""A database outage during extraction is a retry, never a failed session: the message is
redelivered and the session stays queued, even on the last receive."""

from typing import Any

import pytest

from agent_memory.domain.enums import Role
from agent_memory.domain.errors import Unavailable
from agent_memory.domain.records import Principal
from agent_memory.services.extraction import ExtractionWorker
from agent_memory.services.sessions import CloseSessionRequest

pytestmark = pytest.mark.integration

TENANT = "t-outage"


class OutageWhileExtracting:
    """An extractor whose run ends as the write gateway's would when the database goes away."""

    name, version = "stub", "1"

    def extract(self, transcript: Any) -> Any:
        raise Unavailable("the database is unavailable; retry shortly")


def test_an_outage_on_the_last_receive_leaves_the_session_queued_for_redelivery(container):
    # Given a closed session, and a worker on its last allowed receive
    agent = Principal(sub="a", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
    request = {
        "subject_id": "CUST-OUT",
        "occurred_at": "2026-10-02T00:00:00Z",
        "turns": [{"speaker": "customer", "text": "Please call me on Tuesdays."}],
    }
    container.sessions.close(agent, "s-out", CloseSessionRequest.model_validate(request))
    worker = ExtractionWorker(
        container.store, container.objects, OutageWhileExtracting(), container.gateway, max_receive_count=3
    )
    # When the database is unavailable during that attempt
    with pytest.raises(Unavailable):
        worker.process({"tenant_id": TENANT, "session_id": "s-out"}, receive_count=3)
    # Then the session is queued again, not failed, and carries no failure reason
    with container.store.tenant(TENANT) as s:
        row = s.get_session("s-out")
    assert row is not None
    assert (row["status"], row["failure_reason"]) == ("queued", None)
