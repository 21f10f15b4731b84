"""Nightly consolidation: duplicates and near-duplicates folded into one canonical record, and
observations promoted to review once independent sessions corroborate them (demoted otherwise).

Both passes run inside one tenant transaction that the lifecycle service opens.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from agent_memory.domain.enums import EventType
from agent_memory.domain.policy import PolicyProfile
from agent_memory.ports.rows import DuplicateGroup, NearDuplicatePair, ObservationRow
from agent_memory.ports.store import NewEvent, TenantSession

CORROBORATION_SIMILARITY = 0.85
CORROBORATION_SOURCES = 2
NEAR_DUPLICATE_WATERMARK = "near_duplicates"
NEAR_DUPLICATE_PAIRS_PER_RUN = 500


def merge_duplicates(s: TenantSession, policy: PolicyProfile, now: datetime) -> int:
    """Fold exact and near duplicates into the record each group keeps; how many were merged away."""
    groups = s.duplicate_groups(500)
    # Near duplicates: only memories written since the last complete pass, each against its
    # subject (the full pairwise pass is quadratic in a subject's size). The watermark moves
    # only when the pass found fewer pairs than its cap, and keeps an hour of overlap for
    # writes that committed late; it is read from the data (the newest memory seen), not a
    # clock; re-checking a pair is harmless.
    since = s.watermark(NEAR_DUPLICATE_WATERMARK)
    newest = s.newest_created_at()
    pairs = (
        s.near_duplicate_pairs(policy.near_duplicate_similarity, NEAR_DUPLICATE_PAIRS_PER_RUN, since)
        if policy.near_duplicate_similarity <= 1.0
        else []
    )
    if len(pairs) < NEAR_DUPLICATE_PAIRS_PER_RUN and newest is not None:
        s.set_watermark(NEAR_DUPLICATE_WATERMARK, newest - timedelta(hours=1))
    merged = 0
    for keep, others in merge_plan(groups, pairs).items():
        s.merge_into(keep, sorted(others), now)
        s.append_events(
            [
                NewEvent(
                    EventType.SUPERSEDED.value, "lifecycle", o, None, "consolidated", {"superseded_by": keep}
                )
                for o in sorted(others)
            ]
        )
        merged += len(others)
    return merged


def merge_plan(groups: list[DuplicateGroup], pairs: list[NearDuplicatePair]) -> dict[str, set[str]]:
    """Which record keeps which: an exact group keeps its first id; a near pair joins unless either
    side was already merged away (or the one to merge keeps others). A record is merged away once:
    the pairs come in no order, and (a, c) then (b, c) must not fold c into both."""
    merges: dict[str, set[str]] = defaultdict(set)
    for g in groups:
        merges[g["ids"][0]].update(g["ids"][1:])
    merged_away: set[str] = {m for ms in merges.values() for m in ms}
    for p in pairs:
        if p["keep"] not in merged_away and p["merge"] not in merges and p["merge"] not in merged_away:
            merges[p["keep"]].add(p["merge"])
            merged_away.add(p["merge"])
    return merges


def weigh_observations(s: TenantSession) -> tuple[int, int]:
    """Promote to review each observation that another session of the same subject corroborates
    (similar enough); demote the rest. Returns (promoted, demoted)."""
    by_subject: dict[str, list[ObservationRow]] = defaultdict(list)
    for o in s.observations(5000):
        by_subject[o["subject_id"]].append(o)
    promoted = demoted = 0
    for subject, obs in by_subject.items():
        for o, independent in corroborations(obs):
            if len(independent) + 1 >= CORROBORATION_SOURCES:
                s.promote_observation(o["id"], sorted(independent))
                s.append_events(
                    [
                        NewEvent(
                            EventType.UPDATED.value,
                            "lifecycle",
                            o["id"],
                            subject,
                            "corroborated_observation_promoted_to_review",
                            {"corroborating_sources": len(independent)},
                        )
                    ]
                )
                promoted += 1
            else:
                s.demote_observation(o["id"])
                demoted += 1
    return promoted, demoted


def corroborations(obs: list[ObservationRow]) -> list[tuple[ObservationRow, set[str]]]:
    """For each of one subject's observations, the other sources (sessions, else records) whose
    observations say nearly the same."""
    out = []
    for o in obs:
        sources = {
            (x["session_id"] or x["id"])
            for x in obs
            if x["id"] != o["id"] and _cosine(o["embedding"], x["embedding"]) >= CORROBORATION_SIMILARITY
        }
        out.append((o, sources - {o["session_id"] or o["id"]}))
    return out


def _vector(v: Any) -> np.ndarray:
    return np.asarray(v.to_numpy() if hasattr(v, "to_numpy") else v, dtype=np.float32)


def _cosine(a: Any, b: Any) -> float:
    va, vb = _vector(a), _vector(b)
    denom = float(np.linalg.norm(va) * np.linalg.norm(vb)) or 1.0
    return float(va @ vb) / denom
