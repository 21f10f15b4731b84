"""Serving the console locally: its static files under /console/, every response with a strict
Content-Security-Policy, and a development-only token endpoint.

The development token endpoint (`POST /console/dev/token`) signs a token with the local server's
secret for whatever roles the caller asks: it exists so a developer can try each screen without a
terminal. It answers only when the server is bound to a loopback address, to a loopback client,
with a loopback `Host` (a web page elsewhere cannot reach it through DNS rebinding), and never in
AWS, where the console is static files in a bucket and no such route exists.
"""

from __future__ import annotations

import ipaddress
import json
import mimetypes
from datetime import timedelta
from pathlib import Path
from typing import Any

from agent_memory.api.identity import issue_token
from agent_memory.domain.enums import Role, Sensitivity

STATIC_DIR = Path(__file__).resolve().parent / "static"
PREFIX = "/console"
DEV_TOKEN_PATH = "/console/dev/token"
DEV_TOKEN_TTL = timedelta(hours=2)

# No inline script or style anywhere: memory text that reached the DOM as markup could not run.
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    ]
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cache-Control": "no-store",
}
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".svg": "image/svg+xml",
    ".txt": "text/plain; charset=utf-8",
}

Reply = tuple[int, dict[str, str], bytes]


def is_loopback(host: str) -> bool:
    """Whether `host` (an address or `localhost`) names this machine only."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _host_name(host_header: str) -> str:
    """The name in a Host header, without its port (`[::1]:8080` -> `::1`)."""
    if host_header.startswith("["):
        return host_header[1 : host_header.find("]")] if "]" in host_header else host_header
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


class ConsoleSite:
    """The console's routes on the local front (`None` for any path outside /console)."""

    def __init__(self, jwt_secret: str, *, dev_tokens: bool, static_dir: Path = STATIC_DIR) -> None:
        self.jwt_secret = jwt_secret
        self.dev_tokens = dev_tokens
        self.static_dir = static_dir.resolve()

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes, *, client: str
    ) -> Reply | None:
        path = path.split("?", 1)[0].split("#", 1)[0]
        if path != PREFIX and not path.startswith(PREFIX + "/"):
            return None
        if path == PREFIX:
            return 308, {**SECURITY_HEADERS, "Location": PREFIX + "/"}, b""
        if path == DEV_TOKEN_PATH:
            return self._dev_token(method, headers, body, client)
        if method not in ("GET", "HEAD"):
            return _json(405, _error("invalid_request", f"method {method} not allowed; use GET"))
        reply = self._static(path[len(PREFIX) + 1 :] or "index.html")
        if method == "HEAD":
            return reply[0], reply[1], b""
        return reply

    def _static(self, relative: str) -> Reply:
        target = (self.static_dir / relative).resolve()
        if (
            not target.is_relative_to(self.static_dir)
            or not target.is_file()
            or target.suffix not in CONTENT_TYPES
        ):
            return _json(404, _error("not_found", "no such console file"))
        content_type = CONTENT_TYPES.get(target.suffix) or mimetypes.guess_type(target.name)[0]
        return (
            200,
            {**SECURITY_HEADERS, "Content-Type": content_type or "application/octet-stream"},
            (target.read_bytes()),
        )

    def _dev_token(self, method: str, headers: dict[str, str], body: bytes, client: str) -> Reply:
        allowed = (
            self.dev_tokens and is_loopback(client) and is_loopback(_host_name(headers.get("host") or ""))
        )
        if not allowed:  # looks like any other missing file: nothing to discover from outside
            return _json(404, _error("not_found", "no such console file"))
        if method == "GET":
            return _json(200, {"enabled": True, "development_only": True, "roles": list(Role)})
        if method != "POST":
            return _json(405, _error("invalid_request", f"method {method} not allowed; use GET or POST"))
        # A custom header a cross-site form cannot send (a simple request carries none).
        if (headers.get("x-console-dev") or "") != "1":
            return _json(403, _error("forbidden", "X-Console-Dev: 1 is required", "X-Console-Dev"))
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return _json(400, _error("invalid_request", "body is not JSON", "body"))
        if not isinstance(request, dict):
            return _json(422, _error("invalid_request", "body must be a JSON object", "body"))
        problem = _dev_token_problem(request)
        if problem is not None:
            return _json(422, _error("invalid_request", problem[1], problem[0]))
        token = issue_token(
            self.jwt_secret,
            tenant_id=request["tenant_id"],
            sub=request["sub"],
            roles=list(request["roles"]),
            clearance=request.get("clearance") or Sensitivity.INTERNAL.value,
            ttl=DEV_TOKEN_TTL,
        )
        return _json(200, {"token": token, "development_only": True})


def _dev_token_problem(request: dict[str, Any]) -> tuple[str, str] | None:
    """The first field of a development token request that is not acceptable, with why."""
    for name in ("tenant_id", "sub"):
        value = request.get(name)
        if not isinstance(value, str) or not value.strip() or len(value) > 200:
            return name, f"{name}: 1-200 characters of text"
    roles = request.get("roles")
    if (
        not isinstance(roles, list)
        or not roles
        or not all(isinstance(r, str) and r in Role._value2member_map_ for r in roles)
    ):
        return "roles", f"roles: a non-empty list of known roles ({', '.join(Role)})"
    clearance = request.get("clearance")
    if clearance is not None and clearance not in Sensitivity._value2member_map_:
        return "clearance", f"clearance: one of {', '.join(Sensitivity)}"
    extra = set(request) - {"tenant_id", "sub", "roles", "clearance"}
    if extra:
        return sorted(extra)[0], f"{sorted(extra)[0]}: unknown field"
    return None


def _error(code: str, message: str, field: str | None = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if field:
        err["field"] = field
    return {"error": err}


def _json(status: int, body: dict[str, Any]) -> Reply:
    return status, {**SECURITY_HEADERS, "Content-Type": "application/json"}, json.dumps(body).encode()
