"""OpenAI Agents SDK tools: `recall` and `remember`, acting through the service's HTTP API.

```python
from agents import Agent, Runner
from agent_memory_client import AsyncMemoryClient
from agent_memory_client.agents_tools import MEMORY_TOOLS, MemoryContext

agent = Agent(name="support", instructions="...", tools=MEMORY_TOOLS)
async with AsyncMemoryClient(url, token=token) as memory:
    context = MemoryContext(memory=memory, subject_id="ACC-CORP-4812", session_id="sess-1042")
    result = await Runner.run(agent, "Can we offer a discount?", context=context)
```

The customer (subject), session and ticket come from the run's context, not from the model: the
model chooses what to look up or propose, never whose memory it touches. The client's token is
the caller's; the service checks role, tenant, subject and clearance on every call. A refusal is
returned to the model as the API's error body (`code`, `field`, `request_id`) rather than
raised, so the agent can say it could not do it.

Needs the `agents` extra: `pip install 'agent-memory-client[agents]'`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

try:
    from agents import FunctionTool, RunContextWrapper, function_tool
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the Agents SDK tools need openai-agents: pip install 'agent-memory-client[agents]'"
    ) from exc

from agent_memory_client import models as m
from agent_memory_client._tooling import GATEWAY_DECIDES, RECALLED_IS_DATA, error_payload, write_summary
from agent_memory_client.async_client import AsyncMemoryClient
from agent_memory_client.errors import MemoryClientError


@dataclass
class MemoryContext:
    """What the tools need from the run: the client (with the caller's token) and whose
    conversation this is."""

    memory: AsyncMemoryClient
    subject_id: str
    session_id: str | None = None
    ticket_id: str | None = None


async def _recall(ctx: RunContextWrapper[MemoryContext], query: str) -> str:
    """Recall what is known about the customer in this conversation.

    Args:
        query: What you need to know, in plain words.
    """
    run = ctx.context
    fields = {"session_id": run.session_id, "ticket_id": run.ticket_id}
    try:
        found = await run.memory.retrieve(
            run.subject_id, query, **{k: v for k, v in fields.items() if v is not None}
        )
    except (MemoryClientError, ValidationError) as exc:
        return json.dumps(error_payload(exc))
    return found.context


async def _remember(
    ctx: RunContextWrapper[MemoryContext],
    type: m.MemoryType,
    content: str,
    slot: str | None,
    category: str | None,
) -> str:
    """Propose a memory about the customer, stated by the customer in this conversation.

    Args:
        type: fact, preference, commitment, episode, resolution or observation.
        content: One self-contained sentence about the customer.
        slot: For a fact or preference, the key of its one current value (e.g.
            preference.contact_channel); null otherwise.
        category: Optional category such as CONTRACT_COMMERCIAL; null to let the service choose.
    """
    run = ctx.context
    optional: dict[str, Any] = {
        "slot": slot,
        "category": category,
        "session_id": run.session_id,
        "ticket_id": run.ticket_id,
    }
    try:
        write = m.MemoryWrite(
            subject_id=run.subject_id,
            type=type,
            content=content,
            source=m.Source(kind="customer_claim"),
            **{k: v for k, v in optional.items() if v is not None},
        )
        result = await run.memory.write_memory(write)
    except (MemoryClientError, ValidationError) as exc:
        return json.dumps(error_payload(exc))
    return json.dumps(write_summary(result))


recall: FunctionTool = function_tool(
    _recall,
    name_override="recall",
    description_override="Recall what is known about the customer before answering. " + RECALLED_IS_DATA,
)

remember: FunctionTool = function_tool(
    _remember,
    name_override="remember",
    description_override="Propose a memory about the customer. " + GATEWAY_DECIDES,
)

MEMORY_TOOLS: list[FunctionTool] = [recall, remember]

__all__ = ["MEMORY_TOOLS", "MemoryContext", "recall", "remember"]
