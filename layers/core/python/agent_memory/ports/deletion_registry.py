"""The deletion registry port: an append-only, hash-chained list outside the database (a file
beside the local data, an S3 bucket with object lock in AWS)."""

from __future__ import annotations

from typing import Protocol

from agent_memory.domain.deletion_registry import EntryKind, RegistryEntry


class DeletionRegistry(Protocol):
    def append(self, *, kind: EntryKind, tenant_id: str, ref: str, subject_digest: str) -> RegistryEntry:
        """Add one entry after the last, durably, or raise `Unavailable`."""
        ...

    def entries(self) -> list[RegistryEntry]:
        """Every entry, in order from the first."""
        ...

    def subject_digest(self, tenant_id: str, subject_id: str) -> str:
        """The keyed digest the registry names a subject by."""
        ...
