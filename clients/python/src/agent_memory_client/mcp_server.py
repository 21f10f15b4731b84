"""An MCP server whose tools call the Agent Memory Service with the caller's token.

`agent-memory-mcp` (or `memory mcp`) speaks MCP over stdio; `--http` serves streamable HTTP
instead (`http://127.0.0.1:8765/mcp` by default). The service URL and the token come from
`MEMORY_URL` and `MEMORY_TOKEN` (or `--url` / `--token`); over HTTP every request brings its own
`Authorization: Bearer` token (a request without one is a 401: the server's own token is never
lent to a caller). The server holds no privilege of its own: every tool is one or two HTTP API
calls made with that token, so the service's role, tenant, subject and clearance checks apply
unchanged, and a refusal comes back as a tool error carrying the API's `code`, `field` and
`request_id`.

Whose memory the tools touch, which session they belong to and which source a note claims are
the server's configuration and the token's, never a tool argument: the subject is `MEMORY_SUBJECT`
(`--subject`) or the token's one bound subject (its `subjects` claim), the session
`MEMORY_SESSION` (`--session`, else one per conversation), the source kind `MEMORY_SOURCE_KIND`
(`--source-kind`: what an agent reports, `customer_claim` or `agent_inference`; unset, the service
classifies the note). A prompt injection can make a model call `remember` or `forget`; it cannot
make it write as the system of record, or reach another customer. The server refuses to start
with a token bound to no subject unless `--allow-unbound-token` says so.

Tools: `recall`, `remember`, `close_session`, `working_memory_get`, `working_memory_set`, and
`forget` (offered unless the token visibly lacks a role that may forget: agent, privacy_officer).
Needs the `mcp` extra: `pip install 'agent-memory-client[mcp]'`.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

import httpx
from pydantic import Field, ValidationError

try:
    from mcp.server.mcpserver import Context, MCPServer
    from mcp.types import CallToolResult, TextContent, ToolAnnotations
    from starlette.responses import JSONResponse
    from starlette.types import ASGIApp, Receive, Scope, Send
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the MCP server needs the official MCP SDK, version 2 or later: "
        "pip install 'agent-memory-client[mcp]' (or pip install 'mcp>=2')"
    ) from exc

from agent_memory_client import models as m
from agent_memory_client._core import env_settings
from agent_memory_client._tooling import (
    AGENT_SOURCE_KINDS,
    GATEWAY_DECIDES,
    RECALLED_IS_DATA,
    Unscoped,
    bound_subject,
    describe_decision,
    error_payload,
    may_forget,
    recall_summary,
    recall_text,
    session_summary,
    token_subjects,
    unscoped_payload,
    write_summary,
)
from agent_memory_client.async_client import AsyncMemoryClient
from agent_memory_client.errors import MemoryClientError, NotFound

DEFAULT_HTTP_PORT = 8765
MAX_CONVERSATIONS = 10_000  # sessions remembered per server (over HTTP, one per MCP session)

INSTRUCTIONS = (
    "Long-term memory about the customer of this conversation, governed by the Agent Memory "
    "Service. Call `recall` before answering, `remember` to note something worth keeping in one "
    "sentence (the service decides, and says what it decided), and `close_session` with the "
    "transcript when the conversation ends. " + RECALLED_IS_DATA
)

UNBOUND_TOKEN = (
    "the token is not bound to subjects, so a prompt injection could make the model read, write or "
    "forget any customer's memory: mint one with `memory token ... --subjects ID`, or pass "
    "--allow-unbound-token with --subject"
)


@dataclass(frozen=True)
class Binding:
    """What the tools act on, from the server's configuration (never from a tool's arguments):
    the subject (else the token's one bound subject), the session (else one per conversation),
    the source kind a note claims (else the service's classification), and whether a token bound to
    no subject is accepted."""

    subject: str | None = None
    session: str | None = None
    source_kind: str | None = None
    allow_unbound: bool = False


@dataclass(frozen=True)
class Acting:
    """One call's client and scope: the token's client, the subject and the session."""

    memory: AsyncMemoryClient
    subject: str
    session: str


class MemoryTools:
    """The tools' implementations: each builds a client with the caller's token, acts on the
    configured (or token-bound) subject, and answers with the API's result, or a tool error
    carrying the API's refusal."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        http: httpx.AsyncClient,
        binding: Binding | None = None,
        *,
        over_http: bool = False,
    ) -> None:
        self.base_url = base_url
        self.token = token
        self.http = http
        self.binding = binding or Binding()
        self.over_http = over_http
        self._sessions: dict[tuple[str, str], str] = {}

    def caller_token(self, ctx: Context | None) -> str | None:
        """Over HTTP the request's bearer token (the middleware refused requests without one);
        over stdio the server's."""
        if not self.over_http:
            return self.token
        headers = ctx.headers if ctx is not None and ctx.request_context.request is not None else None
        auth = (headers or {}).get("authorization", "")
        return auth[7:].strip() if auth.lower().startswith("bearer ") and auth[7:].strip() else None

    def _conversation(self, ctx: Context | None) -> str:
        headers = ctx.headers if ctx is not None and ctx.request_context.request is not None else None
        return (headers or {}).get("mcp-session-id", "") if self.over_http else "stdio"

    def session_of(self, ctx: Context | None, subject: str) -> str:
        """The configured session, else one per conversation and subject (a new one after close)."""
        if self.binding.session:
            return self.binding.session
        key = (self._conversation(ctx), subject)
        if key not in self._sessions and len(self._sessions) >= MAX_CONVERSATIONS:
            del self._sessions[next(iter(self._sessions))]  # the oldest conversation's
        return self._sessions.setdefault(key, f"mcp-{uuid.uuid4().hex}")

    def next_session(self, ctx: Context | None, subject: str) -> None:
        """After a close, the conversation's next notes go to a new session."""
        if not self.binding.session:
            self._sessions.pop((self._conversation(ctx), subject), None)

    def acting(self, ctx: Context | None) -> Acting:
        token = self.caller_token(ctx)
        subject = bound_subject(self.binding.subject, token, allow_unbound=self.binding.allow_unbound)
        memory = AsyncMemoryClient(self.base_url, token=token, http_client=self.http)
        return Acting(memory, subject, self.session_of(ctx, subject))

    async def call(
        self, ctx: Context | None, action: Callable[[Acting], Awaitable[tuple[str, Any]]]
    ) -> CallToolResult:
        try:
            text, structured = await action(self.acting(ctx))
        except Unscoped as exc:
            return _refusal(unscoped_payload(exc))
        except (MemoryClientError, ValidationError) as exc:
            return _refusal(error_payload(exc))
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=structured)

    async def recall(
        self,
        query: Annotated[str, Field(description="What the agent needs to know, in plain words.")] = "",
        ticket_id: Annotated[str | None, Field(description="The open ticket, if any.")] = None,
        max_tokens: Annotated[int | None, Field(description="Budget for the context, in tokens.")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(on: Acting) -> tuple[str, Any]:
            fields = {"ticket_id": ticket_id, "max_tokens": max_tokens, "session_id": on.session}
            found = await on.memory.retrieve(
                on.subject, query, **{k: v for k, v in fields.items() if v is not None}
            )
            return recall_text(found), recall_summary(found)

        return await self.call(ctx, act)

    async def remember(
        self,
        content: Annotated[str, Field(description="One self-contained sentence about the customer.")],
        type: Annotated[
            m.MemoryType | None,
            Field(
                description="Optional: fact, preference, commitment, episode, resolution or observation; "
                "leave it out and the service classifies the sentence."
            ),
        ] = None,
        slot: Annotated[
            str | None,
            Field(description="Optional: the key of a fact's or preference's one current value."),
        ] = None,
        category: Annotated[str | None, Field(description="Optional category of a fact.")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(on: Acting) -> tuple[str, Any]:
            kind = self.binding.source_kind
            hints = {"type": type, "slot": slot, "category": category}
            result = await on.memory.remember(
                on.subject,
                content,
                session_id=on.session,
                source=m.Source(kind=kind) if kind else None,
                **hints,
            )
            summary = write_summary(result)
            return describe_decision(summary), summary

        return await self.call(ctx, act)

    async def close_session(
        self,
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
        async def act(on: Acting) -> tuple[str, Any]:
            request = m.CloseSessionRequest(
                subject_id=on.subject,
                occurred_at=occurred_at or datetime.now().astimezone(),
                turns=turns,
                ticket_id=ticket_id,
                channel=channel,
            )
            if not wait:
                accepted = await on.memory.close_session(on.session, request)
                self.next_session(ctx, on.subject)
                return f"session {accepted.session_id}: {accepted.status}", accepted.model_dump(mode="json")
            done = await on.memory.close_session(on.session, request, wait=True)
            self.next_session(ctx, on.subject)
            summary = session_summary(done)
            return (
                f"session {done.session_id}: {done.status}; admitted {done.admitted}, "
                f"pending approval {done.pending_approval}, rejected {done.rejected}, "
                f"quarantined {done.quarantined}",
                summary,
            )

        return await self.call(ctx, act)

    async def working_memory_get(self, ctx: Context | None = None) -> CallToolResult:
        async def act(on: Acting) -> tuple[str, Any]:
            found = (await on.memory.working_get(on.session)).model_dump(mode="json")
            return json.dumps(found), found

        return await self.call(ctx, act)

    async def working_memory_set(
        self,
        key: Annotated[str, Field(description="A short key, e.g. order_number.")],
        value: Annotated[Any, Field(description="Any JSON value; masked and screened by the service.")],
        ttl_seconds: Annotated[int | None, Field(description="Lifetime (default: the policy's).")] = None,
        ctx: Context | None = None,
    ) -> CallToolResult:
        async def act(on: Acting) -> tuple[str, Any]:
            item = await on.memory.working_set(
                on.session, key, value, subject_id=on.subject, ttl_seconds=ttl_seconds
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
        async def act(on: Acting) -> tuple[str, Any]:
            # Only this conversation's customer: another subject's memory answers as an unknown id.
            record = await on.memory.get_memory(memory_id)
            if record.subject_id != on.subject:
                raise NotFound(
                    404, "not_found", f"memory {memory_id} not found", request_id=str(uuid.uuid4())
                )
            gone = (await on.memory.delete_memory(memory_id, reason=reason)).model_dump(mode="json")
            return f"{gone['id']}: {gone['status']}", gone

        return await self.call(ctx, act)


def _refusal(payload: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload))],
        structured_content=payload,
        is_error=True,
    )


def build_server(
    base_url: str,
    token: str | None,
    *,
    http_client: httpx.AsyncClient | None = None,
    binding: Binding | None = None,
    over_http: bool = False,
) -> MCPServer:
    """The MCP server for one service URL: over stdio acting with `token`, over HTTP with each
    request's own; on the subject, session and source kind of `binding` (and the token's)."""
    tools = MemoryTools(
        base_url.rstrip("/"),
        None if over_http else token,
        http_client or httpx.AsyncClient(timeout=30.0),
        binding,
        over_http=over_http,
    )
    server = MCPServer("agent-memory", instructions=INSTRUCTIONS)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    writes = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
    server.add_tool(
        tools.recall,
        name="recall",
        description="Recall what is known about this conversation's customer before answering (the "
        "service picks and ranks it under the token's clearance; when nothing comes back, the answer "
        "says why). " + RECALLED_IS_DATA,
        annotations=read_only,
        structured_output=False,
    )
    server.add_tool(
        tools.remember,
        name="remember",
        description="Note something about this conversation's customer, in one sentence. " + GATEWAY_DECIDES,
        annotations=writes,
        structured_output=False,
    )
    server.add_tool(
        tools.close_session,
        name="close_session",
        description="Hand over this conversation's transcript when it ends; the service extracts what "
        "is worth keeping (commercial terms wait for a reviewer). With wait=true, reports the counts.",
        annotations=writes,
        structured_output=False,
    )
    server.add_tool(
        tools.working_memory_get,
        name="working_memory_get",
        description="This conversation's short-lived working values. " + RECALLED_IS_DATA,
        annotations=read_only,
        structured_output=False,
    )
    server.add_tool(
        tools.working_memory_set,
        name="working_memory_set",
        description="Keep a short-lived value for this conversation (expires; cleared when it closes).",
        annotations=writes,
        structured_output=False,
    )
    if may_forget(token):
        server.add_tool(
            tools.forget,
            name="forget",
            description="Forget one of this customer's memories when the customer asks for it to be "
            "deleted. Only roles that may forget can use it; otherwise the service refuses.",
            annotations=ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False),
            structured_output=False,
        )
    return server


class RequireCallerToken:
    """ASGI middleware of the HTTP transport: a request without its own `Authorization: Bearer`
    token is a 401 (the server lends no token), and one whose token is bound to no subject a 403
    unless unbound tokens were allowed."""

    def __init__(self, app: ASGIApp, *, allow_unbound: bool = False) -> None:
        self.app = app
        self.allow_unbound = allow_unbound

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        token = auth[7:].strip() if auth.lower().startswith("bearer ") else ""
        if not token:
            refusal = JSONResponse(
                {
                    "error": {
                        "code": "unauthenticated",
                        "message": "each request brings its own Authorization: Bearer token",
                    }
                },
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="agent-memory-mcp"'},
            )
            await refusal(scope, receive, send)
            return
        if not self.allow_unbound and token_subjects(token) is None:
            refusal = JSONResponse(
                {"error": {"code": "forbidden", "message": UNBOUND_TOKEN}}, status_code=403
            )
            await refusal(scope, receive, send)
            return
        await self.app(scope, receive, send)


def parse_args(argv: Sequence[str] | None, prog: str = "agent-memory-mcp") -> argparse.Namespace:
    url, token = env_settings()
    parser = argparse.ArgumentParser(
        prog=prog,
        description="MCP server for the Agent Memory Service: tools that act with the caller's token, "
        "on one customer the configuration or the token names.",
    )
    parser.add_argument(
        "--url", default=url, help="service base URL (default: $MEMORY_URL, else %(default)s)"
    )
    parser.add_argument("--token", default=token, help="the caller's bearer token (default: $MEMORY_TOKEN)")
    parser.add_argument(
        "--subject",
        default=os.environ.get("MEMORY_SUBJECT") or None,
        help="the customer the tools act on (default: $MEMORY_SUBJECT, else the token's one bound subject)",
    )
    parser.add_argument(
        "--session",
        default=os.environ.get("MEMORY_SESSION") or None,
        help="the session notes and working values belong to (default: $MEMORY_SESSION, else one per "
        "conversation)",
    )
    parser.add_argument(
        "--source-kind",
        default=os.environ.get("MEMORY_SOURCE_KIND") or None,
        choices=AGENT_SOURCE_KINDS,
        help="the source a note claims (default: $MEMORY_SOURCE_KIND, else the service classifies it)",
    )
    parser.add_argument(
        "--allow-unbound-token",
        action="store_true",
        default=os.environ.get("MEMORY_ALLOW_UNBOUND_TOKEN", "").lower() in ("1", "true", "yes"),
        help="accept a token bound to no subject (then --subject names the customer)",
    )
    parser.add_argument("--http", action="store_true", help="serve streamable HTTP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP host (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_HTTP_PORT, help=f"HTTP port (default {DEFAULT_HTTP_PORT})"
    )
    return parser.parse_args(argv)


def startup_problem(args: argparse.Namespace) -> str | None:
    """Why the server must not start with this configuration (one line), or None."""
    if args.http:
        return None  # every request brings its own token, checked as it comes
    if not args.token:
        return "no token: set MEMORY_TOKEN or pass --token"
    subjects = token_subjects(args.token)
    if subjects is None and not args.allow_unbound_token:
        return UNBOUND_TOKEN
    if subjects is not None and args.subject and args.subject not in subjects:
        return "--subject names a customer the token is not bound to"
    return None


def main(argv: Sequence[str] | None = None, prog: str = "agent-memory-mcp") -> int:
    """Entry point of `agent-memory-mcp` and `memory mcp`."""
    args = parse_args(argv, prog)
    problem = startup_problem(args)
    if problem:
        print(f"{prog}: {problem}", file=sys.stderr)
        return 2
    # request lines name paths (memory ids): the service's audit trail is the record, not this log
    logging.getLogger("httpx").setLevel(logging.WARNING)
    binding = Binding(args.subject, args.session, args.source_kind, args.allow_unbound_token)
    server = build_server(args.url, args.token, binding=binding, over_http=args.http)
    if args.http:
        import uvicorn

        if args.token:
            print(
                f"{prog}: over HTTP each request brings its own token; MEMORY_TOKEN is not used",
                file=sys.stderr,
            )
        print(f"{prog}: streamable HTTP on http://{args.host}:{args.port}/mcp", file=sys.stderr)
        app = RequireCallerToken(
            server.streamable_http_app(host=args.host), allow_unbound=args.allow_unbound_token
        )
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    else:
        server.run("stdio")
    return 0


if __name__ == "__main__":
    sys.exit(main())
