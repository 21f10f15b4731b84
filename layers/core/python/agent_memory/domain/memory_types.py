"""The memory types, one row each (docs/rules.md, Types): the one place that says what a type is.

Every rule that differs by type reads its row here: which types keep one current value per slot,
the presets' TTLs and hard bounds, when a record is due for revalidation, how fast ranking lets it
fade, whether admission quarantines it, whether it keeps a vector there, which section of the
context shows it, and which types the nightly consolidation folds. The older names
(`enums.SLOTTED_TYPES`, `ranking.HALF_LIFE_DAYS`, the policy defaults...) are views of this table,
and so are the extractors' label sets and speaker rules, the extraction prompt's list of types, the
section the API names for each memory (the console groups by it), the types the SQL names, and the
docs' type tables (`python -m tools.type_docs` writes them).

Adding a type: a member of `MemoryType`, its row in `TYPE_SPECS`, and a migration that adds it to
the CHECK constraint on `memory_records.type` (a test compares the constraint with this table; a
second one fails when a product file lists the type names by hand).
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
# Who speaks in a transcript (domain/extraction.Speaker, whose values these are).
SpeakerName = Literal["customer", "agent", "system"]


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
    # Whose own words a memory of this type records: the learned extractor gives the type's labels
    # only to these speakers' statements (a commercial term, to the customer's and the agent's).
    said_by: frozenset[SpeakerName]
    # The turns the LLM extractor may propose it from: wider than `said_by`, since a model reads the
    # exchange (an agent restating a fact, a system turn confirming an outcome).
    extracted_from: frozenset[SpeakerName]
    # Reusable knowledge, searched across the tenant's subjects (the partial HNSW index's predicate
    # and the tenant-wide search that uses it), not only within its own subject.
    shared_across_subjects: bool
    # The extraction prompt's line for the type (prompts/extract_v1.md renders them in row order).
    prompt_hint: str
    # The documentation's words (docs/concepts.md and docs/rules.md are generated from these rows).
    description: str
    example: str
    admitted_when: str


# Rows are in the order the extraction prompt lists the types (preference first): the rendered
# prompt is extract_v1's text exactly, and changing it would take a new prompt version.
_SPECS = (
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
        said_by=frozenset({"customer"}),
        extracted_from=frozenset({"customer"}),
        shared_across_subjects=False,
        prompt_hint=(
            "an explicit statement BY THE CUSTOMER about contact channel, time, cadence, tone, language,\n"
            "  meeting or report format. Slots: preference.contact_channel, preference.contact_time, preference.cadence,\n"
            "  preference.tone, preference.language, preference.meeting_format, preference.report_format."
        ),
        description="how the customer wants to be dealt with, stated by the customer",
        example='"Send renewal paperwork by email."',
        admitted_when="only an explicit statement by the customer (an inference becomes an observation)",
    ),
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
        said_by=frozenset({"customer"}),
        extracted_from=frozenset({"customer", "agent", "system"}),
        shared_across_subjects=False,
        prompt_hint=(
            "category STAKEHOLDER (stakeholder.executive_sponsor|primary_contact|billing_contact|technical_contact|decision_maker),\n"
            "  TECHNICAL_ENVIRONMENT (tech.crm_platform|identity_provider|data_warehouse|cloud_provider|integration|email_platform),\n"
            "  ACCOUNT_PROFILE (profile.industry|headquarters|fiscal_year_end|employee_count|risk_tolerance|investment_horizon|\n"
            "  retirement_age|income_needs|dependants) stated by the customer; CONTRACT_COMMERCIAL (contract.seat_price|discount|sla|\n"
            "  payment_terms|renewal_terms|pricing) mentioned by anyone."
        ),
        description="account facts: contract terms, stakeholders, technical environment, profile",
        example='"Seat price is $42 from September."',
        admitted_when="see the authority rules; a CONTRACT_COMMERCIAL term needs a reviewer's sign-off",
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
        said_by=frozenset({"customer"}),
        extracted_from=frozenset({"customer", "agent", "system"}),
        shared_across_subjects=False,
        prompt_hint=("what happened in this interaction and its outcome."),
        description="a summary of one conversation or case",
        example='"Login failures after the SSO change; fixed by a new certificate."',
        admitted_when="session close, a minimized summary",
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
        said_by=frozenset({"customer"}),
        extracted_from=frozenset({"customer", "system"}),
        shared_across_subjects=True,
        prompt_hint=("problem -> actions -> outcome, ONLY if the outcome was confirmed."),
        description="a problem, what fixed it, and the confirmed outcome",
        example='"Sync timeouts: raise the batch window; confirmed fixed."',
        admitted_when="only with a confirmed outcome",
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
        said_by=frozenset({"agent"}),
        extracted_from=frozenset({"customer", "agent"}),
        shared_across_subjects=False,
        prompt_hint=("the agent's or advisor's inference about the customer (never a customer fact)."),
        description="an agent's or a model's inference, kept as low trust",
        example='"Seems to be evaluating a competitor."',
        admitted_when="always quarantined as low trust; never cited as a customer fact",
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
        said_by=frozenset({"customer"}),
        extracted_from=frozenset({"customer"}),
        shared_across_subjects=False,
        prompt_hint=('casual sentiment or unconfirmed plans ("might expand next winter").'),
        description="casual mood and unconfirmed plans, kept for a bounded time",
        example='"Might expand next winter."',
        admitted_when="admitted as a note",
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
        said_by=frozenset({"agent"}),
        extracted_from=frozenset({"agent"}),
        shared_across_subjects=False,
        prompt_hint=("a follow-up the AGENT commits to (owner, due date if stated)."),
        description="a follow-up someone owes, with a due date and a state",
        example='"Send the security questionnaire by Friday."',
        admitted_when="from the agent's own follow-ups",
    ),
)

TYPE_SPECS: Mapping[MemoryType, TypeSpec] = MappingProxyType({s.type: s for s in _SPECS})


def context_section(memory_type: MemoryType, *, verified: bool, low_trust: bool) -> str:
    """The section of a retrieval's context a memory is shown in when served (domain/selection.py):
    "verified_facts" for a verified record of a type that heads the context, "unverified" for a
    low-trust source (a customer's claim, an inference) or a type shown there, else its row's."""
    spec = TYPE_SPECS[memory_type]
    if verified and spec.heads_context_when_verified:
        return "verified_facts"
    if low_trust or spec.section == "unverified":
        return "unverified"
    return spec.section


# Slotted types keep one current value per slot; the others append.
SLOTTED_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is not SlotRule.NONE)
# Commitments are stateful (open -> closed) and may carry a slot; facts and preferences must.
SLOT_REQUIRED_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is SlotRule.REQUIRED)
APPEND_ONLY_TYPES = frozenset(t for t, s in TYPE_SPECS.items() if s.slot is SlotRule.NONE)


# Commercial slots that state one truth from different sides, so two active facts of one family
# can contradict each other across slots ("$42/seat, no discount" beside an approved "20%
# discount": INC-2890). INV-MEM-03: "injecting multiple conflicting versions of a
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
