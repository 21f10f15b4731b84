"""The console's sign-in at the tenant's identity provider, in a real browser: OpenID Connect
authorization code with PKCE (S256) against a local test provider (its authorization endpoint
redirects back with a code; its token endpoint checks the code verifier and answers an RS256
access token signed by the key whose JWKS the local front trusts through MEMORY_JWT_*).

A reviewer signs in and the queue loads with the provider's token; an answer with another state,
a code already redeemed and a wrong code verifier each leave the console signed out, saying why."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import pytest

from jwks_issuer import AUDIENCE, ISSUER, TestIssuer, new_key

WAIT_S = 20

pytestmark = pytest.mark.e2e

CLIENT_ID = "review-console"
ROLE_MAP = {"Memory Reviewers": "reviewer", "Memory Agents": "agent", "CRM Sync": "integration"}
TOKEN_KEY = "agent-memory-console.token"
PENDING_KEY = "agent-memory-console.sign-in"


@dataclass
class Grant:
    challenge: str
    nonce: str
    redirect_uri: str


@dataclass
class OidcProvider:
    """The test identity provider's authorization and token endpoints, next to its JWKS."""

    issuer: TestIssuer
    redirect_uris: set[str] = field(default_factory=set)
    console_origin: str = ""
    grants: dict[str, Grant] = field(default_factory=dict)
    redirects: list[str] = field(default_factory=list)  # every answer sent back to the console
    redeemed: list[str] = field(default_factory=list)  # codes that obtained a token
    refusals: list[str] = field(default_factory=list)  # why the token endpoint said no
    issued: list[str] = field(default_factory=list)  # access tokens handed out
    forged_state: str | None = None  # answer with this state instead of the request's
    answer_code: str | None = None  # answer with this code (one already redeemed) instead
    hold: bool = False  # show a page with the answer instead of redirecting
    forged_nonce: str | None = None  # put this nonce in the ID token instead of the request's
    deny: bool = False  # the user declines: an error instead of a code

    def __post_init__(self) -> None:
        self.issuer.server.expect_request("/authorize", method="GET").respond_with_handler(self._authorize)
        self.issuer.server.expect_request("/token", method="POST").respond_with_handler(self._token)

    @property
    def authorization_endpoint(self) -> str:
        return self.issuer.server.url_for("/authorize")

    @property
    def token_endpoint(self) -> str:
        return self.issuer.server.url_for("/token")

    def _authorize(self, request: Any) -> Any:
        from werkzeug import Response

        q = request.args
        if (
            q.get("client_id") != CLIENT_ID
            or q.get("redirect_uri") not in self.redirect_uris
            or q.get("response_type") != "code"
            or q.get("code_challenge_method") != "S256"
            or len(q.get("code_challenge", "")) != 43
            or not q.get("state")
            or not q.get("nonce")
        ):
            return Response("invalid authorization request", status=400)
        code = secrets.token_urlsafe(24)
        self.grants[code] = Grant(q["code_challenge"], q["nonce"], q["redirect_uri"])
        answer = {"code": self.answer_code or code, "state": self.forged_state or q["state"]}
        if self.deny:
            answer = {"error": "access_denied", "state": q["state"]}
        location = f"{q['redirect_uri']}?{urlencode(answer)}"
        self.redirects.append(location)
        if self.hold:
            return Response("<p>Signed in at the provider.</p>", content_type="text/html")
        return Response(status=302, headers={"Location": location})

    def _token(self, request: Any) -> Any:
        from werkzeug import Response

        headers = {"Access-Control-Allow-Origin": self.console_origin, "Cache-Control": "no-store"}

        def refuse(why: str) -> Any:
            self.refusals.append(why)
            body = json.dumps({"error": "invalid_grant", "error_description": why})
            return Response(body, status=400, content_type="application/json", headers=headers)

        form = request.form
        grant = self.grants.pop(form.get("code", ""), None)  # a code is good for one token only
        if grant is None:
            return refuse("unknown or already redeemed code")
        if form.get("grant_type") != "authorization_code" or form.get("client_id") != CLIENT_ID:
            return refuse("grant_type or client_id")
        if form.get("redirect_uri") != grant.redirect_uri:
            return refuse("redirect_uri")
        digest = hashlib.sha256(form.get("code_verifier", "").encode()).digest()
        if base64.urlsafe_b64encode(digest).rstrip(b"=").decode() != grant.challenge:
            return refuse("code_verifier")
        self.redeemed.append(form["code"])
        access = self.issuer.token(
            sub="reviewer-9", roles=None, groups=["Everyone", "Memory Reviewers"], clearance="restricted"
        )
        id_token = self.issuer.token(
            aud=CLIENT_ID,
            sub="reviewer-9",
            nonce=self.forged_nonce or grant.nonce,
            roles=None,
            tenant_id=None,
        )
        self.issued.append(access)
        body = {"access_token": access, "id_token": id_token, "token_type": "Bearer", "expires_in": 600}
        return Response(json.dumps(body), content_type="application/json", headers=headers)


