"""The recovery drill an operator runs locally (docs/operations.md): `memory backup`, an erasure and
a deletion through the API, `memory restore` (refused while `memory serve` runs on the same data,
then replaying the deletion registry), and the restarted service serves none of what was removed."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.api.identity import local_secret
from harness import ApiClient
from serve_process import MEMORY, memory_serve

pytestmark = pytest.mark.e2e
TENANT = "drill"
ERASED, KEPT = "ACC-ERASED-4410", "ACC-KEPT-5120"


def memory_command(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMORY), *args], env=env, capture_output=True, text=True, timeout=600)


def write(api: ApiClient, token: str, subject: str, slot: str, content: str) -> str:
    reply = api.post(
        "/v1/memories",
        {
            "subject_id": subject,
            "type": "preference",
            "slot": f"preference.{slot}",
            "content": content,
            "source": {"kind": "customer_confirmed"},
        },
        token=token,
    )
    assert reply.status == 201, reply.body
    return str(reply.body["memory"]["id"])


@pytest.fixture
def data_dir() -> Iterator[Path]:
    """Outside pytest's own temporary folder, as the session's PostgreSQL is: a pytest run started
    meanwhile makes that folder private again, and the server (its own system user) loses it."""
    folder = Path(tempfile.mkdtemp(prefix="memory-drill-"))
    yield folder / "data"
    shutil.rmtree(folder, ignore_errors=True)


def test_backup_erase_restore_and_restart_serves_nothing_that_was_removed(data_dir: Path) -> None:
    archive = data_dir.parent / "drill.dump"
    with memory_serve(data_dir) as served:
        api = ApiClient(served.base, local_secret(data_dir, None))
        agent = api.token(TENANT, "copilot", ["agent"], "confidential")
        dpo = api.token(TENANT, "dpo", ["privacy_officer"], "confidential")
        # Given memories of two subjects, backed up while the service runs
        erased_id = write(api, agent, ERASED, "contact_channel", "Prefers to be contacted by email")
        deleted_id = write(api, agent, KEPT, "contact_channel", "Prefers to be contacted by phone")
        kept_id = write(api, agent, KEPT, "tone", "Prefers a casual tone in replies")
        backed_up = memory_command(served.env, "backup", str(archive))
        assert backed_up.returncode == 0, backed_up.stderr
        assert "pg_dump: dumping contents of table" in backed_up.stderr  # progress on stderr
        assert json.loads(backed_up.stdout)["bytes"] > 0
        # When the subject is erased and a memory of the other is deleted, after the backup
        started = api.post(f"/v1/subjects/{ERASED}/erasure", {"reason": "customer_request"}, token=dpo)
        assert started.status == 202, started.body
        deadline = time.monotonic() + 120
        while api.get(f"/v1/erasures/{started.body['erasure_id']}", token=dpo).body["status"] == "running":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert (
            api.request("DELETE", f"/v1/memories/{deleted_id}", {"reason": "asked"}, token=agent).status
            == 200
        )
        # ... a restore while the service runs on the same data is refused, and changes nothing
        refused = memory_command(served.env, "restore", str(archive))
        assert refused.returncode == 2 and "stop it first" in refused.stderr
        assert api.get(f"/v1/memories/{erased_id}", token=agent).status == 404
        env = served.env
    # ... and once it is stopped, the backup is restored
    restored = memory_command(env, "restore", str(archive))
    assert restored.returncode == 0, restored.stderr
    assert "pg_restore: processing data for table" in restored.stderr
    report = json.loads(restored.stdout)["replay"]
    assert report["tenants"][TENANT]["erasures_reapplied"] == 1
    assert report["tenants"][TENANT]["memories_reapplied"] == 1
    # Then the restarted service serves neither the erased subject nor the deleted memory
    with memory_serve(data_dir) as served:
        api = ApiClient(served.base, local_secret(data_dir, None))
        agent = api.token(TENANT, "copilot", ["agent"], "confidential")
        auditor = api.token(TENANT, "auditor", ["auditor"], "confidential")
        assert api.get(f"/v1/memories/{erased_id}", token=agent).status == 404
        assert api.get(f"/v1/subjects/{ERASED}/memories", token=agent).body["memories"] == []
        listed: Any = api.get(f"/v1/subjects/{KEPT}/memories", token=agent).body
        assert [m["id"] for m in listed["memories"] if m["status"] == "active"] == [kept_id]
        assert not api.get(f"/v1/memories/{deleted_id}", token=agent).body.get("content")
        # ... and the audit trail holds the replay
        events = api.get("/v1/audit?limit=500", token=auditor).body["events"]
        assert [e["event_type"] for e in events].count("deletion_registry_replayed") == 1
