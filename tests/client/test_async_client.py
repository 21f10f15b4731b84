"""AsyncMemoryClient against the real local HTTP front."""

from __future__ import annotations

import asyncio

import pytest
from agent_memory_client import AsyncMemoryClient, Forbidden, models

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

SUBJECT = "dana@example.com"


def test_the_async_client_writes_retrieves_pages_and_waits_for_a_session(api, local_aws, unknown_fields):
    agent_token = api.token("async-tests", "agent-1", ["agent"], clearance="confidential")
    integration_token = api.token("async-tests", "int-1", ["integration"], clearance="confidential")
    poller = QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")

    async def main():
        async with (
            AsyncMemoryClient(api.base, token=agent_token) as agent,
            AsyncMemoryClient(api.base, token=integration_token) as integration,
        ):
            # Given three facts written concurrently
            writes = await asyncio.gather(
                *(
                    integration.write_memory(
                        subject_id=SUBJECT,
                        type="fact",
                        category="ACCOUNT_PROFILE",
                        slot=f"account.region_{i}",
                        content=f"Region {i} runs the self-hosted deployment.",
                        source={"kind": "system_of_record", "system": "crm", "reference": f"R-{i}"},
                    )
                    for i in range(3)
                )
            )
            # When the agent pages through them, retrieves, and closes a session waiting for it
            listed = [r.id async for r in agent.iter_memories(SUBJECT, page_size=2)]
            found = await agent.retrieve(SUBJECT, "which regions are self-hosted?")
            status = await agent.close_session(
                "async-sess-1",
                subject_id=SUBJECT,
                occurred_at="2026-10-02T15:00:00Z",
                turns=[{"speaker": "customer", "text": "I prefer email communication."}],
                wait=True,
                timeout=120,
                poll_interval=0.2,
            )
            denied: Forbidden | None = None
            try:
                await agent.approve(writes[0].memory.id)
            except Forbidden as refused:
                denied = refused
            return writes, listed, found, status, denied

    poller.start()
    try:
        writes, listed, found, status, denied = asyncio.run(main())
    finally:
        poller.stop()
    # Then every write was admitted and listed once, retrieval found them, the session was processed
    ids = {w.memory.id for w in writes}
    assert [w.decision for w in writes] == ["admitted"] * 3
    assert sorted(listed) == sorted(ids)
    assert ids & {mem.id for mem in found.memories} and unknown_fields(found) == []
    assert isinstance(status, models.SessionStatus) and status.status == "processed"
    # and an agent's approval was refused with the service's code
    assert denied is not None
    assert denied.code == "unauthorized_memory_mutation" and denied.status == 403
