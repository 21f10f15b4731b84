"""The audit and privacy screens in a real browser: an auditor sees the hash chain verified in the
page and a tampered event flagged; a privacy officer erases a subject, follows the steps and
downloads the receipt."""

from __future__ import annotations

import json
import time
from pathlib import Path

import psycopg
import pytest

pytestmark = pytest.mark.e2e


def remember(api, token: str, subject: str, content: str, **extra: object):
    body = {
        "subject_id": subject,
        "type": "episode",
        "content": content,
        "source": {"kind": "customer_confirmed"},
    }
    reply = api.post("/v1/memories", {**body, **extra}, token=token)
    assert reply.status == 201, reply.body
    return reply.body


def seed_trail(api, tenant: str) -> None:
    """A trail with writes, a retrieval (scores in its payload), a pending claim and an approval."""
    agent = api.token(tenant, "agent-7", ["agent"], clearance="confidential")
    for i in range(3):
        remember(api, agent, "ACC-AUD-1", f"Call {i}: the customer asked about SSO (ünïcode — “quotes”).")
    api.post("/v1/retrieve", {"subject_id": "ACC-AUD-1", "query": "SSO"}, token=agent)
    claim = api.post(
        "/v1/memories",
        {
            "subject_id": "ACC-AUD-1",
            "type": "fact",
            "category": "CONTRACT_COMMERCIAL",
            "slot": "contract.discount",
            "content": "Customer says a 15% discount was agreed.",
            "source": {"kind": "customer_claim"},
            "confidence": 0.55,
        },
        token=agent,
    )
    reviewer = api.token(tenant, "rev-1", ["reviewer"], clearance="confidential")
    approved = api.post(
        f"/v1/memories/{claim.body['memory']['id']}/approve", {"evidence_ref": "amend-15"}, token=reviewer
    )
    assert approved.status == 200, approved.body


def wait_for_file(folder: Path, pattern: str, timeout: float = 20.0) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [p for p in folder.glob(pattern) if not p.name.endswith(".crdownload")]
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError(f"no {pattern} downloaded into {folder}")


def test_auditor_sees_the_chain_verified_then_a_tampered_event_flagged(console, api, database_url, browser):
    # Given a tenant's trail of several kinds of events
    tenant = "au-chain"
    seed_trail(api, tenant)
    auditor = api.token(tenant, "aud-1", ["auditor"])

    # When the auditor loads it, the page recomputes every hash and finds the chain intact
    console.sign_in(auditor, "audit")
    assert [a.text for a in console.all("#nav a")] == ["Audit"]
    console.find("#main form button[type=submit]").click()
    verified = console.wait_text("#chain-status", "Chain")
    assert "Chain verified" in verified and "every link intact" in verified
    rows = console.all("#audit-events tbody tr")
    assert len(rows) >= 5 and not console.all("#audit-events tr.broken")

    # And the events export as JSON
    console.find("#main .actions button:nth-child(2)").click()
    exported = json.loads(wait_for_file(browser.download_dir, "audit-events*.json").read_text())
    assert [e["seq"] for e in exported] == list(range(1, len(exported) + 1))
    console.find("#main .actions button:nth-child(1)").click()
    lines = wait_for_file(browser.download_dir, "audit-events*.csv").read_text().splitlines()
    assert lines[0].startswith("seq,created_at,event_type,actor") and len(lines) == len(exported) + 1

    # When someone edits one event's reason directly in the database (bypassing the append-only rule)
    with psycopg.connect(database_url, autocommit=True) as conn:
        conn.execute("SET session_replication_role = replica")
        conn.execute(
            "UPDATE memory_events SET reason = 'nothing_to_see' WHERE tenant_id = %s AND seq = 2", (tenant,)
        )

    # Then reloading flags the chain broken at that event, first
    console.find("#main form button[type=submit]").click()
    broken = console.wait_text("#chain-status", "broken")
    assert "first broken link is event 2" in broken and "hash does not match" in broken
    flagged = console.all("#audit-events tr.broken")
    assert [r.get_attribute("data-seq") for r in flagged] == ["2"]
    # And the server's own check agrees
    from agent_memory.bootstrap import get_container

    report = get_container().reads.verify_audit(tenant)
    assert not report.ok and report.broken_at_seq == 2


