"""The memory types, one row each (POLICY.md, Types): the one place that says what a type is.

Every rule that differs by type reads its row here: which types keep one current value per slot,
the presets' TTLs and hard bounds, when a record is due for revalidation, how fast ranking lets it
fade, whether admission quarantines it, whether it keeps a vector there, which section of the
context shows it, and which types the nightly consolidation folds. The older names
(`enums.SLOTTED_TYPES`, `ranking.HALF_LIFE_DAYS`, the policy defaults...) are views of this table.

Adding a type: a member of `MemoryType`, its row in `TYPE_SPECS`, and a migration that adds it to
the CHECK constraint on `memory_records.type` (a test compares the constraint with this table).
A rule only one type has (a fact's categories, a commitment's `closed_at`) stays in the code that
applies it; the row's `admission` note says where.

Imports nothing from the package: `enums` re-exports `MemoryType` from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Literal


class MemoryType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    EPISODE = "episode"
    RESOLUTION = "resolution"
    OBSERVATION = "observation"
    SENTIMENT = "sentiment"
    COMMITMENT = "commitment"


class SlotRule(StrEnum):
    """What a type does with a slot (the key of "one current value")."""

    REQUIRED = "required"  # versioned per slot; a write must name its slot
    OPTIONAL = "optional"  # versioned per slot when it names one (a commitment's state), else appended
    NONE = "none"  # append-only: a write naming a slot is refused


# The section of the context a type's memories are shown in (domain/context.py SECTIONS), when
# their source ranks above a customer's claim; a claim or an inference is always "unverified".
Section = Literal["relevant", "supporting", "unverified"]


@dataclass(frozen=True)
class TypeSpec:
    """One memory type's rules. Day counts are the presets' defaults; a tenant may override the
    TTL and the revalidation age per type, never past `max_ttl_days` (policy guardrails)."""

    type: MemoryType
    slot: SlotRule
    # Days a record lives after its effective date in the presets (the crm preset keeps episodes
    # longer); None: until superseded, revoked or closed.
    ttl_days: int | None
    # Hard bound counted from admission that no preset, override or caller's expiry may exceed.
    max_ttl_days: int | None
    # Days after which a record is flagged needs_revalidation until confirmed; None: never by age.
    revalidate_after_days: int | None
    # INV-MEM-02: an unverified record of this type (a claim, an inference, a term awaiting approval)
    # lives at most the policy's unverified_max_ttl_days. A commitment is the agent's own follow-up,
    # open until closed, so it is not bounded this way.
    bounded_when_unverified: bool
    # Ranking's recency decay; None: the type does not fade with age.
    half_life_days: float | None
    # Admission puts every write of this type in quarantine: a proposal, never served as a fact.
    quarantined: bool
    # A quarantined record of this type still gets a vector (it is corroborated by similarity).
    vector_in_quarantine: bool
    # Refused unless the outcome is confirmed (by a source that confirms outcomes, or the value says so).
    needs_confirmed_outcome: bool
    # The nightly consolidation folds near-duplicate active records of this type into one.
    merges_near_duplicates: bool
    section: Section
    # From a verified source it heads the context ("verified account facts", capped) and is always
    # a retrieval candidate, however weakly the query matches (the SQL retrieval function's `pinned`).
    heads_context_when_verified: bool
    # What admission does with it beyond the fields above, and where that rule lives.
    admission: str


_SPECS = (
    TypeSpec(
        type=MemoryType.FACT,
        slot=SlotRule.REQUIRED,
        ttl_days=None,
        max_ttl_days=None,
        revalidate_after_days=180,
        bounded_when_unverified=True,
        half_life_days=None,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=False,
        merges_near_duplicates=False,
        section="relevant",
        heads_context_when_verified=True,
        admission=(
            "a category from FactCategory; stated by the customer or a system (an inference becomes an "
            "observation); CONTRACT_COMMERCIAL waits for a reviewer (admission.classify)"
        ),
    ),
    TypeSpec(
        type=MemoryType.PREFERENCE,
        slot=SlotRule.REQUIRED,
        ttl_days=None,
        max_ttl_days=None,
        revalidate_after_days=365,
        bounded_when_unverified=True,
        half_life_days=None,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=False,
        merges_near_duplicates=False,
        section="relevant",
        heads_context_when_verified=False,
        admission="only an explicit statement by the customer: an inference becomes an observation",
    ),
    TypeSpec(
        type=MemoryType.EPISODE,
        slot=SlotRule.NONE,
        ttl_days=90,
        max_ttl_days=None,
        revalidate_after_days=None,
        bounded_when_unverified=True,
        half_life_days=90.0,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=False,
        merges_near_duplicates=True,
        section="supporting",
        heads_context_when_verified=False,
        admission="a minimized summary of one interaction (session close); appended",
    ),
    TypeSpec(
        type=MemoryType.RESOLUTION,
        slot=SlotRule.NONE,
        ttl_days=365,
        max_ttl_days=None,
        revalidate_after_days=None,
        bounded_when_unverified=True,
        half_life_days=180.0,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=True,
        merges_near_duplicates=True,
        section="relevant",
        heads_context_when_verified=False,
        admission="problem, actions, outcome: only with a confirmed outcome; appended, deduplicated",
    ),
    TypeSpec(
        type=MemoryType.OBSERVATION,
        slot=SlotRule.NONE,
        ttl_days=30,
        max_ttl_days=None,
        revalidate_after_days=None,
        bounded_when_unverified=True,
        half_life_days=30.0,
        quarantined=True,
        vector_in_quarantine=True,
        needs_confirmed_outcome=False,
        merges_near_duplicates=False,
        section="supporting",
        heads_context_when_verified=False,
        admission=(
            "an agent's or model's inference: always quarantined; promoted only by corroboration "
            "(the nightly run, by similarity) or review"
        ),
    ),
    TypeSpec(
        type=MemoryType.SENTIMENT,
        slot=SlotRule.NONE,
        ttl_days=180,
        max_ttl_days=180,
        revalidate_after_days=None,
        bounded_when_unverified=True,
        half_life_days=60.0,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=False,
        merges_near_duplicates=True,
        section="unverified",
        heads_context_when_verified=False,
        admission="casual sentiment and unconfirmed plans, admitted as a note; at most 180 days (INV-MEM-02)",
    ),
    TypeSpec(
        type=MemoryType.COMMITMENT,
        slot=SlotRule.OPTIONAL,
        ttl_days=None,
        max_ttl_days=None,
        revalidate_after_days=None,
        bounded_when_unverified=False,
        half_life_days=60.0,
        quarantined=False,
        vector_in_quarantine=False,
        needs_confirmed_outcome=False,
        merges_near_duplicates=False,
        section="relevant",
        heads_context_when_verified=False,
        admission=(
            "a follow-up (owner, due date, state): open until closed, then kept for the policy's "
            "commitment_closed_retention_days (domain/commitments.py)"
        ),
    ),
)

TYPE_SPECS: Mapping[MemoryType, TypeSpec] = MappingProxyType({s.type: s for s in _SPECS})


# Slotted types keep one current value per slot; the others append.
SLOTTED_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is not SlotRule.NONE)
# Commitments are stateful (open -> closed) and may carry a slot; facts and preferences must.
SLOT_REQUIRED_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is SlotRule.REQUIRED)
APPEND_ONLY_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is SlotRule.NONE)


# Commercial slots that state one truth from different sides, so two active facts of one family
# can contradict each other across slots ("$42/seat, no discount" beside an approved "20%
# discount": INC-2890). Seed 000 INV-MEM-03: "injecting multiple conflicting versions of a
# commercial term in the same prompt is prohibited"; MC-CR-01 supersedes per account and category.
# A reviewer approving a term of a family chooses what it supersedes or says it is independent;
# retrieval never renders two of a family that disagree.
COMMERCIAL_FAMILIES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "price": frozenset({"contract.seat_price", "contract.discount", "contract.pricing"}),
        "renewal": frozenset({"contract.renewal_terms", "contract.term", "contract.renewal_date"}),
        "service_level": frozenset({"contract.sla", "contract.support_tier"}),
    }
)
# The reason an approved term carries when its reviewer said it stands beside its family's others.
FAMILY_INDEPENDENT_REASON = "independent_of_commercial_family"
_FAMILY_OF_SLOT = {slot: family for family, slots in COMMERCIAL_FAMILIES.items() for slot in slots}


def commercial_family(slot: str | None) -> str | None:
    """The commercial family a slot belongs to, or None."""
    return _FAMILY_OF_SLOT.get(slot) if slot else None


def family_slots(slot: str | None) -> frozenset[str]:
    """The other slots of `slot`'s commercial family (empty when it has none)."""
    family = commercial_family(slot)
    return COMMERCIAL_FAMILIES[family] - {slot} if family else frozenset()
