"""Screenshots of each console screen, written next to this file (docs/console/*.png).

    .venv/bin/python docs/console/screenshots.py

It starts what `memory serve` starts (an embedded PostgreSQL in a temporary folder, moto for the
queue and bucket, the local front) on a free port, loads a small demo tenant through the public
API, and drives Debian's headless Chromium (/usr/bin/chromium) through each screen. Nothing is
left behind but the images.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

OUT = Path(__file__).resolve().parent
TENANT = "acme"
SUBJECT = "ACC-CORP-4812"


def start_stack(root: Path) -> tuple[Any, Any, Any, str, str]:
    """Database, local AWS, container and local front; (pg, aws, server, base url, secret)."""
    import psycopg

    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.config import Settings
    from agent_memory.local.aws import start_local_aws
    from agent_memory.local.embedded import embedded_server
    from agent_memory.local.server import LocalApi, make_http_server, serve_in_thread

    pg = embedded_server(root / "pg", cleanup_mode="delete")
    with psycopg.connect(pg.get_uri(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "console_demo"')
    aws = start_local_aws(region="us-east-1", max_receive_count=3, visibility_timeout_s=0)
    secret = "console-screenshots-" + "x" * 32
    settings = Settings(
        database_url=pg.get_uri("console_demo"),
        data_dir=root / "data",
        jwt_secret=secret,
        aws_endpoint_url=aws.endpoint_url,
        extraction_queue_url=aws.queue_url,
        transcripts_bucket=aws.bucket,
    )
    container = build_container(settings)
    set_container(container)
    server = make_http_server(LocalApi(secret, settings.max_body_bytes), "127.0.0.1", 0)
    serve_in_thread(server)
    host, port = server.server_address[:2]
    return pg, aws, (server, container), f"http://{host}:{port}", secret


def call(base: str, token: str, method: str, path: str, body: Any = None) -> Any:
    req = urllib.request.Request(  # noqa: S310 (the local front, http only)
        base + path,
        data=json.dumps(body).encode() if body is not None else None,
        method=method,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:  # noqa: S310 (the local front)
        return json.loads(resp.read() or b"null")


def seed(base: str, secret: str, container: Any) -> dict[str, str]:
    from agent_memory.api.identity import issue_token

    def token(sub: str, roles: list[str], clearance: str = "confidential") -> str:
        return issue_token(secret, tenant_id=TENANT, sub=sub, roles=roles, clearance=clearance)

    integration, agent = token("crm-sync", ["integration"]), token("agent-7", ["agent"])
    post = lambda path, body, t=agent: call(base, t, "POST", path, body)  # noqa: E731
    post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.seat_price",
            "content": "Enterprise license renewed for 500 seats at $42/seat/month.",
            "value": {"seats": 500, "price_per_seat_month": 42, "currency": "USD"},
            "source": {"kind": "system_of_record", "system": "crm", "reference": "CTR-118"},
            "effective_at": "2026-09-01T00:00:00Z",
            "confidence": 1.0,
        },
        integration,
    )
    post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "preference",
            "category": "PREFERENCE",
            "slot": "contact.channel",
            "content": "Send renewal paperwork by email, not phone.",
            "source": {"kind": "customer_confirmed"},
        },
    )
    post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "STAKEHOLDER",
            "slot": "stakeholder.economic_buyer",
            "content": "Dana Ruiz (VP Operations) signs off on renewals.",
            "source": {"kind": "customer_confirmed"},
        },
    )
    claim = post(
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.seat_price",
            "content": "In the QBR the customer said we agreed to $35/seat/month with a 20% discount.",
            "source": {"kind": "customer_claim", "system": "meeting", "reference": "qbr-2026-10"},
            "effective_at": "2026-10-02T15:00:00Z",
            "confidence": 0.6,
        },
    )
    post(
        "/v1/memories",
        {
            "subject_id": "ACC-GLOBEX-77",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.term",
            "content": "Customer claims the contract term was extended to 36 months.",
            "source": {"kind": "customer_claim", "system": "email", "reference": "thread-5521"},
            "confidence": 0.5,
        },
    )
    post(  # a slot the system of record owns: its live value overrides this in retrieval
        "/v1/memories",
        {
            "subject_id": SUBJECT,
            "type": "fact",
            "category": "ACCOUNT_PROFILE",
            "slot": "account.plan_tier",
            "content": "The account is on the Business plan.",
            "source": {"kind": "system_of_record", "system": "crm", "reference": "ACC-CORP-4812"},
        },
        integration,
    )
    post("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal pricing"})
    for i in range(2):
        post(
            "/v1/memories",
            {
                "subject_id": "ACC-LEAVER-3",
                "type": "episode",
                "content": f"Support call {i}.",
                "source": {"kind": "customer_confirmed"},
            },
        )
    from agent_memory.adapters.sor.local import LocalSystemOfRecord

    if isinstance(container.system_of_record, LocalSystemOfRecord):
        container.system_of_record.set_values(TENANT, SUBJECT, {"plan_tier": "enterprise"})
    return {
        "claim": claim["memory"]["id"],
        "reviewer": token("rev-1", ["reviewer", "agent"]),
        "auditor": token("aud-1", ["auditor"]),
        "privacy": token("dpo-1", ["privacy_officer"]),
    }


def browser(profile: Path) -> Any:
    options = Options()
    options.binary_location = "/usr/bin/chromium"
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--hide-scrollbars",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def shoot(driver: Any, name: str) -> None:
    height = driver.execute_script("return Math.min(document.documentElement.scrollHeight, 2400)")
    driver.set_window_size(1280, max(700, int(height)))
    driver.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.3)  # the last layout pass
    driver.save_screenshot(str(OUT / f"{name}.png"))
    driver.set_window_size(1280, 900)
    print(f"wrote docs/console/{name}.png")


def main() -> int:
    root = Path(tempfile.mkdtemp(prefix="console-shots-"))
    pg, aws, (server, container), base, secret = start_stack(root)
    driver = browser(root / "chromium")
    wait = WebDriverWait(driver, 30)

    def find(css: str) -> Any:
        return wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css)))

    def sign_in(token: str, screen: str) -> None:
        driver.get(f"{base}/console/")
        driver.execute_script("sessionStorage.clear()")
        driver.get("about:blank")
        driver.get(f"{base}/console/#/{screen}")
        find("textarea[name=token]").send_keys(token)
        find("#main form button[type=submit]").click()
        find("#sign-out")

    try:
        ids = seed(base, secret, container)
        driver.get(f"{base}/console/")
        find("#dev-form")
        shoot(driver, "sign-in")

        sign_in(ids["reviewer"], "review")
        find(f'li[data-memory-id="{ids["claim"]}"] input[name=evidence_ref]').send_keys(
            "signed-amendment-2026-118"
        )
        shoot(driver, "review-queue")
        find(f'li[data-memory-id="{ids["claim"]}"] button[value=approve]').click()
        find("#decision-result a")
        shoot(driver, "review-decided")

        driver.get(f"{base}/console/#/subject/{SUBJECT}")
        find("li.version")
        find(".preview button[type=submit]").click()
        find("#copilot-context")
        shoot(driver, "subject")

        sign_in(ids["auditor"], "audit")
        find("#main form button[type=submit]").click()
        find("#chain-status.ok")
        shoot(driver, "audit")

        sign_in(ids["privacy"], "privacy")
        form = find("form[aria-labelledby=erasure-heading]")
        form.find_element(By.CSS_SELECTOR, "input[name=subject_id]").send_keys("ACC-LEAVER-3")
        form.find_element(By.CSS_SELECTOR, "input[name=request_reference]").send_keys("DSR-991")
        form.find_element(By.CSS_SELECTOR, "input[name=confirm]").click()
        form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        WebDriverWait(driver, 90).until(ec.visibility_of_element_located((By.ID, "download-receipt")))
        shoot(driver, "privacy")
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
        container.close()
        aws.stop()
        pg.cleanup()
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
