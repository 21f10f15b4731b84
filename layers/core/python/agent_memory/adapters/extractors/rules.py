"""The offline default extractor: deterministic rules over sentences, no network.

Session-close extraction (docs/rules.md, "Types" and "Not stored") done with
patterns and small lexicons. It proposes; the write gateway decides. The rules
lean towards precision ("wrongly admitted memories are worse than missed
ones"): a statement becomes a candidate only when a specific pattern names
what it is, and everything else is skipped with a reason.

Pipeline per session:

1. Split every turn into sentences (blank-line blocks, then sentence ends),
   keeping the character span of each in its turn.
2. Classify each sentence by speaker, in a fixed order of rules:
   - anyone: instruction-like text -> flagged candidate (never acted on);
   - customer: thanks / venting / refusals -> skipped; plan tier, seats,
     ticket state -> skipped (`owned_by_system_of_record`); commercial terms ->
     CONTRACT_COMMERCIAL fact; standing preferences; hypotheticals and hedged
     plans -> sentiment; confirmed fixes -> resolution; problems and events ->
     episode; stakeholder / technical / profile facts; casual sentiment;
   - agent: questions skipped; commercial terms; own follow-ups -> commitment;
     hedged inferences about the customer -> observation; claims of actions
     taken -> skipped (`agent_claim_unverified`);
   - system: repeated output, lookups of system-of-record state and plain
     tool output skipped; confirmed fixes -> resolution; completed actions ->
     episode.
3. Session pass: within a slot the customer's last statement wins (earlier
   ones are `superseded_in_session`, or an episode when they report a move);
   exact repeats are dropped; one resolution per session.
4. One episode summary per session (at most 600 characters).

Authority (source_kind) of what it proposes:
- explicit customer statements (preferences, non-commercial facts, sentiment,
  episodes the customer reports): `customer_confirmed`;
- commercial mentions, from either side: `customer_claim` (an unverified
  statement about account state; the gateway holds CONTRACT_COMMERCIAL below
  `human_verified` for approval whatever the rank);
- outcomes a system turn carries or the customer confirms (resolutions,
  episodes from system turns): `confirmed_outcome`;
- the agent's own commitments and inferences: `agent_inference` (observations
  are quarantined; commitments are admitted as follow-ups).

Where the pieces are: `sentences` (the one `split_sentences`), `lexicons` and
`fact_slots` (the patterns), `speaker_rules` (step 2, per speaker); this module
runs the pipeline, the session pass, the candidates and the summary.
"""

from __future__ import annotations

import re

import numpy as np

from agent_memory.adapters.extractors.lexicons import (
    _EXTRA_INJECTION,
    _GREETING,
    _LEADING_SALUTATION,
    _REQUEST,
    UNTRUSTED_INSTRUCTION,
    _is_question,
    _words,
)
from agent_memory.adapters.extractors.sentences import (
    Sentence,
    split_sentences,
)
from agent_memory.adapters.extractors.speaker_rules import (
    SpeakerRules,
    _Proposal,
    _Session,
    _Skip,
)
from agent_memory.domain.enums import Authority, FactCategory, MemoryType
from agent_memory.domain.extraction import (
    EPISODE_SUMMARY_MAX_CHARS,
    CandidateMemory,
    ExtractionResult,
    SkippedStatement,
    Speaker,
    Transcript,
)
from agent_memory.domain.records import SourceSpan
from agent_memory.domain.sanitize import SURROGATE, mask_identifiers, mask_value
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.ports.embedder import Embedder


def _is_instruction(item: _Proposal | _Skip) -> bool:
    return isinstance(item, _Proposal) and UNTRUSTED_INSTRUCTION in item.flags


def _merge_adjacent_instructions(items: list[_Proposal | _Skip], turn_text: str) -> list[_Proposal | _Skip]:
    """Consecutive instruction-like sentences of one turn are one injected block, kept as one item."""
    out: list[_Proposal | _Skip] = []
    for item in items:
        prev = out[-1] if out else None
        if prev is not None and _is_instruction(prev) and _is_instruction(item):
            assert isinstance(prev, _Proposal)
            first = prev.sentence
            end = item.sentence.end
            merged = Sentence(
                first.turn, first.start, end, turn_text[first.start : end], first.speaker, first.last_block
            )
            out[-1] = _Proposal(
                merged,
                prev.type,
                prev.source_kind,
                prev.confidence,
                prev.basis,
                value=dict(prev.value),
                flags=list(prev.flags),
            )
            continue
        out.append(item)
    return out


