"""Per-speaker rules: what a customer, an agent or a system turn can state, one sentence at a time.

Only the customer states preferences, non-commercial facts and sentiment; only the agent gives
commitments and observations; system turns carry tool output and confirmed outcomes. A commercial
term is held for approval whoever states it. Each rule proposes (`_Proposal`) or skips with a
reason (`_Skip`); the write gateway decides.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agent_memory.adapters.extractors.fact_slots import (
    _CURRENT_STATE,
    _MIGRATION,
    _PERSON,
    _PROFILE_SLOTS,
    _REMOVAL,
    _STAKEHOLDER_SLOTS,
    _TECH_PAST_ONLY,
    _TECH_PRESENT,
    _TECH_SLOTS,
    _TECH_STATE,
)
from agent_memory.adapters.extractors.lexicons import (
    _ACK,
    _AGENT_CLAIM,
    _ARTIFACT_REQUEST,
    _BILLING_INCIDENT,
    _COMMERCIAL_SLOTS,
    _COMMITMENT,
    _CORRECTION,
    _DECLINED,
    _DUE,
    _EVENT,
    _GREETING,
    _HEDGE_MODAL,
    _HYPOTHETICAL,
    _NO_PREFERENCE,
    _NOT_COMMITMENT,
    _OBSERVATION,
    _ONE_OFF,
    _PAST_CONTEXT,
    _PLEASANTRY,
    _POLICY_EXPLANATION,
    _PREF_MARKER,
    _PREF_SLOTS,
    _PROBLEM,
    _RESOLVED_CUSTOMER,
    _RESOLVED_SYSTEM,
    _SENTIMENT,
    _SIGN_OFF,
    _SOR_LOOKUP,
    _SOR_PLAN,
    _SOR_SEATS,
    _SOR_TICKET,
    _STANDING,
    _SYSTEM_ACTION,
    _TERM_ANY,
    _TERM_STRONG,
    _THANKS,
    _UNCERTAIN,
    _VENTING,
    _first_slot,
    _is_question,
    _words,
)
from agent_memory.adapters.extractors.sentences import (
    Sentence,
)
from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.sanitize import identifier_kinds


@dataclass
class _Proposal:
    sentence: Sentence
    type: MemoryType
    source_kind: Authority
    confidence: float
    basis: str
    category: str | None = None
    slot: str | None = None
    value: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    migration: bool = False


@dataclass
class _Skip:
    sentence: Sentence
    reason: str
    score: float | None = None  # the model's confidence, when a model read the statement


@dataclass
class _Session:
    problem_seen: bool = False
    resolution_seen: bool = False
    system_texts: set[str] = field(default_factory=set)
    last_commercial: tuple[int, str] | None = None  # (turn, slot) of the latest commercial mention
    last_fact: tuple[int, str, str] | None = None  # (turn, slot, category) of the customer's latest fact


class SpeakerRules:
    """The sentence rules of each speaker (a base of the rules extractor)."""

    def _customer(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        """A customer's sentence, through the rules in order: what is not worth storing, then what
        the customer asks for or states, then what they report; the first rule that applies decides."""
        text = s.text
        words = _words(text)
        question = _is_question(text)
        return (
            self._customer_noise(s, session, words)
            or self._customer_claims(s, session, words, question)
            or self._customer_reports(s, session, words, question)
            or _Skip(s, self._fallback_reason(s, customer=True))
        )

    def _customer_noise(self, s: Sentence, session: _Session, words: int) -> _Skip | None:
        """Sign-offs, thanks, venting, refusals to say, and what the system of record owns."""
        text = s.text
        if s.last_block and ("\n" in text or (words <= 6 and not re.search(r"[.!?]$", text))):
            return _Skip(s, "sign_off")
        if _THANKS.search(text) and words <= 6:
            return _Skip(s, "thanks")
        if _VENTING.search(text):
            return _Skip(s, "venting")
        if _DECLINED.search(text):
            return _Skip(s, "declined_to_state")
        if _NO_PREFERENCE.search(text):
            return _Skip(s, "no_explicit_preference")
        if _PROBLEM.search(text):
            session.problem_seen = True

        if not _HEDGE_MODAL.search(text) and (
            _SOR_PLAN.search(text)
            or _SOR_SEATS.search(text)
            or _SOR_TICKET.search(text)
            or _SOR_LOOKUP.search(text)
        ):
            return _Skip(s, "owned_by_system_of_record")

        return None

    def _customer_claims(
        self, s: Sentence, session: _Session, words: int, question: bool
    ) -> _Proposal | _Skip | None:
        """Billing incidents, commercial requests, identifiers, preferences, plans and confirmed fixes."""
        text = s.text
        if _BILLING_INCIDENT.search(text) and not question:
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CUSTOMER_CONFIRMED,
                0.7,
                "customer reported a billing incident",
            )

        commercial = self._commercial(s, session, customer=True)
        if commercial is not None:
            return commercial

        if identifier_kinds(text):
            if _PROBLEM.search(text) and not question:
                return _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CONFIRMED,
                    0.6,
                    "customer reported a problem (identifier masked)",
                )
            return _Skip(s, "sensitive_identifier_only")

        pref = self._preference(s)
        if pref is not None:
            return pref

        if words >= 4 and _HYPOTHETICAL.search(text) and not question:
            return _Proposal(
                s,
                MemoryType.SENTIMENT,
                Authority.CUSTOMER_CONFIRMED,
                0.6,
                "customer stated a hedged plan or hypothetical",
            )

        if (
            session.problem_seen
            and not session.resolution_seen
            and not question
            and not _PROBLEM.search(text)
            and _RESOLVED_CUSTOMER.search(text)
        ):
            session.resolution_seen = True
            return _Proposal(
                s,
                MemoryType.RESOLUTION,
                Authority.CONFIRMED_OUTCOME,
                0.8,
                "customer confirmed the fix works",
                value={"outcome_confirmed": True},
            )

        return None

    def _customer_reports(
        self, s: Sentence, session: _Session, words: int, question: bool
    ) -> _Proposal | _Skip | None:
        """Problems, facts, corrections of a value just stated, events and casual sentiment."""
        text = s.text
        if not question and _PAST_CONTEXT.search(text):
            return _Skip(s, "context_only")

        if _PROBLEM.search(text) and not re.match(
            r"(?i)(is|are|can|could|does|do|did|will|would|what|why|how)\b", text
        ):
            return _Proposal(
                s, MemoryType.EPISODE, Authority.CUSTOMER_CONFIRMED, 0.7, "customer reported a problem"
            )
        if not question and _UNCERTAIN.search(text):
            return _Skip(s, "uncertain_statement")

        if not question:
            fact = self._fact(s)
            if fact is not None:
                return fact

        if (
            not question
            and session.last_fact is not None
            and s.turn - session.last_fact[0] <= 2
            and _CORRECTION.search(text)
            and re.search(r"\d", text)
        ):
            # "Actually, no, ... 67 is more realistic": a correction of the value just stated.
            _, slot, category = session.last_fact
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.7,
                "customer corrected the value they had just stated",
                category=category,
                slot=slot,
            )

        if not question and _EVENT.search(text) and words >= 4:
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CUSTOMER_CONFIRMED,
                0.65,
                "customer reported an event of the account",
            )

        if not question and words >= 5 and _SENTIMENT.search(text):
            return _Proposal(
                s,
                MemoryType.SENTIMENT,
                Authority.CUSTOMER_CONFIRMED,
                0.55,
                "customer expressed casual sentiment",
            )

        return None

    def _agent(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        text = s.text
        words = _words(text)
        if (s.last_block and words <= 6 and not re.search(r"[.!?]$", text)) or (
            "\n" in text and _SIGN_OFF.search(text)
        ):
            return _Skip(s, "sign_off")
        if _PROBLEM.search(text):
            session.problem_seen = True
        if _is_question(text):
            return _Skip(s, "agent_question")
        if _THANKS.search(text) and words <= 5:
            return _Skip(s, "thanks")

        if _SOR_SEATS.search(text) or _SOR_PLAN.search(text):
            return _Skip(s, "owned_by_system_of_record")
        committed = bool(_COMMITMENT.search(text)) and not _NOT_COMMITMENT.search(text)
        if not (committed and not _TERM_STRONG.search(text)):
            commercial = self._commercial(s, session, customer=False)
            if commercial is not None:
                return commercial
        if committed:
            due = _DUE.search(text)
            return _Proposal(
                s,
                MemoryType.COMMITMENT,
                Authority.AGENT_INFERENCE,
                0.85,
                "agent stated commitment",
                value={"owner": "agent", "due": due.group(0) if due else None, "state": "open"},
            )
        if _OBSERVATION.search(text):
            return _Proposal(
                s,
                MemoryType.OBSERVATION,
                Authority.AGENT_INFERENCE,
                0.5,
                "agent inference about the customer (unverified)",
            )
        if _AGENT_CLAIM.search(text):
            return _Skip(s, "agent_claim_unverified")
        return _Skip(s, self._fallback_reason(s, customer=False))

    def _system(self, s: Sentence, session: _Session) -> _Proposal | _Skip:
        text = s.text
        key = re.sub(r"\s+", " ", text.strip().lower())
        if key in session.system_texts:
            return _Skip(s, "duplicate_tool_output")
        session.system_texts.add(key)
        if session.problem_seen and not session.resolution_seen and _RESOLVED_SYSTEM.search(text):
            session.resolution_seen = True
            return _Proposal(
                s,
                MemoryType.RESOLUTION,
                Authority.CONFIRMED_OUTCOME,
                0.9,
                "system turn verified the outcome",
                value={"outcome_confirmed": True},
            )
        if _PROBLEM.search(text) and not _SYSTEM_ACTION.search(text):
            session.problem_seen = True
        if (
            _SOR_PLAN.search(text)
            or _SOR_SEATS.search(text)
            or _SOR_TICKET.search(text)
            or _SOR_LOOKUP.search(text)
        ):
            return _Skip(s, "owned_by_system_of_record")
        if _SYSTEM_ACTION.search(text):
            return _Proposal(
                s,
                MemoryType.EPISODE,
                Authority.CONFIRMED_OUTCOME,
                0.85,
                "system turn recorded a completed action",
            )
        return _Skip(s, "transient_tool_output")

    # ------------------------------------------------------------------ specific rules

    def _commercial(self, s: Sentence, session: _Session, *, customer: bool) -> _Proposal | None:
        text = s.text
        slot_match = _first_slot(_COMMERCIAL_SLOTS, text)
        term = _TERM_ANY.search(text)
        if slot_match is None and term is not None and _TERM_STRONG.search(text) and session.last_commercial:
            # "We'd want 20%." right after a discount offer continues that negotiation.
            last_turn, last_slot = session.last_commercial
            if s.turn - last_turn <= 1 and _words(text) <= 12:
                slot_match = (last_slot, term.group(0))
        if slot_match is None or term is None:
            return None
        slot, cue = slot_match
        session.last_commercial = (s.turn, slot)
        who = "customer" if customer else "agent"
        return _Proposal(
            s,
            MemoryType.FACT,
            Authority.CUSTOMER_CLAIM,
            0.8,
            f"commercial term mentioned by the {who} in conversation; needs human approval",
            category=FactCategory.CONTRACT_COMMERCIAL.value,
            slot=slot,
            value={"terms": [m.group(0) for m in _TERM_ANY.finditer(text)], "cue": cue, "stated_by": who},
        )

    def _preference(self, s: Sentence) -> _Proposal | None:
        text = s.text
        standing = re.search(r"(?i)\b(going forward|from now on|in (the )?future|künftig|à l'avenir)\b", text)
        if _is_question(text) and not standing:
            return None
        if _ONE_OFF.search(text) and not standing:
            return None
        if _ARTIFACT_REQUEST.search(text) and not _STANDING.search(text):
            return None
        slot_match = _first_slot(_PREF_SLOTS, text)
        if slot_match is None:
            return None
        slot, cue = slot_match
        if slot != "preference.tone" and not _PREF_MARKER.search(text):
            return None
        return _Proposal(
            s,
            MemoryType.PREFERENCE,
            Authority.CUSTOMER_CONFIRMED,
            0.85,
            "explicit customer statement of a standing preference",
            category="PREFERENCE",
            slot=slot,
            value={"value": cue},
        )

    def _fact(self, s: Sentence) -> _Proposal | None:
        text = s.text
        stakeholder = _first_slot(_STAKEHOLDER_SLOTS, text)
        if stakeholder is not None:
            slot, cue = stakeholder
            person = _PERSON.search(text)
            if slot == "stakeholder.technical_contact" and not person and "me" not in text.lower().split():
                stakeholder = None
            else:
                return _Proposal(
                    s,
                    MemoryType.FACT,
                    Authority.CUSTOMER_CONFIRMED,
                    0.8,
                    "customer stated a stakeholder role explicitly",
                    category=FactCategory.STAKEHOLDER.value,
                    slot=slot,
                    value={"value": person.group(1) if person else "the speaker", "cue": cue},
                )
        profile = _first_slot(_PROFILE_SLOTS, text)
        if profile is not None:
            slot, cue = profile
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.75,
                "customer stated an account profile fact explicitly",
                category=FactCategory.ACCOUNT_PROFILE.value,
                slot=slot,
                value={"cue": cue},
            )
        tech = _first_slot(_TECH_SLOTS, text)
        if tech is not None and _TECH_PAST_ONLY.search(text) and not _TECH_PRESENT.search(text):
            tech = None
        if tech is not None and _TECH_STATE.search(text):
            slot, cue = tech
            if _REMOVAL.search(text) and not _CURRENT_STATE.search(text):
                return _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CONFIRMED,
                    0.65,
                    "customer reported a change to their environment",
                )
            entity = self._target_entity(text, slot) or cue
            return _Proposal(
                s,
                MemoryType.FACT,
                Authority.CUSTOMER_CONFIRMED,
                0.8,
                "customer stated their technical environment explicitly",
                category=FactCategory.TECHNICAL_ENVIRONMENT.value,
                slot=slot,
                value={"value": entity},
                migration=bool(_MIGRATION.search(text)),
            )
        return None

    @staticmethod
    def _target_entity(text: str, slot: str) -> str | None:
        pattern = dict(_TECH_SLOTS)[slot]
        m = re.search(r"(?i)\bto\b(.*)", text)
        if _MIGRATION.search(text) and m:
            found = pattern.search(m.group(1))
            if found:
                return found.group(0)
        return None

    @staticmethod
    def _fallback_reason(s: Sentence, *, customer: bool) -> str:
        text = s.text
        words = _words(text)
        if _GREETING.search(text) or (words <= 3 and text.rstrip().endswith(",")):
            return "greeting"
        if _SIGN_OFF.search(text) and "\n" in text:
            return "sign_off"
        if _THANKS.search(text):
            return "thanks"
        if _is_question(text):
            return "customer_question" if customer else "agent_question"
        if words <= 4 and _ACK.search(text):
            return "acknowledgement"
        if not customer and _PLEASANTRY.search(text):
            return "pleasantry"
        if not customer and _POLICY_EXPLANATION.search(text):
            return "policy_explanation"
        if not customer:
            return "agent_statement_not_memorable"
        return "small_talk" if words <= 8 else "not_memorable"