def test_privacy_officer_erases_a_subject_follows_the_steps_and_downloads_the_receipt(console, api, browser):
    # Given a subject with memories
    tenant, subject = "pv-erase", "ACC-ERASE-1"
    agent = api.token(tenant, "agent-7", ["agent"])
    for i in range(3):
        remember(api, agent, subject, f"Episode {i} with the customer.")

    # When the privacy officer fills in the erasure (reason, reference, confirmation) and submits
    console.sign_in(api.token(tenant, "dpo-1", ["privacy_officer"]), "privacy")
    assert [a.text for a in console.all("#nav a")] == ["Privacy"]
    form = console.find("form[aria-labelledby=erasure-heading]")
    form.find_element("css selector", "input[name=subject_id]").send_keys(subject)
    form.find_element("css selector", "input[name=request_reference]").send_keys("DSR-991")
    form.find_element("css selector", "button[type=submit]").click()
    console.wait_text("form[aria-labelledby=erasure-heading] .status", "Confirm the erasure")
    form.find_element("css selector", "input[name=confirm]").click()
    form.find_element("css selector", "button[type=submit]").click()

    # Then the steps show live and the verified receipt is offered for download
    console.find("#download-receipt", timeout=60).click()
    steps = console.all("#erasure-steps li")
    assert steps and all("succeeded" in s.text for s in steps)
    receipt_file = wait_for_file(browser.download_dir, "erasure-receipt-*.json")
    receipt = json.loads(receipt_file.read_text())
    assert receipt["status"] == "verified"
    assert receipt["receipt"]["subject_id"] == subject and receipt["receipt"]["records"] >= 3
    assert set(receipt["receipt"]["verification"].values()) == {0}

    # And the subject is gone from the API
    left = api.get(f"/v1/subjects/{subject}/memories", token=agent)
    assert left.body["memories"] == []


def test_privacy_officer_places_and_lifts_a_legal_hold_and_exports_a_subject(console, api, browser):
    tenant, subject = "pv-hold", "ACC-HOLD-1"
    agent = api.token(tenant, "agent-7", ["agent"])
    remember(api, agent, subject, "The customer asked for a call back.")
    console.sign_in(api.token(tenant, "dpo-1", ["privacy_officer"]), "privacy")

    holds = console.find("form[aria-labelledby=holds-heading]")
    holds.find_element("css selector", "input[name=hold_id]").send_keys(subject)
    holds.find_element("css selector", "input[name=hold_reason]").send_keys("Case 2026-17")
    holds.find_element("css selector", "button[value=place]").click()
    console.wait_text("form[aria-labelledby=holds-heading] .status", f"placed on {subject}")
    officer = api.token(tenant, "dpo-1", ["privacy_officer"])
    assert api.get(f"/v1/subjects/{subject}/export", token=officer).body["legal_hold"]["held"] is True

    holds.find_element("css selector", "button[value=lift]").click()
    console.wait_text("form[aria-labelledby=holds-heading] .status", f"lifted from {subject}")
    assert api.get(f"/v1/subjects/{subject}/export", token=officer).body["legal_hold"]["held"] is False

    form = console.find("form[aria-labelledby=export-heading]")
    form.find_element("css selector", "input[name=subject_id]").send_keys(subject)
    form.find_element("css selector", "button[type=submit]").click()
    exported = json.loads(wait_for_file(browser.download_dir, f"subject-export-{subject}.json").read_text())
    assert "The customer asked for a call back." in json.dumps(exported)
