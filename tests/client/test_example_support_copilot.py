"""examples/support_copilot.py runs as the examples README says, against the local front with the
extraction worker polling: the second conversation recalls what the first left, and the promised
discount waits for a reviewer instead of being served."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_memory.local.worker import QueuePoller

pytestmark = pytest.mark.e2e

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "support_copilot.py"
SUBJECT = "ACC-DEMO-TEST1"


def run_example(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLE), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env or dict(os.environ),
    )


def test_the_support_copilot_remembers_across_sessions_and_holds_the_discount(api, local_aws):
    # Given the local front, its extraction worker, and an agent's token in MEMORY_TOKEN
    token = api.token("examples", "copilot", ["agent"], clearance="confidential")
    poller = QueuePoller(local_aws.queue_url, endpoint_url=local_aws.endpoint_url, region="us-east-1")
    env = {**os.environ, "MEMORY_URL": api.base, "MEMORY_TOKEN": token}
    # When the example runs
    poller.start()
    try:
        done = run_example("--subject", SUBJECT, env=env)
    finally:
        poller.stop()
    assert done.returncode == 0, done.stderr
    out = done.stdout
    first, second = out.split("Conversation 2")
    # Then the first conversation started with nothing on file and closed processed
    assert "I don't have anything on file yet." in first
    assert "session processed: admitted " in first
    # And the second recalled the email preference and the quote commitment
    assert "We'll keep to your preference (I prefer email communication" in second
    assert "On file: I'll send the renewal quote by Friday." in second
    assert "The discount is still waiting for approval by the account team." in second
    # And the service holds the preference as active, the discount only as pending approval
    listed = {
        status: api.get(f"/v1/subjects/{SUBJECT}/memories?status={status}", token=token).body["memories"]
        for status in ("active", "pending_approval")
    }
    active = {(r["type"], r.get("slot")) for r in listed["active"]}
    assert ("preference", "preference.contact_channel") in active
    assert not any("15%" in r["content"] for r in listed["active"])
    assert any(
        r["category"] == "CONTRACT_COMMERCIAL" and "15%" in r["content"] for r in listed["pending_approval"]
    )
    # And the review queue holds only that real commercial item: not the customer's question about
    # the quote, nor the agent's "I can't confirm a discount myself"
    assert len(listed["pending_approval"]) == 1, [r["content"] for r in listed["pending_approval"]]
    # And recall does not serve the held discount
    recalled = api.post("/v1/retrieve", {"subject_id": SUBJECT, "query": "renewal discount"}, token=token)
    assert "15%" not in recalled.body["context"]
    assert "waiting for approval (" in second and "15% discount" in second.split("waiting for approval (")[1]


def test_the_example_without_a_token_says_how_to_get_one():
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_TOKEN"}
    # When the example runs with no token
    done = run_example(env=env)
    # Then it exits 2 and prints the command that makes one
    assert done.returncode == 2
    assert "memory token --tenant acme --sub copilot --roles agent" in done.stderr


def test_the_example_without_a_service_says_so():
    env = {**os.environ, "MEMORY_TOKEN": "x.y.z"}
    # When nothing listens at the URL
    done = run_example("--url", "http://127.0.0.1:9", env=env)
    # Then it exits 1 naming the URL, before any conversation, without a traceback
    assert done.returncode == 1 and done.stdout == ""
    assert "no service at http://127.0.0.1:9" in done.stderr and "Traceback" not in done.stderr
