"""The deletion registry in S3 (moto): a bucket with object lock, one object per entry, written
only where no entry is, read back as an unbroken chain."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from agent_memory.adapters.deletion_registry import S3DeletionRegistry
from agent_memory.domain.deletion_registry import chain_problem

pytestmark = pytest.mark.integration
BUCKET = "agent-memory-deletion-registry"
KEY = b"r" * 32


@pytest.fixture
def s3(local_aws: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A locked bucket of its own on the suite's moto server (a `mock_aws` of its own would reset
    the backends that server shares, and with them the other tests' queue and bucket). Clients
    built without an endpoint (the composition root's) reach the same server."""
    global BUCKET
    BUCKET = f"deletion-registry-{uuid.uuid4().hex[:12]}"
    monkeypatch.setenv("AWS_ENDPOINT_URL", local_aws.endpoint_url)
    client = boto3.client("s3", region_name="us-east-1", endpoint_url=local_aws.endpoint_url)
    client.create_bucket(Bucket=BUCKET, ObjectLockEnabledForBucket=True)
    client.put_object_lock_configuration(
        Bucket=BUCKET,
        ObjectLockConfiguration={
            "ObjectLockEnabled": "Enabled",
            "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}},
        },
    )
    yield client


def test_entries_append_in_order_and_read_back_as_one_chain(s3: Any) -> None:
    # Given a registry on a locked bucket
    registry = S3DeletionRegistry(BUCKET, KEY, s3)
    # When an erasure and a deletion are recorded
    first = registry.append(
        kind="erasure", tenant_id="acme", ref="era_1", subject_digest=registry.subject_digest("acme", "S-1")
    )
    second = registry.append(
        kind="memory_deletion",
        tenant_id="acme",
        ref="mem_1",
        subject_digest=registry.subject_digest("acme", "S-2"),
    )
    # Then they read back in order, chained, each object under the bucket's lock
    entries = registry.entries()
    assert entries == [first, second] and chain_problem(entries) is None
    head = s3.head_object(Bucket=BUCKET, Key="entries/000000000002.json")
    assert head["ObjectLockMode"] == "GOVERNANCE"
    # ... and no object names the subject
    body = s3.get_object(Bucket=BUCKET, Key="entries/000000000001.json")["Body"].read().decode()
    assert "S-1" not in body


def test_two_writers_never_take_the_same_number(s3: Any) -> None:
    # Given two functions' registries on the same bucket, the second one behind (it saw one entry)
    one, two = S3DeletionRegistry(BUCKET, KEY, s3), S3DeletionRegistry(BUCKET, KEY, s3)
    one.append(kind="erasure", tenant_id="acme", ref="era_1", subject_digest="d1")
    original_keys = two._keys
    stale = original_keys()
    calls = {"n": 0}

    def first_listing_is_stale(start_after: str | None = None) -> list[str]:
        calls["n"] += 1
        return stale if calls["n"] == 1 else original_keys(start_after)

    two._keys = first_listing_is_stale  # type: ignore[method-assign]
    one.append(kind="erasure", tenant_id="acme", ref="era_2", subject_digest="d2")
    # When the one behind appends: its conditional put of number 2 is refused, it takes number 3
    entry = two.append(kind="memory_deletion", tenant_id="acme", ref="mem_9", subject_digest="d3")
    # Then no entry was overwritten and the chain is whole
    assert entry.seq == 3
    entries = one.entries()
    assert [e.ref for e in entries] == ["era_1", "era_2", "mem_9"] and chain_problem(entries) is None


def test_a_deleted_entry_shows_as_a_broken_chain(s3: Any) -> None:
    # Given three entries
    registry = S3DeletionRegistry(BUCKET, KEY, s3)
    for i in range(3):
        registry.append(kind="erasure", tenant_id="acme", ref=f"era_{i}", subject_digest=f"d{i}")
    # When the middle one is removed (by someone allowed to bypass governance retention)
    version = s3.head_object(Bucket=BUCKET, Key="entries/000000000002.json")["VersionId"]
    s3.delete_object(
        Bucket=BUCKET, Key="entries/000000000002.json", VersionId=version, BypassGovernanceRetention=True
    )
    # Then the chain says which is missing
    assert chain_problem(registry.entries()) == "entry 2 missing (found 3)"


def test_the_functions_registry_is_the_bucket_keyed_by_the_secret(s3: Any) -> None:
    # Given the settings the stack gives a function: the bucket and the key's secret
    from agent_memory.bootstrap import build_deletion_registry
    from agent_memory.config import Settings
    from agent_memory.domain.deletion_registry import subject_digest

    arn = boto3.client("secretsmanager", region_name="us-east-1").create_secret(
        Name=f"deletion-registry-key-{uuid.uuid4().hex[:8]}", SecretString="k" * 64
    )["ARN"]
    settings = Settings(
        environment="aws", deletion_registry_bucket=BUCKET, deletion_registry_key_secret_arn=arn
    )
    # When the composition root builds the registry and an erasure is recorded
    registry = build_deletion_registry(settings)
    assert isinstance(registry, S3DeletionRegistry)
    registry.append(
        kind="erasure", tenant_id="acme", ref="era_1", subject_digest=registry.subject_digest("acme", "S-1")
    )
    # Then the entry is in the bucket, the subject digested with the secret's key
    (entry,) = S3DeletionRegistry(BUCKET, b"other", s3).entries()
    assert entry.subject_digest == subject_digest(b"k" * 64, "acme", "S-1")
