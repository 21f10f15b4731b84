"""The console's pages as the local front serves them: a strict Content-Security-Policy on every
response, no inline script or style anywhere, nothing outside its folder, and a development
sign-in that answers only on loopback."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from agent_memory.console.site import CONTENT_SECURITY_POLICY, STATIC_DIR, ConsoleSite

pytestmark = pytest.mark.e2e

DEV = {"X-Console-Dev": "1"}


@pytest.mark.parametrize(
    "path",
    ["/console/", "/console/index.html", "/console/js/app.js", "/console/console.css", "/console/nope.js"],
)
def test_every_console_response_carries_the_strict_policy(api, path):
    reply = api.get(path)
    assert reply.headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY and "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert reply.headers["X-Content-Type-Options"] == "nosniff"
    assert reply.headers["X-Frame-Options"] == "DENY"


def test_files_are_served_with_their_types_and_the_bare_path_redirects(api):
    assert api.get("/console/").headers["Content-Type"].startswith("text/html")
    assert api.get("/console/js/app.js").headers["Content-Type"].startswith("text/javascript")
    assert api.get("/console/console.css").headers["Content-Type"].startswith("text/css")
    bare = api.get("/console")  # urllib follows the redirect
    assert bare.status == 200 and bare.headers["Content-Type"].startswith("text/html")


@pytest.mark.parametrize(
    "path",
    [
        "/console/../site.py",
        "/console/%2e%2e/site.py",
        "/console/js/../../site.py",
        "/console/js/",
        "/console/x.py",
    ],
)
def test_nothing_outside_the_static_folder_is_served(api, path):
    reply = api.get(path)
    assert reply.status == 404 and "def " not in str(reply.body)


def test_the_console_does_not_take_writes(api):
    reply = api.post("/console/index.html", {})
    assert reply.status == 405


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {k for k, _ in attrs}
        if tag == "script" and "src" not in names:
            self.problems.append("inline <script>")
        if tag == "style":
            self.problems.append("<style>")
        self.problems += [f"{tag}[{k}]" for k in names if k == "style" or k.startswith("on")]


def test_no_inline_script_or_style_and_no_html_parsing_in_the_scripts():
    markup = _Markup()
    markup.feed((STATIC_DIR / "index.html").read_text())
    assert markup.problems == []
    scripts = sorted((STATIC_DIR / "js").glob("*.js"))
    assert scripts
    for script in scripts:
        text = script.read_text()
        found = re.findall(
            r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function", text
        )
        assert found == [], f"{script.name}: {found}"
    # localStorage would outlive the tab: the token source keeps it in memory and sessionStorage
    assert not any("localStorage" in s.read_text() for s in scripts)


def test_the_token_source_is_one_module():
    users = [s.name for s in (STATIC_DIR / "js").glob("*.js") if "sessionStorage" in s.read_text()]
    assert users == ["token-source.js"]


def test_development_sign_in_mints_a_working_token_on_loopback(api):
    offered = api.get("/console/dev/token")
    assert offered.status == 200 and offered.body["development_only"] is True

    minted = api.post(
        "/console/dev/token",
        {"tenant_id": "site", "sub": "dev-1", "roles": ["reviewer"], "clearance": "confidential"},
        headers=DEV,
    )
    assert minted.status == 200
    assert api.get("/v1/review", token=minted.body["token"]).status == 200
    assert api.get("/v1/audit", token=minted.body["token"]).status == 403  # only the roles asked for


def test_development_sign_in_refuses_a_cross_site_request_and_bad_claims(api):
    body = {"tenant_id": "site", "sub": "dev-1", "roles": ["reviewer"]}
    assert api.post("/console/dev/token", body).status == 403  # no X-Console-Dev: a plain form post
    bad_role = api.post("/console/dev/token", {**body, "roles": ["root"]}, headers=DEV)
    assert bad_role.status == 422 and bad_role.body["error"]["field"] == "roles"
    bad_clearance = api.post("/console/dev/token", {**body, "clearance": "top"}, headers=DEV)
    assert bad_clearance.status == 422 and bad_clearance.body["error"]["field"] == "clearance"
    extra = api.post("/console/dev/token", {**body, "exp": 1}, headers=DEV)
    assert extra.status == 422 and extra.body["error"]["field"] == "exp"


def test_development_sign_in_is_absent_under_another_host_name(api):
    # DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends Host: evil.example
    reply = api.post(
        "/console/dev/token",
        {"tenant_id": "site", "sub": "x", "roles": ["admin"]},
        headers={**DEV, "Host": "evil.example:8080"},
    )
    assert reply.status == 404


@pytest.mark.parametrize(
    "proxy",
    [
        {"X-Forwarded-For": "203.0.113.9"},
        {"Forwarded": "for=203.0.113.9;proto=https"},
        {"X-Forwarded-Host": "console.example"},
        {"X-Real-IP": "203.0.113.9"},
    ],
)
def test_development_sign_in_is_absent_behind_a_proxy_on_this_machine(api, proxy):
    # Given a loopback request that a reverse proxy on this machine relayed (it says so in a header)
    # When it asks for, or posts to, the development sign-in
    offered = api.get("/console/dev/token", headers=proxy)
    minted = api.post(
        "/console/dev/token", {"tenant_id": "site", "sub": "x", "roles": ["admin"]}, headers={**DEV, **proxy}
    )
    # Then it does not exist for that request, though it does for this machine's own requests
    assert offered.status == minted.status == 404
    assert api.get("/console/dev/token").status == 200


def test_development_sign_in_is_absent_when_not_bound_to_loopback():
    site = ConsoleSite("s" * 40, dev_tokens=False)
    status, headers, _ = site.handle(
        "POST", "/console/dev/token", {"host": "127.0.0.1", "x-console-dev": "1"}, b"{}", client="127.0.0.1"
    )
    assert status == 404 and headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    status, _, _ = ConsoleSite("s" * 40, dev_tokens=True).handle(
        "GET", "/console/dev/token", {"host": "127.0.0.1"}, b"", client="10.0.0.8"
    )
    assert status == 404  # a client on another machine


def test_development_sign_in_in_the_browser(console):
    console.driver.get(f"{console.base}/console/")
    console.driver.execute_script("sessionStorage.clear()")
    console.driver.get("about:blank")
    console.driver.get(f"{console.base}/console/")
    form = console.find("#dev-form")
    assert "Development only" in form.text
    form.find_element("css selector", "input[name=tenant]").clear()
    form.find_element("css selector", "input[name=tenant]").send_keys("site-dev")
    form.find_element("css selector", "#dev-role-auditor").click()
    form.find_element("css selector", "button[type=submit]").click()
    who = console.wait_text("#who-text", "site-dev")
    assert "auditor" in who and "reviewer" in who
    assert [a.text for a in console.all("#nav a")] == ["Review queue", "Subject", "Audit"]
    stored = console.driver.execute_script("return [localStorage.length, !!sessionStorage.length]")
    assert stored == [0, True]


UNLABELLED = """
return [...document.querySelectorAll("#main input, #main select, #main textarea, #main button")]
  .filter((e) => e.type !== "hidden")
  .filter((e) => (e.tagName === "BUTTON" ? !e.textContent.trim() : !e.labels.length && !e.getAttribute("aria-label")))
  .map((e) => e.outerHTML.slice(0, 80));
