"""Serving the console locally: its static files under /console/, every response with a strict
Content-Security-Policy, and a development-only token endpoint.

The development token endpoint (`POST /console/dev/token`) signs a token with the local server's
secret for whatever roles the caller asks: it exists so a developer can try each screen without a
terminal. It answers only when the server checks HS256 tokens with the development secret it
generated into its data folder (never with an operator's `MEMORY_JWT_SECRET`, never in JWKS mode:
then tokens come from someone who decided who gets them), is bound to a loopback address, to a
loopback client, with a loopback `Host` (a web page elsewhere cannot reach it through DNS
rebinding) and no proxy header (a request relayed by a proxy on this machine comes from
elsewhere), and never in AWS, where the console is static files in a bucket and no such route
exists.

The sign-in configuration (`GET /console/config.json`) tells the page where the tenant's identity
provider signs users in (OIDC authorization code with PKCE); the same document is written into the
console's bucket in AWS. The policy's `connect-src` names the provider's token endpoint, the one
other origin the page may call.
"""

from __future__ import annotations

import ipaddress
import json
import mimetypes
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agent_memory.api.identity import issue_token
from agent_memory.api.jwks import ClaimMapping
from agent_memory.domain.enums import Role, Sensitivity

if TYPE_CHECKING:
    from agent_memory.config import Settings

STATIC_DIR = Path(__file__).resolve().parent / "static"
PREFIX = "/console"
DEV_TOKEN_PATH = "/console/dev/token"
CONFIG_PATH = "/console/config.json"
DEV_TOKEN_TTL = timedelta(hours=2)
# Headers a reverse proxy adds: a request carrying one was relayed, whatever its client address.
PROXY_HEADERS = ("forwarded", "x-forwarded-for", "x-forwarded-host", "x-real-ip", "via")


def content_security_policy(connect_origins: Sequence[str] = ()) -> str:
    """The console's policy; `connect_origins` are exact origins the page may also call (the
    identity provider's token endpoint), never a wildcard."""
    for origin in connect_origins:
        if origin != _origin(origin) or "*" in origin:
            raise ValueError(f"connect-src takes exact origins (scheme://host[:port]), not {origin!r}")
    connect = " ".join(["'self'", *dict.fromkeys(connect_origins)])
    # No inline script or style anywhere: memory text that reached the DOM as markup could not run.
    return "; ".join(
        [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self' data:",
            f"connect-src {connect}",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        ]
    )


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else ""


CONTENT_SECURITY_POLICY = content_security_policy()
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


@dataclass(frozen=True)
class ConsoleSignIn:
    """Where the console signs users in at the tenant's identity provider (all four endpoints and
    the client id, or nothing: then only a pasted token, or the development sign-in)."""

    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    client_id: str | None = None
    scopes: str = "openid"
    issuer: str | None = None
    redirect_uri: str | None = None
    # Where the IdP's access token puts the service's claims (the API's MEMORY_JWT_* mapping), so
    # the page shows the screens the API will allow; None: the service's own claim names.
    claims: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        required = {
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "client_id": self.client_id,
        }
        if any(required.values()) and not all(required.values()):
            missing = sorted(k for k, v in required.items() if not v)
            raise ValueError(f"console sign-in needs {', '.join(missing)} too")
        for name in ("authorization_endpoint", "token_endpoint", "redirect_uri"):
            url = getattr(self, name)
            if url and not _acceptable_endpoint(url):
                raise ValueError(f"console_oidc_{name}: an https URL (http only on loopback)")

    @classmethod
    def from_settings(cls, settings: Settings) -> ConsoleSignIn:
        return cls(
            authorization_endpoint=settings.console_oidc_authorization_endpoint,
            token_endpoint=settings.console_oidc_token_endpoint,
            client_id=settings.console_oidc_client_id,
            scopes=settings.console_oidc_scopes,
            issuer=settings.console_oidc_issuer or settings.jwt_issuer,
            redirect_uri=settings.console_oidc_redirect_uri,
            claims=claim_names(ClaimMapping.from_settings(settings)) if settings.jwt_jwks_url else None,
        )

    @property
    def enabled(self) -> bool:
        return bool(self.authorization_endpoint)

    def connect_origins(self) -> list[str]:
        """The origins the page calls besides its own: the token endpoint's."""
        return [_origin(self.token_endpoint)] if self.token_endpoint else []

    def document(self) -> dict[str, Any]:
        """The page's /console/config.json."""
        document: dict[str, Any] = {"oidc": self._oidc() if self.enabled else None}
        if self.claims is not None:
            document["claims"] = self.claims
        return document

    def _oidc(self) -> dict[str, Any]:
        oidc = {
            "authorization_endpoint": self.authorization_endpoint,
            "token_endpoint": self.token_endpoint,
            "client_id": self.client_id,
            "scopes": self.scopes,
        }
        if self.issuer:
            oidc["issuer"] = self.issuer
        if self.redirect_uri:
            oidc["redirect_uri"] = self.redirect_uri
        return oidc


