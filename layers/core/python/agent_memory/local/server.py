"""`memory serve`: a local HTTP front that behaves like API Gateway.

Each request is matched against the function table, its bearer token checked
(as the Lambda authorizer would), turned into an API Gateway REST proxy event
and handed to the same `lambda_handler` that runs in AWS.
"""

from __future__ import annotations

import json
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from agent_memory.api.http import RETRY_AFTER_S, error_body
from agent_memory.api.identity import (
    IdentityProviderUnavailable,
    SecretVerifier,
    TokenRefused,
    TokenVerifier,
    authorizer_context,
    refused_context,
    require_strong_secret,
)
from agent_memory.console.site import ConsoleSite, is_loopback
from agent_memory.domain.errors import Unauthenticated
from agent_memory.functions_spec import FUNCTIONS, FunctionSpec, Route, load_handler_module, match_route
from agent_memory.local.lambda_context import LocalLambdaContext
from agent_memory.observability import logger

# What the front answers: status, headers, body.
_Answer = tuple[int, dict[str, str], bytes]


def api_gateway_event(
    *,
    method: str,
    path: str,
    route: Route,
    path_params: dict[str, str],
    query: dict[str, list[str]],
    headers: dict[str, str],
    body: str | None,
    authorizer: dict[str, str] | None,
) -> dict[str, Any]:
    request_id = str(uuid.uuid4())
    return {
        "resource": route.path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": {k: v[-1] for k, v in query.items()} or None,
        "multiValueQueryStringParameters": query or None,
        "pathParameters": path_params or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": route.path,
            "httpMethod": method,
            "path": path,
            "stage": "local",
            "requestId": request_id,
            "identity": {"sourceIp": "127.0.0.1"},
            "authorizer": authorizer,
        },
        "body": body,
        "isBase64Encoded": False,
    }


