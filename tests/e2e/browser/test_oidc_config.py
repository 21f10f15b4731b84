"""The console's sign-in configuration as `memory serve` answers it: `/console/config.json` from
the MEMORY_CONSOLE_OIDC_* settings, a policy whose connect-src names exactly the token endpoint's
origin, and settings that cannot work refused at start, naming the setting."""

from __future__ import annotations

import json

import pytest

from agent_memory.config import Settings
from agent_memory.console.site import (
    CONTENT_SECURITY_POLICY,
    ConsoleSignIn,
    ConsoleSite,
    content_security_policy,
)

pytestmark = pytest.mark.e2e

SECRET = "s" * 40
IDP = "https://login.example.com/acme"


def config_reply(site: ConsoleSite) -> tuple[int, dict[str, str], dict]:
    reply = site.handle("GET", "/console/config.json", {}, b"", client="127.0.0.1")
    assert reply is not None
    status, headers, body = reply
    return status, headers, json.loads(body)


def test_without_settings_the_page_is_told_there_is_no_identity_provider():
    # Given no MEMORY_CONSOLE_OIDC_* settings
    site = ConsoleSite(SECRET, dev_tokens=False, sign_in=ConsoleSignIn.from_settings(Settings()))
    # When the page asks for its configuration
    status, headers, body = config_reply(site)
    # Then there is none, and the policy calls nothing but its own origin
    assert status == 200 and body == {"oidc": None}
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "connect-src 'self';" in CONTENT_SECURITY_POLICY


def test_the_settings_become_the_pages_configuration_and_its_connect_src(monkeypatch):
    # Given the IdP's endpoints and the console's client in the environment
    monkeypatch.setenv("MEMORY_CONSOLE_OIDC_AUTHORIZATION_ENDPOINT", f"{IDP}/authorize")
    monkeypatch.setenv("MEMORY_CONSOLE_OIDC_TOKEN_ENDPOINT", "https://tokens.example.com:8443/acme/token")
    monkeypatch.setenv("MEMORY_CONSOLE_OIDC_CLIENT_ID", "review-console")
    monkeypatch.setenv("MEMORY_JWT_ISSUER", IDP)
    # When the console is served (as `memory serve` builds it, from the environment)
    status, headers, body = config_reply(ConsoleSite(SECRET, dev_tokens=False))
    # Then the page gets them, the issuer defaulting to the API's
    assert status == 200 and body == {
        "oidc": {
            "authorization_endpoint": f"{IDP}/authorize",
            "token_endpoint": "https://tokens.example.com:8443/acme/token",
            "client_id": "review-console",
            "scopes": "openid",
            "issuer": IDP,
        }
    }
    # And connect-src allows that one origin, port included, and nothing wider
    policy = dict(p.strip().split(" ", 1) for p in headers["Content-Security-Policy"].split(";"))
    assert policy["connect-src"] == "'self' https://tokens.example.com:8443"
    assert policy["default-src"] == "'none'" and policy["script-src"] == "'self'"


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"authorization_endpoint": f"{IDP}/authorize", "client_id": "c"}, "token_endpoint"),
        ({"client_id": "c"}, "authorization_endpoint, token_endpoint"),
        (
            {
                "authorization_endpoint": "http://login.example.com/authorize",
                "token_endpoint": f"{IDP}/token",
                "client_id": "c",
            },
            "console_oidc_authorization_endpoint",
        ),
        (
            {
                "authorization_endpoint": f"{IDP}/a",
                "token_endpoint": f"{IDP}/t",
                "client_id": "c",
                "redirect_uri": "x",
            },
            "console_oidc_redirect_uri",
        ),
    ],
)
def test_settings_that_cannot_work_are_refused_naming_the_setting(settings, named):
    with pytest.raises(ValueError, match=named):
        ConsoleSignIn(**settings)


def test_plain_http_is_accepted_on_this_machine_only():
    local = ConsoleSignIn("http://127.0.0.1:9000/authorize", "http://localhost:9000/token", "c")
    assert local.connect_origins() == ["http://localhost:9000"]


@pytest.mark.parametrize("origin", ["https://*.example.com", "https://idp.example.com/token", "*"])
def test_connect_src_takes_exact_origins_only(origin):
    with pytest.raises(ValueError, match="exact origins"):
        content_security_policy([origin])
