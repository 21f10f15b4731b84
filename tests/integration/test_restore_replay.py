"""A restore never brings an erased subject or a deleted memory back (seed 002: "restores replay
the tombstone registry before serving traffic"): backup, erasure and deletion, restore, replay, on
the real embedded PostgreSQL with the real pg_dump and pg_restore."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from agent_memory.adapters.deletion_registry import REGISTRY_FILE, FileDeletionRegistry, local_registry_key
from agent_memory.bootstrap import build_container, replay_deletions
from agent_memory.config import Settings
from agent_memory.domain.deletion_registry import chain_problem
from agent_memory.domain.enums import Role, Sensitivity
from agent_memory.domain.errors import NotFound, Unavailable
from agent_memory.domain.records import MemoryWrite, Principal
from agent_memory.local.backup import backup, restore
from agent_memory.services.erasure import ErasureRequest, LocalErasureRunner
from agent_memory.services.forget import ForgetRequest
from agent_memory.services.retrieval import RetrieveRequest
from harness import create_database

pytestmark = pytest.mark.integration
TENANT = "drill"
ERASED = "ACC-ERASED-7731"
KEPT = "ACC-KEPT-2208"
AGENT = Principal(
    sub="agent", tenant_id=TENANT, roles=frozenset({Role.AGENT}), clearance=Sensitivity.RESTRICTED
)
DPO = Principal(
    sub="dpo", tenant_id=TENANT, roles=frozenset({Role.PRIVACY_OFFICER}), clearance=Sensitivity.RESTRICTED
)
AUDITOR = Principal(
    sub="auditor", tenant_id=TENANT, roles=frozenset({Role.AUDITOR}), clearance=Sensitivity.RESTRICTED
)


def write(container: Any, subject: str, content: str, slot: str) -> str:
    body = {
        "subject_id": subject,
        "type": "preference",
        "slot": f"preference.{slot}",
        "content": content,
        "source": {"kind": "customer_confirmed"},
    }
    result = container.gateway.write(AGENT, MemoryWrite.model_validate(body))
    assert result.memory is not None, result
    return str(result.memory.id)


def erase(container: Any, subject: str) -> None:
    started = container.erasure.request(DPO, subject, ErasureRequest(reason="customer_request"))
    deadline = time.monotonic() + 60
    while container.erasure.status(DPO, started["erasure_id"])["status"] == "running":
        assert time.monotonic() < deadline, "the erasure did not finish"
        time.sleep(0.1)
    assert container.erasure.status(DPO, started["erasure_id"])["status"] == "verified"


def retrieved_ids(container: Any, subject: str) -> set[str]:
    # every slot asked for by name: served whatever the query's relevance
    slots = ["preference.contact_channel", "preference.tone", "preference.contact_time"]
    found = container.broker.retrieve(
        AGENT, RetrieveRequest(subject_id=subject, query="how to contact them", slots=slots)
    )
    return {m["id"] for m in found.memories}


def readable(container: Any, memory_id: str) -> bool:
    try:
        view = container.reads.get_memory(AGENT, memory_id)
    except NotFound:
        return False
    return bool(view.get("content"))


def exported_contents(container: Any, subject: str) -> list[str]:
    page = container.export.export(DPO, subject, cursor=None, limit=None)
    return [m.content for m in page.memories if m.content]


def replay_events(container: Any) -> list[dict[str, Any]]:
    page = container.reads.audit(
        AUDITOR, subject_id=None, memory_id=None, since=None, cursor=None, limit=1000
    )
    return [e for e in page.items if e["event_type"] == "deletion_registry_replayed"]


@pytest.fixture
def settings(pg_server: Any, tmp_path: Path) -> Settings:
    return Settings(
        database_url=create_database(pg_server),
        data_dir=tmp_path / "data",
        jwt_secret="test-secret-" + "x" * 32,
    )


def test_a_restore_brings_back_neither_the_erased_subject_nor_the_deleted_memory(
    settings: Settings, embedder: Any, tmp_path: Path
) -> None:
    # Given memories of two subjects, and a backup taken then
    first = build_container(settings, embedder=embedder)
    try:
        erased_ids = [
            write(first, ERASED, "Prefers to be contacted by email", "contact_channel"),
            write(first, ERASED, "Prefers a formal tone in replies", "tone"),
        ]
        deleted_id = write(first, KEPT, "Prefers to be contacted by phone", "contact_channel")
        kept_id = write(first, KEPT, "Prefers a casual tone in replies", "tone")
        archive = tmp_path / "before.dump"
        assert backup(settings, archive) > 0
        # When, after the backup, the subject writes once more and is erased, and one memory of the
        # other subject is deleted on request
        erased_ids.append(write(first, ERASED, "Prefers calls in the morning", "contact_time"))
        erase(first, ERASED)
        first.forget.forget(AGENT, deleted_id, ForgetRequest(reason="customer asked"))
    finally:
        first.close()
    # ... and the backup is restored
    restore(settings, archive)
    second = build_container(settings, embedder=embedder)
    try:
        # (the restored database holds them again: this is what the replay must undo)
        assert readable(second, erased_ids[0]) and readable(second, deleted_id)
        # ... and the registry is replayed, as every start does before answering
        report = replay_deletions(second)
        assert report is not None and report.chain_ok
        assert report.tenants[TENANT].erasures_reapplied == 1
        assert report.tenants[TENANT].memories_reapplied == 1

        # Then nothing of the erased subject comes back through retrieve, get or export
        assert retrieved_ids(second, ERASED) == set()
        assert not any(readable(second, i) for i in erased_ids)
        assert exported_contents(second, ERASED) == []
        # ... nor the deleted memory, while the other subject's other memory is still served
        assert retrieved_ids(second, KEPT) == {kept_id}
        assert not readable(second, deleted_id) and readable(second, kept_id)
        assert exported_contents(second, KEPT) == ["Prefers a casual tone in replies"]
        # ... and the replay is in the audit trail, ids and counts only
        (event,) = replay_events(second)
        assert event["payload"]["erasures_reapplied"] == 1 and event["payload"]["memories_reapplied"] == 1
        assert event["payload"]["memory_ids"] == [deleted_id]

        # When it is replayed again (the next start): nothing more happens
        again = replay_deletions(second)
        assert again is not None and again.tenants == {}
        assert len(replay_events(second)) == 1
    finally:
        second.close()


def test_the_registry_holds_ids_and_keyed_digests_only_in_an_unbroken_chain(
    settings: Settings, embedder: Any
) -> None:
    # Given a subject erased and a memory deleted
    container = build_container(settings, embedder=embedder)
    try:
        doomed = write(container, KEPT, "Prefers to be contacted by phone", "contact_channel")
        write(container, ERASED, "Prefers to be contacted by email", "contact_channel")
        container.forget.forget(AGENT, doomed, ForgetRequest(reason="customer asked"))
        erase(container, ERASED)
    finally:
        container.close()
    # Then the registry, beside the PostgreSQL folder and not in it, names neither subject
    path = settings.resolved_data_dir / REGISTRY_FILE
    text = path.read_text()
    assert ERASED not in text and KEPT not in text and "phone" not in text
    registry = FileDeletionRegistry(path, local_registry_key(settings.resolved_data_dir))
    entries = registry.entries()
    assert [e.kind for e in entries] == ["memory_deletion", "erasure"]
    assert entries[1].subject_digest == registry.subject_digest(TENANT, ERASED)
    assert chain_problem(entries) is None
    # When an entry is removed, the chain says so
    assert chain_problem(entries[1:]) == "entry 1 missing (found 2)"


def test_without_a_writable_registry_neither_a_deletion_nor_an_erasure_completes(
    settings: Settings, embedder: Any, tmp_path: Path
) -> None:
    # Given a registry that cannot be written (its folder is a file)
    (tmp_path / "not-a-folder").write_text("")
    container = build_container(settings, embedder=embedder)
    broken = FileDeletionRegistry(tmp_path / "not-a-folder" / REGISTRY_FILE, b"k" * 32)
    container.forget.registry = broken
    container.erasure.registry = broken
    try:
        memory_id = write(container, KEPT, "Prefers to be contacted by phone", "contact_channel")
        write(container, ERASED, "Prefers to be contacted by email", "contact_channel")
        # When the memory is deleted: the caller is told, and the memory is still there
        with pytest.raises(Unavailable):
            container.forget.forget(AGENT, memory_id, ForgetRequest(reason="customer asked"))
        assert readable(container, memory_id)
        # When the subject is erased: the erasure fails (never verified), nothing was removed
        container.erasure.start_workflow = None
        started = container.erasure.request(DPO, ERASED, ErasureRequest(reason="customer_request"))
        job = {"erasure_id": started["erasure_id"], "tenant_id": TENANT, "subject_id": ERASED}
        assert LocalErasureRunner(container.erasure, sleep=lambda s: None).run(job) == "failed"
        assert container.erasure.status(DPO, started["erasure_id"])["status"] == "failed"
        assert exported_contents(container, ERASED) == ["Prefers to be contacted by email"]
    finally:
        container.close()
