"""The nightly digest of expiring episodes (domain/digest.py): before the purge expires a subject's
episodes, one digest of them is written through the write gateway, so it is masked, screened,
deduplicated and audited like any memory, carries the sources' lineage keys (erasure finds it with
them), is no more authoritative than a customer's claim and no less sensitive than its sources."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Any

from agent_memory.domain.digest import DIGEST_SYSTEM, DigestSource, build_digest
from agent_memory.domain.enums import Authority, MemoryType, Role, Sensitivity
from agent_memory.domain.policy import PolicyProfile
from agent_memory.domain.records import MemoryWrite, Principal, Source
from agent_memory.observability import logger
from agent_memory.ports.store import MemoryStore
from agent_memory.services.write_gateway import WriteGateway

# Expiring episodes read per tenant and run; the rest are digested the next night (they expire
# after their digest is written, so none is lost waiting).
MAX_EPISODES_PER_RUN = 20_000
_MAX_LINEAGE = 50
_DIGESTER = "lifecycle-digest"


def digest_expiring_episodes(
    store: MemoryStore, gateway: WriteGateway, tenant_id: str, policy: PolicyProfile, now: datetime
) -> tuple[int, list[str]]:
    """Write one digest per subject with episodes expiring now; (digests written, the episode ids
    they cover). A subject whose digest could not be written is logged (by error kind) and its
    episodes expire all the same: retention is never extended to wait for a digest."""
    if not policy.digest_expiring_episodes:
        return 0, []
    with store.tenant(tenant_id) as s:
        rows = s.expiring_of_type(MemoryType.EPISODE.value, now, MAX_EPISODES_PER_RUN)
    by_subject: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_subject[r["subject_id"]].append(r)
    principal = Principal(
        sub=_DIGESTER,
        tenant_id=tenant_id,
        roles=frozenset({Role.AGENT, Role.INTEGRATION}),
        clearance=Sensitivity.RESTRICTED,
    )
    written, covered = 0, []
    for subject_id, episodes in by_subject.items():
        write = _digest_write(subject_id, episodes, policy, now)
        if write is None:
            continue
        try:
            result = gateway.write(principal, write)
        except Exception as exc:  # one subject's failure leaves its episodes for the next run
            logger.warning("digest not written", extra={"error": type(exc).__name__})
            continue
        if result.memory is not None:
            written += 1
            covered += [e["id"] for e in episodes]
    return written, covered


def _digest_write(
    subject_id: str, episodes: list[dict[str, Any]], policy: PolicyProfile, now: datetime
) -> MemoryWrite | None:
    content = build_digest(
        [
            DigestSource(e["effective_at"], e["content"], e["source_system"] == DIGEST_SYSTEM)
            for e in episodes
        ],
        policy.digest_max_chars,
    )
    if content is None:
        return None
    # the least authoritative source's kind, and a summary is never more than a customer's claim
    authority = min((Authority(e["authority"]) for e in episodes), key=lambda a: a.rank)
    authority = min(authority, Authority.CUSTOMER_CLAIM, key=lambda a: a.rank)
    lineage = sorted({k for e in episodes for k in (e["lineage_keys"] or [])} | {e["id"] for e in episodes})
    newest = max(episodes, key=lambda e: (e["effective_at"], e["id"]))
    return MemoryWrite(
        subject_id=subject_id,
        type=MemoryType.EPISODE,
        content=content,
        source=Source(kind=authority, system=DIGEST_SYSTEM, reference=f"{len(episodes)} episodes"),
        effective_at=now,
        confidence=min(float(e["confidence"]) for e in episodes),
        sensitivity=max((Sensitivity(e["sensitivity"]) for e in episodes), key=lambda v: v.rank),
        lineage_keys=lineage[:_MAX_LINEAGE],
        idempotency_key=f"digest:{newest['id']}",
        extractor="digest",
        extractor_version="1",
    )