@pytest.fixture(scope="module")
def provider() -> Iterator[OidcProvider]:
    from pytest_httpserver import HTTPServer

    # Threaded: a browser opens connections ahead of use, which would stall a one-at-a-time server.
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    issuer = TestIssuer(server)
    issuer.publish(new_key("RS256"))
    yield OidcProvider(issuer)
    issuer.server.stop()


@pytest.fixture(scope="module")
def served(container: Any, provider: OidcProvider) -> Iterator[str]:
    """The local front trusting the provider's JWKS, its console configured for the provider."""
    from agent_memory.api.verifiers import token_verifier
    from agent_memory.config import Settings
    from agent_memory.local.server import LocalApi, make_http_server, serve_in_thread

    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "MEMORY_JWT_JWKS_URL": provider.issuer.jwks_url,
            "MEMORY_JWT_ISSUER": ISSUER,
            "MEMORY_JWT_AUDIENCE": AUDIENCE,
            "MEMORY_CONSOLE_OIDC_AUTHORIZATION_ENDPOINT": provider.authorization_endpoint,
            "MEMORY_CONSOLE_OIDC_TOKEN_ENDPOINT": provider.token_endpoint,
            "MEMORY_CONSOLE_OIDC_CLIENT_ID": CLIENT_ID,
            "MEMORY_CONSOLE_OIDC_SCOPES": "openid profile",
            # The IdP's group names, mapped to roles: the page must read them as the API does
            "MEMORY_JWT_ROLES_CLAIM": "groups",
            "MEMORY_JWT_ROLE_MAP": json.dumps(ROLE_MAP),
        }.items():
            env.setenv(name, value)
        settings = Settings()
        secret = container.settings.jwt_secret.get_secret_value()
        api = LocalApi(secret, settings.max_body_bytes, token_verifier(settings, secret))
        server = make_http_server(api, "127.0.0.1", 0)
    serve_in_thread(server)
    host, port = server.server_address[:2]
    base = f"http://{host}:{port}"
    provider.console_origin = base
    provider.redirect_uris = {f"{base}/console/"}
    yield base
    server.shutdown()
    server.server_close()


class Page:
    """The console in the browser, as a user sees it."""

    def __init__(self, driver: Any) -> None:
        self.driver = driver

    def wait(self, condition: Callable[[Any], Any]) -> Any:
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, WAIT_S).until(condition)

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def all(self, css: str) -> list[Any]:
        from selenium.webdriver.common.by import By

        return list(self.driver.find_elements(By.CSS_SELECTOR, css))

    def wait_text(self, css: str, needle: str) -> str:
        from selenium.common.exceptions import StaleElementReferenceException

        def has(_: Any) -> str | bool:
            try:
                return next((e.text for e in self.all(css) if needle in e.text), False)
            except StaleElementReferenceException:
                return False

        return str(self.wait(has))

    def stored(self, key: str) -> Any:
        return self.driver.execute_script("return sessionStorage.getItem(arguments[0])", key)


