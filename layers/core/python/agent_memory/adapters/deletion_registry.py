"""The deletion registry's two homes: a JSON-lines file beside the local data (outside the
PostgreSQL data folder, so a restore of the database leaves it alone) and an S3 bucket with object
lock in AWS (one object per entry, written only if absent: no entry is ever overwritten, and the
lock keeps each for the bucket's retention)."""

from __future__ import annotations

import fcntl
import json
import os
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.domain.deletion_registry import (
    EntryKind,
    RegistryEntry,
    entry_from_dict,
    next_entry,
    subject_digest,
)
from agent_memory.domain.errors import Unavailable

REGISTRY_FILE = "deletion-registry.jsonl"
KEY_FILE = "deletion-registry.key"
S3_PREFIX = "entries/"
_APPEND_ATTEMPTS = 5


def _now() -> str:
    return datetime.now(UTC).isoformat()


def local_registry_key(folder: Path) -> bytes:
    """The key the local registry digests subjects with: generated once into `folder` (0600)."""
    path = folder / KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process made it first
        else:
            with os.fdopen(fd, "w") as f:
                f.write(secrets.token_hex(32))
    return bytes.fromhex(path.read_text().strip())


class FileDeletionRegistry:
    """One JSON object a line, appended under an exclusive lock and synced to disk before the
    append returns. `key`: the digest key, or what reads it on first use (nothing is created in
    the data folder until something is erased, deleted or replayed)."""

    def __init__(self, path: Path, key: bytes | Callable[[], bytes]) -> None:
        self.path = path
        self._key_source = key

    def subject_digest(self, tenant_id: str, subject_id: str) -> str:
        if callable(self._key_source):
            self._key_source = self._key_source()
        return subject_digest(self._key_source, tenant_id, subject_id)

    @contextmanager
    def _locked(self) -> Iterator[IO[str]]:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a+", encoding="utf-8") as f:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
                try:
                    yield f
                finally:
                    fcntl.flock(f.fileno(), fcntl.LOCK_UN)
        except OSError as exc:
            raise Unavailable(f"deletion registry not writable: {exc.strerror or exc}") from exc

    def append(self, *, kind: EntryKind, tenant_id: str, ref: str, subject_digest: str) -> RegistryEntry:
        with self._locked() as f:
            f.seek(0)
            last = _last_line(f)
            previous = entry_from_dict(json.loads(last)) if last else None
            entry = next_entry(
                previous, kind=kind, tenant_id=tenant_id, ref=ref, subject_digest=subject_digest, at=_now()
            )
            f.seek(0, os.SEEK_END)
            f.write(json.dumps(entry.as_dict(), separators=(",", ":")) + "\n")
            f.flush()
            os.fsync(f.fileno())
        return entry

    def entries(self) -> list[RegistryEntry]:
        if not self.path.exists():
            return []
        try:
            lines = self.path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise Unavailable(f"deletion registry not readable: {exc.strerror or exc}") from exc
        return [entry_from_dict(json.loads(line)) for line in lines if line.strip()]


def _last_line(f: IO[str]) -> str | None:
    last = None
    for line in f:
        if line.strip():
            last = line
    return last


class S3DeletionRegistry:
    """Entries as objects `entries/<seq>.json`, each put only if its key is free (S3 conditional
    write): two appends racing for the same number, one wins and the other takes the next."""

    def __init__(self, bucket: str, key: bytes, s3: Any) -> None:
        self.bucket = bucket
        self._key = key
        self.s3 = s3
        self._last_key: str | None = None  # the newest entry this instance has seen

    def subject_digest(self, tenant_id: str, subject_id: str) -> str:
        return subject_digest(self._key, tenant_id, subject_id)

    def _keys(self, start_after: str | None = None) -> list[str]:
        keys: list[str] = []
        paginator = self.s3.get_paginator("list_objects_v2")
        extra = {"StartAfter": start_after} if start_after else {}
        for page in paginator.paginate(Bucket=self.bucket, Prefix=S3_PREFIX, **extra):
            keys += [o["Key"] for o in page.get("Contents", [])]
        return sorted(keys)

    def _tail(self) -> RegistryEntry | None:
        """The newest entry: listed after the newest this instance saw (a warm function lists only
        what was added since), read once."""
        newer = self._keys(start_after=self._last_key)
        if newer:
            self._last_key = newer[-1]
        return self._get(self._last_key) if self._last_key else None

    def _get(self, key: str) -> RegistryEntry:
        body = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        return entry_from_dict(json.loads(body))

    def append(self, *, kind: EntryKind, tenant_id: str, ref: str, subject_digest: str) -> RegistryEntry:
        try:
            for _ in range(_APPEND_ATTEMPTS):
                previous = self._tail()
                entry = next_entry(
                    previous,
                    kind=kind,
                    tenant_id=tenant_id,
                    ref=ref,
                    subject_digest=subject_digest,
                    at=_now(),
                )
                try:
                    self.s3.put_object(
                        Bucket=self.bucket,
                        Key=f"{S3_PREFIX}{entry.seq:012d}.json",
                        Body=json.dumps(entry.as_dict(), separators=(",", ":")).encode(),
                        ContentType="application/json",
                        IfNoneMatch="*",
                        ChecksumAlgorithm="SHA256",  # object lock requires an integrity checksum
                    )
                    self._last_key = f"{S3_PREFIX}{entry.seq:012d}.json"
                    return entry
                except ClientError as err:
                    if err.response.get("Error", {}).get("Code") not in (
                        "PreconditionFailed",
                        "ConditionalRequestConflict",
                    ):
                        raise
            raise Unavailable("deletion registry: appends kept racing, try again")
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable(f"deletion registry not writable: {type(exc).__name__}") from exc

    def entries(self) -> list[RegistryEntry]:
        try:
            return [self._get(k) for k in self._keys()]
        except (ClientError, BotoCoreError) as exc:
            raise Unavailable(f"deletion registry not readable: {type(exc).__name__}") from exc
