"""Builders the contract tests share: records, vectors, a committed write."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

from agent_memory.domain.hashing import content_hash
from agent_memory.domain.records import MemoryRecord, new_id

T0 = datetime(2026, 9, 1, 12, 0, tzinfo=UTC)
DIM = 384


def vector(seed: int, *, near: np.ndarray | None = None, noise: float = 0.0) -> np.ndarray:
    """A unit vector; with `near`, that vector plus `noise` of a random direction."""
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(DIM)
    if near is not None:
        v = near + noise * v / np.linalg.norm(v)
    return (v / np.linalg.norm(v)).astype(np.float32)


def record(tenant: str, subject: str = "S-1", **kw: Any) -> MemoryRecord:
    base: dict[str, Any] = {
        "id": new_id("mem"),
        "tenant_id": tenant,
        "subject_id": subject,
        "type": "fact",
        "category": "STAKEHOLDER",
        "slot": "stakeholder.primary_contact",
        "content": "Dana Ortiz is the primary contact",
        "value": {"name": "Dana Ortiz"},
        "source": {"kind": "customer_confirmed", "system": "crm"},
        "actor": "agent-1",
        "authority": "customer_confirmed",
        "confidence": 0.85,
        "status": "active",
        "created_at": T0,
        "effective_at": T0,
    }
    base.update(kw)
    if base["status"] == "pending_approval" or base["authority"] in ("customer_claim", "agent_inference"):
        # INV-MEM-02: an unverified note carries its bound (the table refuses one without)
        base.setdefault("expires_at", base["created_at"] + timedelta(days=180))
    base.setdefault(
        "content_hash", content_hash(base["subject_id"], base["type"], base["slot"], base["content"])
    )
    return MemoryRecord.model_validate(base)


def put(store: Any, tenant: str, *records: MemoryRecord, embedding: np.ndarray | None = None) -> None:
    with store.tenant(tenant) as s:
        for r in records:
            s.insert_record(r, embedding)
