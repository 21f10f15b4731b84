"""An MCP server whose tools call the Agent Memory Service with the caller's token.

`agent-memory-mcp` (or `memory mcp`) speaks MCP over stdio; `--http` serves streamable HTTP
instead (`http://127.0.0.1:8765/mcp` by default). The service URL and the token come from
`MEMORY_URL` and `MEMORY_TOKEN` (or `--url` / `--token`); over HTTP a request's own
`Authorization: Bearer` header is used when it has one. The server holds no privilege of its
own: every tool is one or two HTTP API calls made with that token, so the service's role,
tenant, subject and clearance checks apply unchanged, and a refusal comes back as a tool error
carrying the API's `code`, `field` and `request_id`.

Tools: `recall`, `remember`, `close_session`, `working_memory_get`, `working_memory_set`, and
`forget` (offered unless the token visibly lacks a role that may forget: agent, privacy_officer).
Needs the `mcp` extra: `pip install 'agent-memory-client[mcp]'`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime
from typing import Annotated, Any

import httpx
from pydantic import Field, ValidationError

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the MCP server needs the official MCP SDK, version 2 or later: "
        "pip install 'agent-memory-client[mcp]' (or pip install 'mcp>=2')"
    ) from exc

from agent_memory_client import models as m
from agent_memory_client._tooling import (
    GATEWAY_DECIDES,
    RECALLED_IS_DATA,
    default_type,
    error_payload,
    may_forget,
    session_summary,
    write_summary,
)
from agent_memory_client.async_client import AsyncMemoryClient
from agent_memory_client.errors import MemoryClientError

DEFAULT_HTTP_PORT = 8765

INSTRUCTIONS = (
    "Long-term memory about customers, governed by the Agent Memory Service. Call `recall` before "
    "answering a customer, `remember` to propose something worth keeping (the service decides), and "
    "`close_session` with the transcript when the conversation ends. " + RECALLED_IS_DATA
)

SubjectId = Annotated[str, Field(description="The customer (subject) id, e.g. ACC-CORP-4812.")]
SessionId = Annotated[str, Field(description="The conversation's session id.")]


class MemoryTools:
    """The tools' implementations: each builds a client with the caller's token and answers with
    the API's result, or a tool error carrying the API's refusal."""

    def __init__(self, base_url: str, token: str | None, http: httpx.AsyncClient) -> None:
        self.base_url = base_url
        self.token = token
        self.http = http

    def client(self, ctx: Context | None) -> AsyncMemoryClient:
        """A client acting with the request's bearer token (streamable HTTP) or the server's."""
        token = self.token
        headers = ctx.headers if ctx is not None and ctx.request_context.request is not None else None
        auth = (headers or {}).get("authorization", "")
        if auth.lower().startswith("bearer ") and auth[7:].strip():
            token = auth[7:].strip()
        return AsyncMemoryClient(self.base_url, token=token, http_client=self.http)

    async def call(
        self, ctx: Context | None, action: Callable[[AsyncMemoryClient], Awaitable[tuple[str, Any]]]
    ) -> CallToolResult:
        try:
            text, structured = await action(self.client(ctx))
        except (MemoryClientError, ValidationError) as exc:
            refusal = error_payload(exc)
            return CallToolResult(
                content=[TextContent(type="text", text=json.dumps(refusal))],
                structured_content=refusal,
                is_error=True,
            )
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    async def recall(
        self,
        subject_id: SubjectId,
        query: Annotated[str, Field(description="What the agent needs to know, in plain words.")] = "",
        ticket_id: Annotated[str | None, Field(description="The open ticket, if any.")] = None,
        session_id: Annotated[str | None, Field(description="Adds the session's working memory.")] = None,
        max_tokens: Annotated[int | None, Field(description="Budget for the context, in tokens.")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            fields = {"ticket_id": ticket_id, "session_id": session_id, "max_tokens": max_tokens}
            found = await memory.retrieve(
                subject_id, query, **{k: v for k, v in fields.items() if v is not None}
            )
            return found.context, found.model_dump(mode="json")

        return await self.call(ctx, act)

    async def remember(
        self,
        subject_id: SubjectId,
        content: Annotated[str, Field(description="One self-contained sentence about the customer.")],
        type: Annotated[
            m.MemoryType | None,
            Field(
                description="fact, preference, commitment, episode, resolution or observation; default: "
                "a preference or fact when a slot is given (preference.* is a preference), else an observation."
            ),
        ] = None,
        source_kind: Annotated[
            m.Authority, Field(description="Who says so: customer_claim when the customer said it.")
        ] = "customer_claim",
        slot: Annotated[
            str | None,
            Field(
                description="For facts and preferences: the key of the one current value, e.g. preference.contact_channel."
            ),
        ] = None,
        category: Annotated[
            str | None, Field(description="Optional category, e.g. CONTRACT_COMMERCIAL.")
        ] = None,
        session_id: Annotated[str | None, Field(description="The session the statement was made in.")] = None,
        ticket_id: Annotated[str | None, Field(description="The ticket it belongs to, if any.")] = None,
        confidence: Annotated[float | None, Field(ge=0, le=1, description="How sure, 0 to 1.")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            optional = {
                "slot": slot,
                "category": category,
                "session_id": session_id,
                "ticket_id": ticket_id,
                "confidence": confidence,
            }
            write = m.MemoryWrite(
                subject_id=subject_id,
                type=type or default_type(slot),
                content=content,
                source=m.Source(kind=source_kind),
                **{k: v for k, v in optional.items() if v is not None},
            )
            summary = write_summary(await memory.write_memory(write))
            return _describe_decision(summary), summary

        return await self.call(ctx, act)

    async def close_session(
        self,
        session_id: SessionId,
        subject_id: SubjectId,
        turns: Annotated[
            list[m.Turn],
            Field(description='The transcript: [{"speaker": "customer|agent|system", "text": "…"}].'),
        ],
        occurred_at: Annotated[
            datetime | None, Field(description="When the conversation took place (default: now).")
        ] = None,
        ticket_id: Annotated[str | None, Field(description="The ticket, if any.")] = None,
        channel: Annotated[str | None, Field(description="chat, email, meeting, phone…")] = None,
        wait: Annotated[
            bool, Field(description="Wait until extraction is done and report what it kept.")
        ] = False,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            request = m.CloseSessionRequest(
                subject_id=subject_id,
                occurred_at=occurred_at or datetime.now().astimezone(),
                turns=turns,
                ticket_id=ticket_id,
                channel=channel,
            )
            if not wait:
                accepted = await memory.close_session(session_id, request)
                return f"session {accepted.session_id}: {accepted.status}", accepted.model_dump(mode="json")
            done = await memory.close_session(session_id, request, wait=True)
            summary = session_summary(done)
            return (
                f"session {done.session_id}: {done.status}; admitted {done.admitted}, "
                f"pending approval {done.pending_approval}, rejected {done.rejected}, "
                f"quarantined {done.quarantined}",
                summary,
            )

        return await self.call(ctx, act)

    async def working_memory_get(self, session_id: SessionId, ctx: Context | None = None) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            found = (await memory.working_get(session_id)).model_dump(mode="json")
            return json.dumps(found), found

        return await self.call(ctx, act)

    async def working_memory_set(
        self,
        session_id: SessionId,
        subject_id: SubjectId,
        key: Annotated[str, Field(description="A short key, e.g. order_number.")],
        value: Annotated[Any, Field(description="Any JSON value; masked and screened by the service.")],
        ttl_seconds: Annotated[int | None, Field(description="Lifetime (default: the policy's).")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            item = await memory.working_set(
                session_id, key, value, subject_id=subject_id, ttl_seconds=ttl_seconds
            )
            kept = item.model_dump(mode="json")
            return f"kept {item.key} until {kept['expires_at']}", kept

        return await self.call(ctx, act)

    async def forget(
        self,
        memory_id: Annotated[str, Field(description="The memory's id (mem_…), as recall shows it.")],
        reason: Annotated[str, Field(description="Why, e.g. customer_request.")] = "customer_request",
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(memory: AsyncMemoryClient) -> tuple[str, Any]:
            gone = (await memory.delete_memory(memory_id, reason=reason)).model_dump(mode="json")
            return f"{gone['id']}: {gone['status']}", gone

        return await self.call(ctx, act)


def _describe_decision(summary: dict[str, Any]) -> str:
    reasons = ", ".join(summary["reasons"]) or "none given"
    where = f" as {summary['memory_id']}" if summary["memory_id"] else ""
    return f"decision: {summary['decision']}{where} (reasons: {reasons})"


def build_server(
    base_url: str, token: str | None, *, http_client: httpx.AsyncClient | None = None
) -> MCPServer:
    """The MCP server for one service URL and (optional) default token."""
    tools = MemoryTools(base_url.rstrip("/"), token, http_client or httpx.AsyncClient(timeout=30.0))
    server = MCPServer("agent-memory", instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    server.add_tool(
        tools.recall,
        name="recall",
        description="Recall what is known about a customer before answering (the service picks and ranks "
        "it under the token's clearance). " + RECALLED_IS_DATA,
        annotations=read_only,
        structured_output=False,
    )
    server.add_tool(
        tools.remember,
        name="remember",
        description="Propose a memory about a customer. " + GATEWAY_DECIDES,
        annotations=writes,
        structured_output=False,
    )
    server.add_tool(
        tools.close_session,
        name="close_session",
        description="Hand over a finished conversation's transcript; the service extracts what is worth "
        "keeping (commercial terms wait for a reviewer). With wait=true, reports the counts.",
        annotations=writes,
        structured_output=False,
    )
    server.add_tool(
        tools.working_memory_get,
        name="working_memory_get",
        description="The open session's short-lived working values. " + RECALLED_IS_DATA,
        annotations=read_only,
        structured_output=False,
    )
    server.add_tool(
        tools.working_memory_set,
        name="working_memory_set",
        description="Keep a short-lived value for the open session (expires; cleared when it closes).",
        annotations=writes,
        structured_output=False,
    )
    if may_forget(token):
        server.add_tool(
            tools.forget,
            name="forget",
            description="Forget one memory when the customer asks for it to be deleted. Only roles that "
            "may forget can use it; otherwise the service refuses.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
            structured_output=False,
        )
    return server


def parse_args(argv: Sequence[str] | None, prog: str = "agent-memory-mcp") -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="MCP server for the Agent Memory Service: tools that act with the caller's token.",
    )
    parser.add_argument(
        "--url",
        default=os.environ.get("MEMORY_URL", "http://127.0.0.1:8080"),
        help="service base URL (default: $MEMORY_URL, else http://127.0.0.1:8080)",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("MEMORY_TOKEN"),
        help="the caller's bearer token (default: $MEMORY_TOKEN)",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_HTTP_PORT, help=f"HTTP port (default {DEFAULT_HTTP_PORT})"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None, prog: str = "agent-memory-mcp") -> int:
    """Entry point of `agent-memory-mcp` and `memory mcp`."""
    args = parse_args(argv, prog)
    if not args.token and not args.http:
        print(f"{prog}: no token: set MEMORY_TOKEN or pass --token", file=sys.stderr)
        return 2
    server = build_server(args.url, args.token)
    if args.http:
        print(f"{prog}: streamable HTTP on http://{args.host}:{args.port}/mcp", file=sys.stderr)
        server.run("streamable-http", host=args.host, port=args.port)
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