"""


def test_every_control_on_every_screen_has_a_label(console, api):
    agent = api.token("site-labels", "agent-1", ["agent"])
    claim = api.post(
        "/v1/memories",
        {
            "subject_id": "ACC-L-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "The customer says a 10% discount was agreed.",
            "source": {"kind": "customer_claim"},
        },
        token=agent,
    )
    assert claim.body["decision"] == "pending_approval"
    everyone = api.token(
        "site-labels", "all-1", ["reviewer", "agent", "auditor", "privacy_officer"], clearance="confidential"
    )
    console.sign_in(everyone, "review")
    console.find("li.review-item input[name=evidence_ref]")
    screens = {
        "review": "li.review-item",
        "subject/ACC-L-1": "#subject-body .status",
        "audit": "#audit-events",
        "privacy": "#erasure-steps",
    }
    for screen, ready in screens.items():
        console.driver.get(f"{console.base}/console/#/{screen}")
        console.wait(lambda d, css=ready: d.find_elements("css selector", css))
        assert console.driver.execute_script(UNLABELLED) == [], screen
    # signed out: the sign-in forms too
    console.find("#sign-out").click()
    console.find("#dev-form")
    assert console.driver.execute_script(UNLABELLED) == []


LOW_CONTRAST = """
function rgb(text) {
  const [r, g, b, a = 1] = text.match(/[\\d.]+/g).map(Number);
  return { r, g, b, a };
}
function luminance({ r, g, b }) {
  const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
}
function background(el) {
  for (let node = el; node && node.nodeType === 1; node = node.parentElement) {
    const bg = rgb(getComputedStyle(node).backgroundColor);
    if (bg.a > 0) return bg;
  }
  return { r: 255, g: 255, b: 255, a: 1 };
}
const low = [];
for (const el of document.querySelectorAll("body *")) {
  const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own || !el.getClientRects().length || el.closest("[disabled]")) continue;
  const fg = luminance(rgb(getComputedStyle(el).color));
  const bg = luminance(background(el));
  const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
  if (ratio < 4.5) low.push(`${el.tagName}.${el.className} ${ratio.toFixed(2)}: ${el.textContent.trim().slice(0, 30)}`);
}
return low;
"""


def test_text_on_every_screen_meets_wcag_aa_contrast(console, api):
    agent = api.token("site-contrast", "agent-1", ["agent"])
    integration = api.token("site-contrast", "crm", ["integration"])
    api.post(
        "/v1/memories",
        {
            "subject_id": "ACC-C-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "Discount is 5%.",
            "source": {"kind": "system_of_record", "system": "crm"},
        },
        token=integration,
    )
    api.post(
        "/v1/memories",
        {
            "subject_id": "ACC-C-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "The customer says a 10% discount was agreed.",
            "source": {"kind": "customer_claim"},
        },
        token=agent,
    )
    everyone = api.token(
        "site-contrast",
        "all-1",
        ["reviewer", "agent", "auditor", "privacy_officer"],
        clearance="confidential",
    )
    console.sign_in(everyone, "review")
    console.find("li.review-item .diff ins")
    assert console.driver.execute_script(LOW_CONTRAST) == [], "review"
    console.find("li.review-item button[value=approve]").click()  # an error message on screen
    console.wait_text("li.review-item .status", "evidence")
    assert console.driver.execute_script(LOW_CONTRAST) == [], "review error"
    for screen, ready in {
        "subject/ACC-C-1": ".memory-card",
        "audit": "#audit-events",
        "privacy": "#erasure-steps",
    }.items():
        console.driver.get(f"{console.base}/console/#/{screen}")
        console.wait(lambda d, css=ready: d.find_elements("css selector", css))
        assert console.driver.execute_script(LOW_CONTRAST) == [], screen
    console.driver.get(f"{console.base}/console/#/audit")
    console.find("#main form button[type=submit]").click()
    console.find("#chain-status.ok")
    assert console.driver.execute_script(LOW_CONTRAST) == [], "audit loaded"
    # and the check itself sees a pale heading (it is not vacuous)
    console.driver.execute_script("document.getElementById('screen-title').style.color = '#bbbbbb'")
    assert any(line.startswith("H1") for line in console.driver.execute_script(LOW_CONTRAST))
