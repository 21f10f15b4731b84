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

The customer (subject), session, ticket and the source a note claims come from the run's context,
not from the model: the model chooses what to look up or note, never whose memory it touches nor
with what authority (a note is what an agent reports: `customer_claim` unless the context says
`agent_inference`; without a type or slot the service classifies it). The client's token is the
caller's (bind it to the customer: `memory token ... --subjects ID`); the service checks role,
tenant, subject and clearance on every call. `remember` answers the gateway's decision with its
reasons and a sentence the model can relay; `recall` says why when nothing came back. A refusal is
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
from agent_memory_client._tooling import (
    GATEWAY_DECIDES,
    RECALLED_IS_DATA,
    agent_source_kind,
    error_payload,
    recall_text,
    write_summary,
)
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
    # the source a typed note claims: what an agent reports (customer_claim or agent_inference)
    source_kind: str | None = None

    def __post_init__(self) -> None:
        if self.source_kind is not None:
            agent_source_kind(self.source_kind)  # never a source a model could not vouch for


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
    return recall_text(found)


async def _remember(
    ctx: RunContextWrapper[MemoryContext],
    content: str,
    type: m.MemoryType | None = None,
    slot: str | None = None,
    category: str | None = None,
) -> str:
    """Note something about the customer of this conversation, in one sentence.

    Args:
        content: One self-contained sentence about the customer.
        type: Optional: fact, preference, commitment, episode, resolution or observation; null to
            let the service classify the sentence.
        slot: Optional: for a fact or preference, the key of its one current value (e.g.
            preference.contact_channel); null otherwise.
        category: Optional category such as CONTRACT_COMMERCIAL; null to let the service choose.
    """
    run = ctx.context
    typed = type is not None or slot is not None or category is not None
    hints: dict[str, Any] = {"type": type, "slot": slot, "category": category}
    if typed or run.source_kind is not None:  # a typed write carries the context's ticket and source
        hints["ticket_id"] = run.ticket_id
        hints["source"] = m.Source(kind=agent_source_kind(run.source_kind))
    try:
        result = await run.memory.remember(run.subject_id, content, session_id=run.session_id, **hints)
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
    description_override="Note something about the customer in one sentence. " + GATEWAY_DECIDES,
)

MEMORY_TOOLS: list[FunctionTool] = [recall, remember]

__all__ = ["MEMORY_TOOLS", "MemoryContext", "recall", "remember"]