class RulesExtractor(SpeakerRules):
    """Deterministic, offline session-close extractor (patterns and lexicons, no network).

    `embedder` is optional: when given, candidates of the same type and slot
    whose contents are near-identical (cosine >= `duplicate_similarity`) are
    proposed once. Without it, only exact repeats (after normalising case and
    spacing) are dropped.
    """

    name = "rules"
    version = "1.0.0"

    def __init__(self, embedder: Embedder | None = None, *, duplicate_similarity: float = 0.95) -> None:
        self.embedder = embedder
        self.duplicate_similarity = duplicate_similarity

    # ------------------------------------------------------------------ public

    def extract(self, transcript: Transcript) -> ExtractionResult:
        session = _Session()
        decided: list[_Proposal | _Skip] = []
        for index, turn in enumerate(transcript.turns):
            in_turn: list[_Proposal | _Skip] = []
            for sentence in split_sentences(index, turn.speaker, turn.text):
                in_turn.extend(self._classify(sentence, session))
            decided.extend(_merge_adjacent_instructions(in_turn, turn.text))
        return self._result(transcript, decided)

    def _result(self, transcript: Transcript, decided: list[_Proposal | _Skip]) -> ExtractionResult:
        """The session pass, candidates and skips with their spans, de-duplication and the summary:
        the same for every extractor built on these rules, whatever decided each statement."""
        decided = self._session_pass(decided)
        candidates: list[CandidateMemory] = []
        skipped: list[SkippedStatement] = []
        for item in decided:
            span = SourceSpan(turn=item.sentence.turn, start=item.sentence.start, end=item.sentence.end)
            if isinstance(item, _Skip):
                skipped.append(SkippedStatement(span=span, reason=item.reason, score=item.score))
            else:
                candidates.append(self._candidate(item, span))
        candidates, dupes = self._dedupe(candidates)
        skipped.extend(dupes)
        skipped.sort(key=lambda s: (s.span.turn, s.span.start))
        summary = self._summary(transcript, candidates, decided)
        flags = sorted({f for c in candidates for f in c.flags})
        return ExtractionResult(candidates=candidates, skipped=skipped, summary=summary, flags=flags)

    # ------------------------------------------------------------------ classification

    def _classify(self, s: Sentence, session: _Session) -> list[_Proposal | _Skip]:
        text = s.text
        if screen_for_instructions(text).flagged or _EXTRA_INJECTION.search(text):
            signals = list(screen_for_instructions(text).signals) or ["markup_or_role_override"]
            return [
                _Proposal(
                    s,
                    MemoryType.EPISODE,
                    Authority.CUSTOMER_CLAIM if s.speaker is Speaker.CUSTOMER else Authority.AGENT_INFERENCE,
                    0.9,
                    "instruction-like text kept as inert data: " + ",".join(signals),
                    flags=[UNTRUSTED_INSTRUCTION],
                    value={"untrusted_instruction": True},
                )
            ]
        if s.speaker is Speaker.SYSTEM:
            return [self._system(s, session)]
        if s.speaker is Speaker.AGENT:
            return [self._agent(s, session)]
        result = self._customer(s, session)
        if (
            isinstance(result, _Proposal)
            and result.type is MemoryType.FACT
            and result.slot
            and result.category != FactCategory.CONTRACT_COMMERCIAL.value
        ):
            session.last_fact = (s.turn, result.slot, result.category or "")
        return [result]

    # ------------------------------------------------------------------ session pass

    @staticmethod
    def _session_pass(items: list[_Proposal | _Skip]) -> list[_Proposal | _Skip]:
        """Within a slot the customer's last statement wins; an earlier move becomes an episode."""
        last_index: dict[str, int] = {}
        for i, item in enumerate(items):
            if (
                isinstance(item, _Proposal)
                and item.slot
                and item.type in (MemoryType.FACT, MemoryType.PREFERENCE)
                and item.category != FactCategory.CONTRACT_COMMERCIAL.value
            ):
                last_index[item.slot] = i
        out: list[_Proposal | _Skip] = []
        for i, item in enumerate(items):
            if (
                isinstance(item, _Proposal)
                and item.slot in last_index
                and item.type in (MemoryType.FACT, MemoryType.PREFERENCE)
                and item.category != FactCategory.CONTRACT_COMMERCIAL.value
                and last_index[item.slot] != i
            ):
                if item.migration:
                    out.append(
                        _Proposal(
                            item.sentence,
                            MemoryType.EPISODE,
                            Authority.CUSTOMER_CONFIRMED,
                            0.65,
                            "customer reported a move; the current value is stated separately",
                        )
                    )
                else:
                    out.append(_Skip(item.sentence, "superseded_in_session"))
                continue
            out.append(item)
        return out

    def _dedupe(
        self, candidates: list[CandidateMemory]
    ) -> tuple[list[CandidateMemory], list[SkippedStatement]]:
        kept: list[CandidateMemory] = []
        skipped: list[SkippedStatement] = []
        seen: set[tuple[str, str | None, str]] = set()
        for c in candidates:
            key = (c.type.value, c.slot, re.sub(r"\W+", " ", c.content.casefold()).strip())
            if key in seen:
                skipped.append(SkippedStatement(span=c.span, reason="duplicate_statement"))
                continue
            seen.add(key)
            kept.append(c)
        if self.embedder is None or len(kept) < 2:
            return kept, skipped
        vectors = np.asarray(self.embedder.embed([c.content for c in kept]), dtype=np.float32)
        final: list[CandidateMemory] = []
        final_vectors: list[np.ndarray] = []
        for c, v in zip(kept, vectors, strict=True):
            twin = any(
                f.type == c.type
                and f.slot == c.slot
                and UNTRUSTED_INSTRUCTION not in c.flags
                and float(np.dot(fv, v)) >= self.duplicate_similarity
                for f, fv in zip(final, final_vectors, strict=True)
            )
            if twin:
                skipped.append(SkippedStatement(span=c.span, reason="duplicate_statement"))
                continue
            final.append(c)
            final_vectors.append(v)
        return final, skipped

    # ------------------------------------------------------------------ output

    def _candidate(self, p: _Proposal, span: SourceSpan) -> CandidateMemory:
        text = re.sub(r"\s+", " ", p.sentence.text).strip()
        if UNTRUSTED_INSTRUCTION not in p.flags and _words(text) > 6:
            text = _LEADING_SALUTATION.sub("", text, count=1)
            text = text[:1].upper() + text[1:]
        content = mask_identifiers(text).text
        value, _ = mask_value(p.value)
        return CandidateMemory(
            type=p.type,
            category=p.category or p.type.value.upper(),
            slot=p.slot,
            content=content,
            value={k: v for k, v in value.items() if v is not None},
            span=span,
            speaker=p.sentence.speaker,
            source_kind=p.source_kind,
            confidence=p.confidence,
            confidence_basis=p.basis,
            extractor=self.name,
            extractor_version=self.version,
            flags=list(p.flags),
        )

    @staticmethod
    def _first_request(decided: list[_Proposal | _Skip]) -> Sentence | None:
        """The customer's first request, for a session with no episode: never a commercial term, an
        instruction, a value the system of record owns, an identifier, or a pleasantry."""
        excluded_reasons = {
            "owned_by_system_of_record",
            "sensitive_identifier_only",
            "greeting",
            "thanks",
            "sign_off",
            "venting",
            "acknowledgement",
            "declined_to_state",
        }
        usable: list[Sentence] = []
        for item in decided:
            sentence = item.sentence
            if sentence.speaker is not Speaker.CUSTOMER or _words(sentence.text) < 4:
                continue
            if isinstance(item, _Skip) and item.reason in excluded_reasons:
                continue
            if isinstance(item, _Proposal) and (
                item.category == FactCategory.CONTRACT_COMMERCIAL.value or UNTRUSTED_INSTRUCTION in item.flags
            ):
                continue
            if SURROGATE.search(sentence.text) or _GREETING.search(sentence.text):
                continue
            usable.append(sentence)
        requests = [s for s in usable if _is_question(s.text) or _REQUEST.search(s.text)]
        pool = requests or usable
        return pool[0] if pool else None

    def _summary(
        self, transcript: Transcript, candidates: list[CandidateMemory], decided: list[_Proposal | _Skip]
    ) -> CandidateMemory | None:
        if not transcript.turns:
            return None
        parts = [
            c
            for c in candidates
            if c.type in (MemoryType.EPISODE, MemoryType.RESOLUTION) and UNTRUSTED_INSTRUCTION not in c.flags
        ]
        if parts:
            body = " ".join(c.content for c in parts)
            outcome = any(c.type is MemoryType.RESOLUTION for c in parts)
            kind = (
                Authority.CONFIRMED_OUTCOME
                if (outcome or any(c.source_kind is Authority.CONFIRMED_OUTCOME for c in parts))
                else Authority.CUSTOMER_CONFIRMED
            )
            basis = "extractive summary of the session's episode and resolution statements"
            speaker = parts[0].speaker
        else:
            first = self._first_request(decided)
            if first is None:
                return None
            body = "Customer raised: " + first.text
            speaker = Speaker.CUSTOMER
            outcome = False
            kind = Authority.CUSTOMER_CLAIM
            basis = "first customer request of the session (no episode statements found)"
        channel = f"{transcript.channel} " if transcript.channel else ""
        head = f"Session ({channel.strip() or 'conversation'}): "
        tail = " Outcome confirmed." if outcome else ""
        text = mask_identifiers(re.sub(r"\s+", " ", head + body).strip()).text
        limit = EPISODE_SUMMARY_MAX_CHARS - len(tail)
        if len(text) > limit:
            text = text[: limit - 1].rstrip() + "…"
        text += tail
        return CandidateMemory(
            type=MemoryType.EPISODE,
            category="EPISODE",
            content=text,
            value={"summary": True, "outcome_confirmed": outcome} if outcome else {"summary": True},
            span=SourceSpan(turn=0, start=0, end=len(transcript.turns[0].text)),
            speaker=speaker,
            source_kind=kind,
            confidence=0.7,
            confidence_basis=basis,
            extractor=self.name,
            extractor_version=self.version,
        )
