"""Per-tenant policy profiles: the defaults of docs/rules.md as data.

A tenant picks a preset (`crm`, `support`, `wealth`) and may override fields.
`benchmark` has no TTLs: benchmark data is years old and must not expire on load.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PositiveInt,
    StringConstraints,
    field_serializer,
    field_validator,
)

from agent_memory.domain.enums import FactCategory, MemoryType, Sensitivity
from agent_memory.domain.memory_types import TYPE_SPECS

PersonalClass = Literal["email", "phone", "date_of_birth", "passport"]
PersonalHandling = Literal["mask", "keep"]
_MASK_EVERY_PERSONAL_CLASS: dict[PersonalClass, PersonalHandling] = {
    "email": "mask",
    "phone": "mask",
    "date_of_birth": "mask",
    "passport": "mask",
}

# Slots whose truth the system of record owns: memory never asserts them from
# conversation, and retrieval checks them against the live value.
DEFAULT_SOR_SLOT_FIELDS: dict[str, str] = {
    "account.plan_tier": "plan_tier",
    "account.seats": "seats",
    "contract.sla": "sla",
}

# Hard TTL bounds per type (INV-MEM-02: sentiment at most 180 days), counted from admission: the
# default `max_ttl_days`, and what no tenant override may relax (guardrail_violations).
HARD_TTL_BOUNDS_DAYS: dict[MemoryType, int] = {
    t: s.max_ttl_days for t, s in TYPE_SPECS.items() if s.max_ttl_days is not None
}
# The product requirements (INV-MEM-02): "unverified conversational notes and customer sentiments must carry
# expires_at <= now() + 180 days".
UNVERIFIED_MAX_TTL_DAYS = 180
# The product requirements: "everything else below a confidence threshold stays candidate and is not retrievable";
# observations are "admitted as low-confidence candidates" (quarantined), so they have no threshold.
# A write whose confidence is below its type's threshold is not stored (`below_confidence_threshold`).
DEFAULT_MIN_CONFIDENCE: dict[MemoryType, float] = {
    MemoryType.FACT: 0.5,
    MemoryType.PREFERENCE: 0.5,
    MemoryType.COMMITMENT: 0.5,
    MemoryType.RESOLUTION: 0.5,
    MemoryType.EPISODE: 0.3,
    MemoryType.SENTIMENT: 0.3,
}
# The product requirements: "sensitive classes shortest" retention; 90 days, RET-01's episode ceiling (the product requirements).
SENSITIVE_RETENTION_DAYS = 90
# The product requirements: "unresolvable conflicts keep both records marked contested, lower both confidences".
CONTEST_CONFIDENCE_FACTOR = 0.8
# The product requirements: "within an 80 ms p95 latency budget" (45 ms database, 15 ms serialization), keyed by the
# retrieval stages the broker times (services/retrieval_models.StageClock).
SEED_LATENCY_BUDGET_MS: dict[str, int] = {"total": 80, "db": 45, "serialize": 15}
_REVALIDATE_AFTER_DAYS: dict[MemoryType, int] = {
    t: s.revalidate_after_days for t, s in TYPE_SPECS.items() if s.revalidate_after_days is not None
}

TicketStatus = Annotated[
    str, StringConstraints(strip_whitespace=True, to_lower=True, min_length=1, max_length=64)
]


# The evidence a reviewer cites to approve a commercial term is a document reference, matched whole:
# by default 6-200 characters without whitespace, at least one letter and one digit
# ("signed-contract-2026-118", "DOC-4471"). A tenant may set its own pattern (its contract ids), but
# none that accepts a placeholder: these are refused by every pattern (`guardrail_violations`).
DEFAULT_EVIDENCE_REF_PATTERN = r"(?=\S*[A-Za-z])(?=\S*[0-9])\S{6,200}"
NOT_EVIDENCE = (
    "",
    " ",
    "none",
    "None",
    "NONE",
    "n/a",
    "N/A",
    "na",
    "ok",
    "OK",
    "-",
    "--",
    "null",
    "tbd",
    "x",
    "yes",
)


class PolicyProfile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    # Days a record lives after its effective date; None = until revoked/superseded.
    ttl_days: dict[MemoryType, PositiveInt | None]
    # Hard upper bounds no caller-supplied expiry may exceed.
    max_ttl_days: dict[MemoryType, PositiveInt] = Field(default_factory=lambda: dict(HARD_TTL_BOUNDS_DAYS))
    # Days after the later of effective_at and last_validated_at when a record is flagged
    # `needs_revalidation` (admission, the nightly run) until someone confirms it; a type without
    # an entry is never flagged by age.
    revalidate_after_days: dict[MemoryType, Annotated[int, Field(ge=1, le=3650)]] = Field(
        default_factory=lambda: dict(_REVALIDATE_AFTER_DAYS)
    )
    commitment_closed_retention_days: int = Field(default=30, ge=0, le=3650)
    archive_window_days: int = Field(default=30, ge=0, le=3650)
    approval_required_categories: frozenset[str] = frozenset({FactCategory.CONTRACT_COMMERCIAL.value})
    # Verified facts of these categories are served whatever the query (the product requirements: "inject verified
    # account facts: SLA, tiers, deciders"); every other memory, verified or not, must be relevant to
    # the query (domain/relevance.py). The preset decides; none by default.
    mandatory_fact_categories: frozenset[str] = frozenset()
    sor_slot_fields: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_SOR_SLOT_FIELDS))
    category_sensitivity: dict[str, Sensitivity] = Field(
        default_factory=lambda: {
            FactCategory.CONTRACT_COMMERCIAL.value: Sensitivity.CONFIDENTIAL,
        }
    )
    near_duplicate_similarity: float = Field(default=0.97, gt=0.0, le=1.01)  # above 1: never
    retrieval_top_k: int = Field(default=5, ge=1, le=50)
    # The most memories one retrieval may ask for (the product requirements: top-5, at most 5 chunks): a
    # caller may ask for fewer, never more, and a tenant's override may not raise its preset's.
    retrieval_top_k_max: int = Field(default=5, ge=1, le=50)
    # INV-MEM-02: an unverified note (a customer's claim, an agent's inference, a term waiting for
    # approval) lives at most this many days from admission, until verification lifts it.
    unverified_max_ttl_days: int = Field(default=UNVERIFIED_MAX_TTL_DAYS, ge=1, le=UNVERIFIED_MAX_TTL_DAYS)
    retrieval_max_tokens: int = Field(default=2048, ge=64, le=200_000)
    # The confidence a write of each type needs to be stored (a type not listed: none).
    min_confidence: dict[MemoryType, Annotated[float, Field(ge=0.0, le=1.0)]] = Field(
        default_factory=lambda: dict(DEFAULT_MIN_CONFIDENCE)
    )
    # The product requirements: "restricted retention for sensitive data": a sensitive personal detail (health,
    # family status... domain/sensitive.py) is kept at most this many days from admission.
    # Whether sensitive personal details take that restricted path; only the benchmark profile (years
    # of personal chat to recall from) turns it off, and no tenant may (`guardrail_violations`).
    restrict_sensitive_details: bool = True
    sensitive_retention_days: int = Field(default=SENSITIVE_RETENTION_DAYS, ge=1, le=SENSITIVE_RETENTION_DAYS)
    # What a contest multiplies both records' confidence by until a reviewer decides (the product requirements).
    contest_confidence_factor: float = Field(default=CONTEST_CONFIDENCE_FACTOR, gt=0.0, le=1.0)
    envelope_tokens: int = Field(default=8192, ge=64, le=200_000)
    # A legal hold wins over erasure and the purge (GDPR Art. 17(3)(e)): held records are kept and
    # listed in the erasure's receipt. Fixed: no tenant may turn it off (`guardrail_violations`).
    legal_hold_exempts_erasure: bool = True
    # Identical refusals (same actor, route and reason) and failed retrievals are written to the audit
    # chain at most once per this many seconds each; the ones in between are counted in the next.
    refusal_audit_window_seconds: int = Field(default=60, ge=10, le=3600)
    # A subject's export is read in pages of at most this many entries (the default page size too).
    export_page_size: int = Field(default=200, ge=10, le=1000)
    # Working memory (one open session's short-lived values): the TTL a value gets when the caller
    # names none, the longest a caller may ask for, and how much one session may hold at once.
    working_ttl_seconds: int = Field(default=300, ge=1, le=86_400)
    working_max_ttl_seconds: int = Field(default=3600, ge=1, le=86_400)
    working_max_items: int = Field(default=100, ge=1, le=10_000)
    working_max_bytes: int = Field(default=65_536, ge=1_024, le=262_144)
    # Quotas, answered with 429 `rate_limited` naming the limit (docs/policy.md, "Quotas"); None: no
    # limit. Requests per second are counted per tenant in each running process (a Lambda execution
    # environment, `memory serve`); memories per subject exactly, per tenant against a usage figure
    # at most a few seconds old.
    quota_requests_per_second: int | None = Field(default=None, ge=1, le=100_000)
    quota_memories_per_subject: int | None = Field(default=20_000, ge=1, le=10_000_000)
    quota_memories_per_tenant: int | None = Field(default=None, ge=1, le=1_000_000_000)
    quota_bytes_per_tenant: int | None = Field(default=None, ge=1_024, le=10**13)
    # Episodes reaching the end of their retention become one digest per subject (domain/digest.py)
    # instead of vanishing; the digest is itself an episode, kept for the episode TTL, and folded
    # into the next digest when it expires.
    digest_expiring_episodes: bool = True
    digest_max_chars: int = Field(default=1500, ge=200, le=8000)
    # Review items of one subject this alike (same type and slot, cosine of their vectors) are shown as
    # one group: a statement extracted from several sessions is reviewed once (`similar_pending`).
    review_group_similarity: float = Field(default=0.9, ge=0.5, le=1.0)
    # Ticket-scoped memory: kept this many days after its ticket resolves (the system of record's
    # ticket status is one of `ticket_resolved_statuses`, compared case-insensitively).
    ticket_memory_retention_days: int = Field(default=30, ge=0, le=3650)
    # The retrieval latency budget per stage, p95 in milliseconds (the product requirements: 80 ms in all, 45 ms in the
    # database, 15 ms to serialize): the stack alarms on each, and `memory bench http` reports them.
    latency_budget_ms: dict[str, PositiveInt] = Field(default_factory=lambda: dict(SEED_LATENCY_BUDGET_MS))
    ticket_resolved_statuses: frozenset[TicketStatus] = Field(
        default=frozenset({"resolved", "closed"}), min_length=1, max_length=20
    )
    # Personal identifiers beyond the financial and national ones every tenant masks: each class is
    # detected, then masked ("mask") or kept as written ("keep") in a memory's content and value.
    # A class not listed is masked. Short free-text fields (references, reasons) always mask.
    # Every preset masks all four: the product requirements ask for data minimization, the system of record owns
    # contact details, and what memory needs is the preference ("email, not phone"), not the address.
    personal_identifiers: dict[PersonalClass, PersonalHandling] = Field(
        default_factory=lambda: dict(_MASK_EVERY_PERSONAL_CLASS)
    )

    @field_serializer("approval_required_categories", "mandatory_fact_categories", "ticket_resolved_statuses")
    def _sorted(self, values: frozenset[str]) -> list[str]:
        # a set's order follows the process's string hashing: sorted, the policy reads (and
        # compares) the same in every process
        return sorted(values)

    def kept_identifier_classes(self) -> frozenset[str]:
        """The personal identifier classes this tenant keeps as written."""
        return frozenset(c for c, how in self.personal_identifiers.items() if how == "keep")

    # What an approval's `evidence_ref` must look like (a full match; see DEFAULT_EVIDENCE_REF_PATTERN).
    evidence_ref_pattern: str = Field(default=DEFAULT_EVIDENCE_REF_PATTERN, min_length=1, max_length=300)

    @field_validator("evidence_ref_pattern")
    @classmethod
    def _a_regular_expression(cls, v: str) -> str:
        try:
            re.compile(v)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc.msg}") from None
        return v

    def accepts_evidence(self, evidence_ref: str) -> bool:
        """Whether `evidence_ref` is a reference this tenant accepts as evidence for an approval."""
        return re.fullmatch(self.evidence_ref_pattern, evidence_ref) is not None

    def min_confidence_for(self, memory_type: MemoryType) -> float:
        return self.min_confidence.get(memory_type, 0.0)

    def ttl_for(self, memory_type: MemoryType) -> int | None:
        return self.ttl_days.get(memory_type)

    def with_overrides(self, overrides: dict[str, Any]) -> PolicyProfile:
        """Overrides replace fields; a mapping (TTLs, slot fields...) is merged key by key, so
        overriding one type's TTL leaves the other types' TTLs as they were. A null removes a key,
        except in `ttl_days`, where null is a value: the type has no TTL."""
        data = self.model_dump(mode="json")
        for key, value in overrides.items():
            base = data.get(key)
            if isinstance(base, dict) and isinstance(value, dict):
                merged = {**base, **value}
                if key != "ttl_days":
                    merged = {k: v for k, v in merged.items() if not (k in value and value[k] is None)}
                data[key] = merged
            else:
                data[key] = value
        return PolicyProfile.model_validate(data)


# The presets' defaults per type come from the type table (memory_types.TYPE_SPECS). Open commitments
# have no TTL: they live until closed, then commitment_closed_retention_days.
_COMMON_TTL: dict[MemoryType, int | None] = {t: s.ttl_days for t, s in TYPE_SPECS.items()}

PROFILES: dict[str, PolicyProfile] = {
    "crm": PolicyProfile(
        name="crm",
        ttl_days={**_COMMON_TTL, MemoryType.EPISODE: 365},
        # MC-RT-01: verified account facts are injected (SLA and terms, tiers, deciders)
        mandatory_fact_categories=frozenset(
            {
                FactCategory.CONTRACT_COMMERCIAL.value,
                FactCategory.ACCOUNT_PROFILE.value,
                FactCategory.STAKEHOLDER.value,
            }
        ),
        retrieval_max_tokens=6000,
        envelope_tokens=6000,
    ),
    "support": PolicyProfile(name="support", ttl_days=dict(_COMMON_TTL), retrieval_max_tokens=4096),
    "wealth": PolicyProfile(
        name="wealth",
        ttl_days=dict(_COMMON_TTL),
        # The product requirements' 2,048-token cap is the envelope, not only the default: a caller cannot raise it.
        retrieval_max_tokens=2048,
        envelope_tokens=2048,
        category_sensitivity={
            FactCategory.CONTRACT_COMMERCIAL.value: Sensitivity.CONFIDENTIAL,
            FactCategory.ACCOUNT_PROFILE.value: Sensitivity.CONFIDENTIAL,
        },
    ),
    "benchmark": PolicyProfile(
        name="benchmark",
        ttl_days=dict.fromkeys(MemoryType, None),
        max_ttl_days={},
        revalidate_after_days={},  # years-old benchmark data is not "due" for anything
        min_confidence={},  # benchmark turns are kept whatever their confidence
        restrict_sensitive_details=False,  # benchmark chats are personal by design
        retrieval_top_k_max=50,  # recall@10 and @50 are measured
        retrieval_max_tokens=100_000,
        envelope_tokens=100_000,
        near_duplicate_similarity=1.01,  # benchmark turns are kept verbatim
        quota_memories_per_subject=None,  # a benchmark loads a whole corpus into few subjects
        digest_expiring_episodes=False,  # nothing expires in a benchmark
    ),
}


# What a tenant's admin may choose through the API; `benchmark` (no TTLs) is for benchmarks only.
PRESETS = ("crm", "support", "wealth")


def guardrail_violations(p: PolicyProfile, preset: PolicyProfile) -> list[tuple[str, str]]:
    """The rules of docs/rules.md that no tenant override of `preset` may relax, as (field, why) pairs."""
    out: list[tuple[str, str]] = []
    if p.name != preset.name:
        out.append(("name", "the profile's name is the preset's; choose another preset instead"))
    for category, level in preset.category_sensitivity.items():
        if p.category_sensitivity.get(category, Sensitivity.PUBLIC).rank < level.rank:
            out.append(("category_sensitivity", f"{category} may not be less sensitive than {level.value}"))
    for memory_type, hard_bound in HARD_TTL_BOUNDS_DAYS.items():
        bound = p.max_ttl_days.get(memory_type)
        if bound is None or bound > hard_bound:
            out.append(
                ("max_ttl_days", f"{memory_type.value} is kept at most {hard_bound} days (hard bound)")
            )
    if FactCategory.CONTRACT_COMMERCIAL.value not in p.approval_required_categories:
        out.append(
            (
                "approval_required_categories",
                "commercial terms from conversation always wait for a reviewer (INV-MEM-01)",
            )
        )
    if any(p.accepts_evidence(placeholder) for placeholder in NOT_EVIDENCE):
        out.append(("evidence_ref_pattern", "must refuse placeholders such as 'none', 'n/a', 'ok' and '-'"))
    if not p.legal_hold_exempts_erasure:
        out.append(
            (
                "legal_hold_exempts_erasure",
                "records under a legal hold are always kept through an erasure (GDPR Art. 17(3)(e))",
            )
        )
    if not p.restrict_sensitive_details:
        out.append(
            (
                "restrict_sensitive_details",
                "sensitive personal details are always restricted and held for confirmation (the product requirements)",
            )
        )
    if p.envelope_tokens > preset.envelope_tokens:
        out.append(
            ("envelope_tokens", f"the {preset.name} envelope is at most {preset.envelope_tokens} tokens")
        )
    if p.retrieval_max_tokens > p.envelope_tokens:
        out.append(("retrieval_max_tokens", f"exceeds the envelope of {p.envelope_tokens} tokens"))
    if p.working_ttl_seconds > p.working_max_ttl_seconds:
        out.append(("working_ttl_seconds", f"exceeds working_max_ttl_seconds ({p.working_max_ttl_seconds})"))
    if p.retrieval_top_k_max > preset.retrieval_top_k_max:
        out.append(
            ("retrieval_top_k_max", f"the {preset.name} preset serves at most {preset.retrieval_top_k_max}")
        )
    if p.retrieval_top_k > p.retrieval_top_k_max:
        out.append(("retrieval_top_k", f"exceeds retrieval_top_k_max ({p.retrieval_top_k_max})"))
    out.extend(_longer_retention(p, preset))
    return out


def _longer_retention(p: PolicyProfile, preset: PolicyProfile) -> list[tuple[str, str]]:
    """A tenant's override may only shorten how long its preset keeps a type (RET-01:
    episodes 90 days; INV-MEM-02: sentiment 180 days), never lengthen it or lift the TTL."""
    out = []
    for memory_type, ceiling in preset.ttl_days.items():
        if ceiling is None:
            continue
        chosen = p.ttl_days.get(memory_type)
        if chosen is None or chosen > ceiling:
            out.append(
                (
                    "ttl_days",
                    f"{memory_type.value} is kept at most {ceiling} days in the {preset.name} preset",
                )
            )
    return out


def profile(name: str) -> PolicyProfile:
    try:
        return PROFILES[name]
    except KeyError:
        raise KeyError(f"unknown policy profile {name!r}; known: {sorted(PROFILES)}") from None
