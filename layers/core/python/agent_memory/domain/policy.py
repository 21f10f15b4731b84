"""Per-tenant policy profiles: the defaults of POLICY.md as data.

A tenant picks a preset (`crm`, `support`, `wealth`) and may override fields.
`benchmark` has no TTLs: benchmark data is years old and must not expire on load.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agent_memory.domain.enums import FactCategory, MemoryType, Sensitivity

# Slots whose truth the system of record owns: memory never asserts them from
# conversation, and retrieval checks them against the live value.
DEFAULT_SOR_SLOT_FIELDS: dict[str, str] = {
    "account.plan_tier": "plan_tier",
    "account.seats": "seats",
    "contract.sla": "sla",
}


class PolicyProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    # Days a record lives after its effective date; None = until revoked/superseded.
    ttl_days: dict[MemoryType, int | None]
    # Hard upper bounds no caller-supplied expiry may exceed.
    max_ttl_days: dict[MemoryType, int] = Field(default_factory=lambda: {MemoryType.SENTIMENT: 180})
    revalidate_after_days: dict[MemoryType, int] = Field(
        default_factory=lambda: {MemoryType.FACT: 180, MemoryType.PREFERENCE: 365}
    )
    commitment_closed_retention_days: int = 30
    archive_window_days: int = 30
    approval_required_categories: frozenset[str] = frozenset({FactCategory.CONTRACT_COMMERCIAL.value})
    sor_slot_fields: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_SOR_SLOT_FIELDS))
    category_sensitivity: dict[str, Sensitivity] = Field(
        default_factory=lambda: {
            FactCategory.CONTRACT_COMMERCIAL.value: Sensitivity.CONFIDENTIAL,
        }
    )
    near_duplicate_similarity: float = 0.97
    retrieval_top_k: int = 5
    retrieval_max_tokens: int = 2048
    envelope_tokens: int = 8192
    legal_hold_exempts_erasure: bool = False

    def ttl_for(self, memory_type: MemoryType) -> int | None:
        return self.ttl_days.get(memory_type)

    def with_overrides(self, overrides: dict[str, Any]) -> PolicyProfile:
        data = self.model_dump()
        data.update(overrides)
        return PolicyProfile.model_validate(data)


_COMMON_TTL: dict[MemoryType, int | None] = {
    MemoryType.FACT: None,
    MemoryType.PREFERENCE: None,
    MemoryType.EPISODE: 90,
    MemoryType.RESOLUTION: 365,
    MemoryType.OBSERVATION: 30,
    MemoryType.SENTIMENT: 180,
    MemoryType.COMMITMENT: None,  # open commitments live until closed + 30 days
}

PROFILES: dict[str, PolicyProfile] = {
    "crm": PolicyProfile(
        name="crm",
        ttl_days={**_COMMON_TTL, MemoryType.EPISODE: 365},
        retrieval_max_tokens=6000,
        envelope_tokens=6000,
    ),
    "support": PolicyProfile(name="support", ttl_days=dict(_COMMON_TTL), retrieval_max_tokens=4096),
    "wealth": PolicyProfile(
        name="wealth",
        ttl_days=dict(_COMMON_TTL),
        retrieval_max_tokens=2048,
        envelope_tokens=8192,
        category_sensitivity={
            FactCategory.CONTRACT_COMMERCIAL.value: Sensitivity.CONFIDENTIAL,
            FactCategory.ACCOUNT_PROFILE.value: Sensitivity.CONFIDENTIAL,
        },
    ),
    "benchmark": PolicyProfile(
        name="benchmark",
        ttl_days=dict.fromkeys(MemoryType, None),
        max_ttl_days={},
        retrieval_max_tokens=100_000,
        envelope_tokens=100_000,
        near_duplicate_similarity=1.01,  # benchmark turns are kept verbatim
    ),
}


def profile(name: str) -> PolicyProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown policy profile {name!r}; known: {sorted(PROFILES)}") from None