def http(
    method: str, url: str, body: Any = None, token: str | None = None
) -> tuple[int, Any, dict[str, str]]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {})}
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null"), dict(response.headers)
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"null"), dict(err.headers)


@pytest.fixture
def page(browser: Any, served: str, provider: OidcProvider) -> Page:
    """The console signed out, the provider answering normally."""
    provider.forged_state = provider.answer_code = provider.forged_nonce = None
    provider.hold = provider.deny = False
    browser.get(f"{served}/console/")
    browser.execute_script("sessionStorage.clear(); localStorage.clear();")
    browser.get("about:blank")  # a fresh document: the page keeps its token in memory too
    browser.get(f"{served}/console/#/review")
    return Page(browser)


def seed_pending_claim(base: str, provider: OidcProvider) -> None:
    """A contract fact from the system of record and a customer's claim waiting to supersede it,
    written with the provider's tokens (the front accepts no other)."""
    integration = provider.issuer.token(
        sub="crm-sync", roles=None, groups=["CRM Sync"], clearance="restricted"
    )
    agent = provider.issuer.token(sub="agent-7", roles=None, groups=["Memory Agents"], clearance="restricted")
    fact = {
        "subject_id": "ACC-OIDC",
        "type": "fact",
        "category": "CONTRACT_COMMERCIAL",
        "slot": "contract.seat_price",
        "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
        "value": {"seats": 500, "price_per_seat_month": 42},
        "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
        "effective_at": "2026-09-01T00:00:00Z",
        "confidence": 1.0,
    }
    claim = {
        **{k: fact[k] for k in ("subject_id", "type", "category", "slot")},
        "content": "In the QBR the customer said we agreed to $35/seat/month with a 20% discount.",
        "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
        "effective_at": "2026-10-02T15:00:00Z",
        "confidence": 0.6,
    }
    status, body, _ = http("POST", f"{base}/v1/memories", fact, integration)
    assert status == 201 and body["decision"] == "admitted", body
    status, body, _ = http("POST", f"{base}/v1/memories", claim, agent)
    assert status == 201 and body["decision"] == "pending_approval", body


def sign_in_at_provider(page: Page) -> None:
    page.find("#idp-sign-in").click()


def test_a_reviewer_signs_in_at_the_provider_and_the_queue_loads_with_its_token(page, served, provider):
    # Given a claim waiting for review, and the console offering the provider's sign-in
    seed_pending_claim(served, provider)
    # When the reviewer signs in at the provider
    sign_in_at_provider(page)
    # Then the console is back on the queue, signed in as the provider's user with the role its
    # group maps to (the page reads the API's mapping from its configuration)
    page.find("#sign-out")
    assert "reviewer-9 · tenant acme · reviewer · clearance restricted" in page.find("#who-text").text
    page.wait_text("#review-queue li", "20% discount")
    assert page.driver.current_url == f"{served}/console/#/review"  # the code left the address bar
    # And the token it calls the API with is the one the provider issued for the redeemed code
    assert page.stored(TOKEN_KEY) == provider.issued[-1]
    assert page.stored(PENDING_KEY) is None  # state, nonce and verifier dropped after the trip
    assert page.driver.execute_script("return localStorage.length") == 0
    # And signing out forgets the token
    page.find("#sign-out").click()
    page.find("#idp-sign-in")
    assert page.driver.execute_script("return sessionStorage.length") == 0


def test_an_answer_with_another_state_is_refused_before_the_code_is_redeemed(page, provider):
    # Given a provider (or an attacker) answering with a state this tab did not send
    provider.forged_state = "forged-" + secrets.token_urlsafe(8)
    redeemed = len(provider.redeemed) + len(provider.refusals)
    # When the reviewer signs in
    sign_in_at_provider(page)
    # Then the console stays signed out, says why, and never took the code to the token endpoint
    page.wait_text("#main", "state")
    assert not page.all("#sign-out")
    assert page.stored(TOKEN_KEY) is None
    assert len(provider.redeemed) + len(provider.refusals) == redeemed