class LocalApi:
    """`verifier`: how bearer tokens are checked (`verifiers.token_verifier`: a JWKS when
    configured); without one, HS256 with `jwt_secret`, the local development secret."""

    def __init__(self, jwt_secret: str, max_body_bytes: int, verifier: TokenVerifier | None = None) -> None:
        self.jwt_secret = require_strong_secret(jwt_secret)
        self.verifier = verifier if verifier is not None else SecretVerifier(jwt_secret)
        self.max_body_bytes = max_body_bytes
        for spec in FUNCTIONS:  # import every handler up front: fail at start, not on first call
            if spec.trigger == "api":
                load_handler_module(spec)

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> _Answer:
        parts = urlsplit(raw_path)
        path = parts.path.rstrip("/") or "/"
        matched = match_route(method, path)
        if matched is None:
            allowed = [r.method for s in FUNCTIONS for r in s.routes if r.pattern.match(path)]
            if allowed:
                return _error(
                    405, "invalid_request", f"method {method} not allowed; use {', '.join(allowed)}"
                )
            return _error(404, "not_found", f"no route {method} {path}")
        spec, route, raw_params = matched
        # Identity first, as API Gateway's authorizer answers before anything reads the request:
        # a caller without a valid token learns nothing about what its body would have been.
        authorizer: dict[str, str] | None = None
        if route.auth:
            authorizer, refused = self._authorize(headers.get("authorization") or "")
            if refused is not None:
                return refused
        path_params, refused = _decoded_path_params(raw_params)
        if refused is not None:
            return refused
        if len(body) > self.max_body_bytes:
            return _error(
                413, "payload_too_large", f"request body exceeds {self.max_body_bytes} bytes", "body"
            )
        try:
            text = body.decode("utf-8") if body else None
        except UnicodeDecodeError:
            return _error(400, "invalid_request", "request body is not UTF-8", "body")
        if text is not None and "content-type" not in headers:
            headers = {**headers, "content-type": "application/json"}  # the API speaks JSON only
        event = api_gateway_event(
            method=method,
            path=path,
            route=route,
            path_params=path_params,
            query=parse_qs(parts.query),
            headers=headers,
            body=text,
            authorizer=authorizer,
        )
        return self.invoke(spec, event)

    def _authorize(self, auth_header: str) -> tuple[dict[str, str] | None, _Answer | None]:
        """The authorizer context for a bearer token, or the answer that refuses the request."""
        if not auth_header:
            return None, _error(
                401, "unauthenticated", "missing bearer token (Authorization: Bearer <token>)"
            )
        if not auth_header.lower().startswith("bearer "):
            return None, _error(401, "unauthenticated", "Authorization must be 'Bearer <token>'")
        try:
            return authorizer_context(self.verifier.verify(auth_header[7:].strip())), None
        except TokenRefused as exc:  # as the Lambda authorizer: the function answers and records it
            return refused_context(exc), None
        except IdentityProviderUnavailable as exc:  # as API Gateway on a failed authorizer
            return None, _error(503, "unavailable", exc.message)
        except Unauthenticated as exc:  # the message names the check that failed
            return None, _error(401, "unauthenticated", exc.message)

    @staticmethod
    def invoke(spec: FunctionSpec, event: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        module = load_handler_module(spec)
        result = module.lambda_handler(event, LocalLambdaContext(function_name=spec.name))
        out_headers = dict(result.get("headers") or {})
        for k, v in (result.get("multiValueHeaders") or {}).items():
            out_headers[k] = ", ".join(v)
        body = result.get("body") or ""
        return int(result["statusCode"]), out_headers, body.encode()


def _decoded_path_params(raw_params: dict[str, str]) -> tuple[dict[str, str], _Answer | None]:
    """As API Gateway does: path parameters are percent-decoded exactly once (the id rule then
    refuses what decodes to a '/', a NUL or anything else outside it)."""
    path_params: dict[str, str] = {}
    for name, raw in raw_params.items():
        try:
            path_params[name] = unquote(raw, errors="strict")
        except UnicodeDecodeError:
            return {}, _error(422, "invalid_request", f"{name}: not valid percent-encoded UTF-8", name)
    return path_params, None


def _error(status: int, code: str, message: str, field: str | None = None) -> _Answer:
    """A refusal of the local front itself, in the API's one error body (Retry-After on a 503)."""
    headers = {"Content-Type": "application/json"}
    if status == 503:
        headers["Retry-After"] = str(RETRY_AFTER_S)
    return status, headers, json.dumps(error_body(code, message, str(uuid.uuid4()), field)).encode()


class _Server(ThreadingHTTPServer):
    # socketserver's default backlog is 5: a burst of agents' calls (16 at once) was reset
    request_queue_size = 128
    daemon_threads = True

    def __init__(self, address: tuple[str, int], api: LocalApi, console: ConsoleSite) -> None:
        self.api = api
        self.console = console
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    """One connection: the console's pages first, then the API; http.server's own refusals in the
    API's error body."""

    server: _Server
    protocol_version = "HTTP/1.1"
    server_version = "agent-memory-local"
    # A response leaves in one send (see _send_whole) and Nagle's algorithm is off: with headers
    # and body in two sends, the client's delayed ACK held every keep-alive response back ~40 ms.
    disable_nagle_algorithm = True

    def _serve(self) -> None:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            # API Gateway buffers chunked bodies; this front does not: refuse clearly rather
            # than read the chunks as the next request.
            self.send_error(411, "a request body must be sent with Content-Length")
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length < 0:
                raise ValueError
        except ValueError:
            self.send_error(400, "Content-Length must be a non-negative integer")
            return
        api, console = self.server.api, self.server.console
        if length > api.max_body_bytes:
            status, headers, body = _error(
                413, "payload_too_large", f"request body exceeds {api.max_body_bytes} bytes", "body"
            )
            self._discard(length)
            self.close_connection = True
        else:
            raw = self.rfile.read(length) if length else b""
            if len(raw) < length:  # the client went away mid-body: nothing is half-processed
                self.close_connection = True
                return
            hdrs = {k.lower(): v for k, v in self.headers.items()}
            try:
                page = console.handle(self.command, self.path, hdrs, raw, client=self.client_address[0])
                status, headers, body = page or api.handle(self.command, self.path, hdrs, raw)
            except Exception as exc:  # never a stack trace to the client
                logger.exception("local front failed", extra={"error": type(exc).__name__})
                status, headers, body = _error(500, "internal_error", "internal error")
        self.send_response(status)
        for k, v in headers.items():
            if k.lower() not in ("content-length", "connection"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self._send_whole(body)

    def _send_whole(self, body: bytes) -> None:
        """The status line, the headers and the body in one write (end_headers would flush the
        headers on their own first)."""
        pending: list[bytes] = self._headers_buffer  # type: ignore[attr-defined]  # http.server's own
        self.wfile.write(b"".join([*pending, b"\r\n", body]))
        pending.clear()

    def _discard(self, length: int) -> None:
        """Read (and drop) an oversized body so the client sees the 413, not a reset."""
        remaining = min(length, 64 * 1024 * 1024)
        while remaining > 0:
            chunk = self.rfile.read(min(remaining, 1 << 20))
            if not chunk:
                break
            remaining -= len(chunk)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a header line too long, too many headers, a request
        line too long, a malformed request) answer with the API's JSON error body, not HTML.
        Its 5xx refusals are the client's doing (an unknown method, an HTTP version it does not
        speak): 405 and 400, so a 5xx always means the service itself failed."""
        if code >= 500:
            code = 405 if code == 501 else 400
        if self.request_version == "HTTP/0.9":  # the request line was refused before it was read
            self.request_version = "HTTP/1.1"
        status, headers, body = _error(
            code,
            "payload_too_large" if code in (413, 414, 431) else "invalid_request",
            message or "bad request",
        )
        self.close_connection = True
        try:
            self.send_response(status, message)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            with_body = self.command != "HEAD" and code >= 200 and code not in (204, 304)
            self._send_whole(body if with_body else b"")
        except OSError:
            pass  # the client is gone

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(
            "http", extra={"request": self.requestline, "status": args[1] if len(args) > 1 else None}
        )


def make_http_server(
    api: LocalApi, host: str, port: int, *, development_secret: bool = False
) -> ThreadingHTTPServer:
    """The local front: the API and the review console's static pages. `development_secret`: the
    secret was generated into the data folder (no MEMORY_JWT_SECRET); only then, with tokens
    checked by that secret (not a JWKS) and bound to loopback, the console's development sign-in
    answers."""
    dev_tokens = development_secret and isinstance(api.verifier, SecretVerifier) and is_loopback(host)
    return _Server((host, port), api, ConsoleSite(api.jwt_secret, dev_tokens=dev_tokens))


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="memory-http", daemon=True)
    thread.start()
    return thread
