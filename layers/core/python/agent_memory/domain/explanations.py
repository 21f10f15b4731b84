"""One sentence a model can relay for a write that was not admitted ("held for a reviewer: it
states a discount"), from the decision and its reason codes. Never quotes the memory's content."""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.domain.enums import Decision

_COMMERCIAL_TERMS = {
    "contract.discount": "a discount",
    "contract.pricing": "a price",
    "contract.seat_price": "a price",
    "contract.renewal_terms": "renewal terms",
    "contract.payment_terms": "payment terms",
    "contract.sla": "a service level",
}
_FIELDS = {"plan_tier": "plan tier", "seats": "seat count", "sla": "service level"}
_NOISE = frozenset(
    {
        "greeting",
        "thanks",
        "sign_off",
        "acknowledgement",
        "small_talk",
        "venting",
        "pleasantry",
        "not_memorable",
        "low_confidence",
        "agent_statement_not_memorable",
        "no_explicit_preference",
    }
)


def explain(decision: Decision, reasons: Sequence[str], *, slot: str | None = None) -> str | None:
    """The sentence for a decision other than `admitted` (None for an admitted write)."""
    if decision is Decision.ADMITTED:
        return None
    codes = list(reasons)
    first = codes[0] if codes else ""
    if decision is Decision.DUPLICATE:
        return "not stored again: the same memory is already on file."
    if decision is Decision.PENDING_APPROVAL:
        if "sensitive_personal_detail" in codes:
            return (
                "held for confirmation: it states a sensitive personal detail, kept restricted and "
                "not recalled until the customer or a reviewer confirms it."
            )
        term = _COMMERCIAL_TERMS.get(slot or "", "a commercial term")
        return f"held for a reviewer: it states {term}, which needs approval before anyone relies on it."
    if decision is Decision.CONTESTED:
        return "held for a reviewer: it contradicts a better-sourced record of the same value, which stays on file."
    if decision is Decision.QUARANTINED:
        if any(c.startswith("untrusted_instruction") for c in codes):
            return "quarantined: it contains instruction-like text, kept as inert data and never recalled."
        return "quarantined: it reads as an inference, not a statement, and is not recalled until corroborated or reviewed."
    return _not_stored(first, codes)


def _not_stored(first: str, codes: Sequence[str]) -> str:
    field = next((c.split(":", 1)[1] for c in codes if c.startswith("field:")), None)
    what = _FIELDS.get(field or "", "this value")
    if first == "matches_live_value":
        return f"not stored: the system of record owns the {what} and already says so; recall shows the live value."
    if first == "contradicts_live_value":
        return (
            f"not stored: it contradicts the {what} in the system of record, which is flagged for "
            "revalidation; recall shows the live value."
        )
    if first in ("owned_by_system_of_record", "no_live_value", "live_value_unavailable"):
        return f"not stored: the system of record owns the {what}, and recall reads it live."
    if first in ("question_not_a_fact", "customer_question", "agent_question"):
        return "not stored: it is a question, not a statement to remember."
    if first == "older_than_active_version":
        return "not stored: a newer record of the same value is already on file."
    if "below_confidence_threshold" in codes:
        return "not stored: its confidence is below what this tenant requires before relying on it."
    if first == "outcome_not_confirmed":
        return "not stored: a resolution is kept only once its outcome is confirmed."
    if first in ("declined_to_state", "sensitive_identifier_only"):
        return "not stored: it holds nothing to remember beyond a masked identifier or a refusal."
    if first in _NOISE:
        return "not stored: it reads as small talk, not a fact, preference, commitment or event to remember."
    return f"not stored ({first or 'refused'})."