def test_a_replayed_code_is_refused(page, served, provider):
    # Given a sign-in whose code was redeemed, then a sign-out
    sign_in_at_provider(page)
    page.find("#sign-out")
    used_code, callback = provider.redeemed[-1], provider.redirects[-1]
    page.find("#sign-out").click()
    page.find("#idp-sign-in")
    # When the same answer is loaded again (the address from the history)
    page.driver.get(callback)
    # Then it belongs to no sign-in under way: refused by its state
    page.wait_text("#main", "state")
    assert not page.all("#sign-out") and page.stored(TOKEN_KEY) is None
    # When a new sign-in comes back with the old code (and this sign-in's own state)
    provider.answer_code = used_code
    sign_in_at_provider(page)
    # Then the provider refuses to redeem it again and the console stays signed out
    page.wait_text("#main", "issued no token (invalid_grant)")
    assert provider.refusals[-1] == "unknown or already redeemed code"
    assert not page.all("#sign-out") and page.stored(TOKEN_KEY) is None


def test_a_wrong_code_verifier_gets_no_token(page, served, provider):
    # Given a sign-in under way, held at the provider, its code verifier changed in the tab
    provider.hold = True
    sign_in_at_provider(page)
    page.wait(lambda d: d.current_url.startswith(provider.authorization_endpoint))
    page.driver.get(f"{served}/console/")
    page.find("#idp-sign-in")
    page.driver.execute_script(
        "const p = JSON.parse(sessionStorage.getItem(arguments[0]));"
        "p.verifier = 'x'.repeat(43); sessionStorage.setItem(arguments[0], JSON.stringify(p));",
        PENDING_KEY,
    )
    issued = len(provider.issued)
    # When the provider's answer arrives
    page.driver.get(provider.redirects[-1])
    # Then the token endpoint refuses the verifier and the console stays signed out
    page.wait_text("#main", "issued no token (invalid_grant)")
    assert provider.refusals[-1] == "code_verifier"
    assert len(provider.issued) == issued
    assert not page.all("#sign-out") and page.stored(TOKEN_KEY) is None


def test_an_id_token_without_this_sign_ins_nonce_is_refused(page, provider):
    # Given a provider whose ID token carries another sign-in's nonce (a token injected)
    provider.forged_nonce = "another-" + secrets.token_urlsafe(8)
    # When the reviewer signs in
    sign_in_at_provider(page)
    # Then the console does not use the access token that came with it
    page.wait_text("#main", "nonce")
    assert not page.all("#sign-out") and page.stored(TOKEN_KEY) is None


def test_a_declined_sign_in_says_so(page, provider):
    # Given a user who declines at the provider
    provider.deny = True
    # When they come back to the console
    sign_in_at_provider(page)
    # Then the console says the provider refused, signed out, the answer gone from the address
    page.wait_text("#main", "the identity provider refused (access_denied)")
    assert not page.all("#sign-out") and page.stored(TOKEN_KEY) is None
    assert "error=" not in page.driver.current_url


def test_the_console_policy_allows_exactly_the_token_endpoint(served, provider):
    # When the page and its configuration are fetched
    status, config, headers = http("GET", f"{served}/console/config.json")
    # Then connect-src names the provider's token endpoint origin and nothing wider
    origin = provider.token_endpoint.rsplit("/", 1)[0]
    policy = dict(p.strip().split(" ", 1) for p in headers["Content-Security-Policy"].split(";"))
    assert policy["connect-src"] == f"'self' {origin}"
    assert "*" not in headers["Content-Security-Policy"]
    # And the configuration is what the page needs to start the sign-in
    assert status == 200 and config == {
        "oidc": {
            "authorization_endpoint": provider.authorization_endpoint,
            "token_endpoint": provider.token_endpoint,
            "client_id": CLIENT_ID,
            "scopes": "openid profile",
            "issuer": ISSUER,
        },
        "claims": {
            "sub": "sub",
            "tenant": "tenant_id",
            "roles": "groups",
            "role_prefix": "",
            "role_map": ROLE_MAP,
            "clearance": "clearance",
            "default_clearance": "internal",
            "subjects": "subjects",
        },
    }
