"""The deletion registry: what was erased or deleted, kept outside the database so a restore cannot
bring it back (the product requirements: "restores replay the tombstone registry before serving traffic").

An entry names an erasure or a single memory's deletion by ids and digests only: the tenant, the
erasure or memory id, and the subject as a keyed digest (a subject id may be personal data, and an
unkeyed hash of one is a guess away from it). Entries are chained like the audit log: each holds
the hash of the one before, so a removed or edited entry shows.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import asdict, dataclass
from typing import Any, Literal

from agent_memory.domain.hashing import GENESIS_HASH, chain_hash

EntryKind = Literal["erasure", "memory_deletion"]
ERASURE: EntryKind = "erasure"
MEMORY_DELETION: EntryKind = "memory_deletion"


def subject_digest(key: bytes, tenant_id: str, subject_id: str) -> str:
    """The subject as the registry names it: HMAC-SHA256 under the registry's key, per tenant."""
    return hmac.new(key, f"{tenant_id}\x1f{subject_id}".encode(), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class RegistryEntry:
    seq: int
    kind: EntryKind
    tenant_id: str
    ref: str  # the erasure id, or the deleted memory's id
    subject_digest: str
    at: str  # ISO 8601, UTC
    prev_hash: str
    hash: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _hashed_fields(
    seq: int, kind: str, tenant_id: str, ref: str, subject_digest: str, at: str
) -> dict[str, Any]:
    return {
        "seq": seq,
        "kind": kind,
        "tenant_id": tenant_id,
        "ref": ref,
        "subject_digest": subject_digest,
        "at": at,
    }


def next_entry(
    previous: RegistryEntry | None, *, kind: EntryKind, tenant_id: str, ref: str, subject_digest: str, at: str
) -> RegistryEntry:
    """The entry that follows `previous` (None: the first), its hash linked to the one before."""
    seq = previous.seq + 1 if previous else 1
    prev_hash = previous.hash if previous else GENESIS_HASH
    fields = _hashed_fields(seq, kind, tenant_id, ref, subject_digest, at)
    return RegistryEntry(**fields, prev_hash=prev_hash, hash=chain_hash(prev_hash, fields))


def entry_from_dict(data: dict[str, Any]) -> RegistryEntry:
    return RegistryEntry(
        seq=int(data["seq"]),
        kind=data["kind"],
        tenant_id=str(data["tenant_id"]),
        ref=str(data["ref"]),
        subject_digest=str(data["subject_digest"]),
        at=str(data["at"]),
        prev_hash=str(data["prev_hash"]),
        hash=str(data["hash"]),
    )


def chain_problem(entries: list[RegistryEntry]) -> str | None:
    """Why the entries (read in order from the first) are not an unbroken chain; None when they are."""
    prev_hash, expected_seq = GENESIS_HASH, 1
    for e in entries:
        if e.seq != expected_seq:
            return f"entry {expected_seq} missing (found {e.seq})"
        if e.kind not in (ERASURE, MEMORY_DELETION):
            return f"entry {e.seq}: unknown kind"
        fields = _hashed_fields(e.seq, e.kind, e.tenant_id, e.ref, e.subject_digest, e.at)
        if e.prev_hash != prev_hash or e.hash != chain_hash(prev_hash, fields):
            return f"entry {e.seq}: hash does not match its content or its predecessor"
        prev_hash, expected_seq = e.hash, e.seq + 1
    return None