def claim_names(mapping: ClaimMapping) -> dict[str, Any]:
    """The API's claim mapping as the page reads it (config.json's `claims`): only to decide which
    screens to show; the API applies the same mapping to every call."""
    names: dict[str, Any] = {
        "sub": mapping.sub,
        "tenant": mapping.tenant,
        "roles": mapping.roles,
        "role_prefix": mapping.role_prefix,
        "role_map": dict(mapping.role_map),
        "clearance": mapping.clearance,
        "default_clearance": mapping.default_clearance,
        "subjects": mapping.subjects,
    }
    if mapping.tenant_id:
        names["tenant_id"] = mapping.tenant_id
    return names


def _acceptable_endpoint(url: str) -> bool:
    parts = urlsplit(url)
    if not parts.netloc or parts.fragment:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and is_loopback(parts.hostname or ""))


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

    def __init__(
        self,
        jwt_secret: str,
        *,
        dev_tokens: bool,
        static_dir: Path = STATIC_DIR,
        sign_in: ConsoleSignIn | None = None,
    ) -> None:
        """`sign_in`: the identity provider sign-in; by default from the MEMORY_CONSOLE_OIDC_*
        settings in the environment, as `memory serve` reads every setting."""
        if sign_in is None:
            from agent_memory.config import Settings

            sign_in = ConsoleSignIn.from_settings(Settings())
        self.jwt_secret = jwt_secret
        self.dev_tokens = dev_tokens
        self.static_dir = static_dir.resolve()
        self.sign_in = sign_in
        self.headers = {
            **SECURITY_HEADERS,
            "Content-Security-Policy": content_security_policy(sign_in.connect_origins()),
        }

    def handle(
        self, method: str, path: str, headers: dict[str, str], body: bytes, *, client: str
    ) -> Reply | None:
        path = path.split("?", 1)[0].split("#", 1)[0]
        if path != PREFIX and not path.startswith(PREFIX + "/"):
            return None
        if path == PREFIX:
            return 308, {**self.headers, "Location": PREFIX + "/"}, b""
        if path == DEV_TOKEN_PATH:
            return self._with_policy(self._dev_token(method, headers, body, client))
        if method not in ("GET", "HEAD"):
            return self._with_policy(
                _json(405, _error("invalid_request", f"method {method} not allowed; use GET"))
            )
        if path == CONFIG_PATH:
            reply = _json(200, self.sign_in.document())
        else:
            reply = self._static(path[len(PREFIX) + 1 :] or "index.html")
        reply = self._with_policy(reply)
        if method == "HEAD":
            return reply[0], reply[1], b""
        return reply

    def _with_policy(self, reply: Reply) -> Reply:
        status, headers, body = reply
        return status, {**headers, **self.headers, "Content-Type": headers["Content-Type"]}, body

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
            self.dev_tokens
            and is_loopback(client)
            and is_loopback(_host_name(headers.get("host") or ""))
            and not any(name in headers for name in PROXY_HEADERS)
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
