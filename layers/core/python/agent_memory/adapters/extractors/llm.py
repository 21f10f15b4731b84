"""The LLM extractor: any OpenAI-compatible endpoint, structured outputs.

The transcript goes in as data (a JSON array inside delimiters), never as
instructions; the prompt is a versioned file. The model's answer is parsed
into a pydantic schema; anything malformed is rejected with a reason and
nothing is admitted. Timeouts are retried by the SDK, then surface as
retryable errors (the queue redelivers).

A long transcript goes in as overlapping windows of turns (`chunk_turns` turns,
`overlap_turns` of them shared with the window before, or fewer turns when the
text would pass `chunk_chars`), each window numbered with the transcript's own turn
indices. A candidate found twice in an overlap (same turn, quote and type) is kept once; one
rejected window fails the whole session, so nothing half-read is admitted.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field, ValidationError

from agent_memory.domain.enums import Authority, MemoryType
from agent_memory.domain.extraction import (
    EPISODE_SUMMARY_MAX_CHARS,
    CandidateMemory,
    ExtractionResult,
    Speaker,
    Transcript,
)
from agent_memory.domain.memory_types import TYPE_SPECS
from agent_memory.domain.records import SourceSpan
from agent_memory.domain.sanitize import mask_identifiers, unstorable_value
from agent_memory.domain.screening import screen_for_instructions
from agent_memory.ports.extractor import ExtractionFailed

PROMPT_VERSION = "extract_v1"
# Where a prompt file lists the memory types: one line per row of the type table, in its order.
TYPES_PLACEHOLDER = "{memory_types}"

# The names the model may answer with, in the table's order (the JSON schema's enum).
if TYPE_CHECKING:
    TypeName = str
else:
    TypeName = Literal[tuple(t.value for t in TYPE_SPECS)]


class LlmCandidate(BaseModel):
    type: TypeName
    category: str | None = None
    slot: str | None = None
    turn: int = Field(ge=0)
    quote: str = Field(min_length=1, max_length=2000)
    content: str = Field(min_length=1, max_length=1000)
    confidence: float = Field(ge=0.0, le=1.0)
    flags: list[str] = Field(default_factory=list)


class LlmExtraction(BaseModel):
    candidates: list[LlmCandidate] = Field(max_length=100)
    summary: str = Field(max_length=2000)
    injection_detected: bool = False


# What each speaker may create (who said it matters): the type table's `extracted_from`.
ALLOWED: dict[Speaker, set[str]] = {
    speaker: {t.value for t, s in TYPE_SPECS.items() if speaker in s.extracted_from} for speaker in Speaker
}


def load_prompt(version: str = PROMPT_VERSION) -> str:
    """The prompt file, its list of memory types rendered from the type table."""
    text = (resources.files("agent_memory.adapters.extractors") / "prompts" / f"{version}.md").read_text()
    types = "\n".join(f"- {t.value}: {s.prompt_hint}" for t, s in TYPE_SPECS.items())
    return text.replace(TYPES_PLACEHOLDER, types)


class LlmExtractor:
    name = "llm"

    def __init__(
        self,
        *,
        model: str,
        api_key: str | None,
        base_url: str | None,
        timeout_s: float = 20.0,
        max_retries: int = 2,
        chunk_turns: int = 40,
        overlap_turns: int = 4,
        chunk_chars: int = 24_000,
    ) -> None:
        from openai import OpenAI

        if not 0 <= overlap_turns < chunk_turns:
            raise ValueError("overlap_turns must be at least 0 and less than chunk_turns")
        self.chunk_turns = chunk_turns
        self.overlap_turns = overlap_turns
        self.chunk_chars = chunk_chars
        self.model = model
        self.version = f"{PROMPT_VERSION}:{model}"
        self.prompt = load_prompt()
        self.client = OpenAI(
            api_key=api_key or "unset", base_url=base_url, timeout=timeout_s, max_retries=max_retries
        )

    def windows(self, transcript: Transcript) -> list[range]:
        """The turn ranges sent one request each: consecutive windows overlapping by `overlap_turns`."""
        n = len(transcript.turns)
        out: list[range] = []
        start = 0
        while start < n:
            end, chars = start, 0
            while end < n and end - start < self.chunk_turns:
                chars += len(transcript.turns[end].text)
                if end > start and chars > self.chunk_chars:
                    break
                end += 1
            out.append(range(start, end))
            if end >= n:
                break
            start = max(end - self.overlap_turns, start + 1)
        return out

    def extract(self, transcript: Transcript) -> ExtractionResult:
        parts = [self._ask(transcript, window) for window in self.windows(transcript)]
        merged = LlmExtraction(
            candidates=[],
            summary=" ".join(p.summary.strip() for p in parts if p.summary.strip())[:2000],
            injection_detected=any(p.injection_detected for p in parts),
        )
        earlier: set[tuple[int, str, str]] = set()
        for part in parts:
            # The same statement read again in the overlap with an earlier window is kept once.
            merged.candidates += [c for c in part.candidates if (c.turn, c.quote, c.type) not in earlier]
            earlier |= {(c.turn, c.quote, c.type) for c in part.candidates}
        return self._to_result(transcript, merged)

    def _ask(self, transcript: Transcript, window: range) -> LlmExtraction:
        import openai

        data = json.dumps(
            [
                {"turn": i, "speaker": transcript.turns[i].speaker.value, "text": transcript.turns[i].text}
                for i in window
            ],
            ensure_ascii=False,
        )
        # A transcript cannot close the delimiter: JSON escapes quotes, and we escape '<'.
        data = data.replace("<", "\\u003c")
        try:
            completion = self.client.chat.completions.parse(
                model=self.model,
                messages=[
                    {"role": "system", "content": self.prompt},
                    {"role": "user", "content": f"<transcript>{data}</transcript>"},
                ],
                response_format=LlmExtraction,
                temperature=0,
            )
        except (
            openai.APITimeoutError,
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        ):
            raise  # retryable: the queue redelivers
        except (
            ValidationError,
            ValueError,
            openai.APIStatusError,
            openai.LengthFinishReasonError,
            openai.ContentFilterFinishReasonError,
        ) as exc:
            raise ExtractionFailed(f"model output rejected: {type(exc).__name__}") from exc
        message = completion.choices[0].message
        parsed = message.parsed
        if parsed is None:
            raise ExtractionFailed("model refused or returned no structured output")
        # A candidate pointing outside its window is not something this request showed the model.
        parsed.candidates = [c for c in parsed.candidates if c.turn in window]
        return parsed

    def _to_result(self, transcript: Transcript, parsed: LlmExtraction) -> ExtractionResult:
        result = ExtractionResult()
        if parsed.injection_detected:
            result.flags.append("untrusted_instruction")
        for c in parsed.candidates:
            if c.turn >= len(transcript.turns):
                continue
            turn = transcript.turns[c.turn]
            start = turn.text.find(c.quote)
            if start < 0 or c.type not in ALLOWED[turn.speaker]:
                continue  # unsupported by the transcript, or the wrong speaker: not admitted
            if unstorable_value(c.model_dump()) is not None:
                continue  # model-written text the database cannot store (a NUL): not admitted
            span = SourceSpan(turn=c.turn, start=start, end=start + len(c.quote))
            flags = list(c.flags)
            if screen_for_instructions(c.quote).flagged and "untrusted_instruction" not in flags:
                flags.append("untrusted_instruction")
            mtype = MemoryType(c.type)
            content = c.quote if "untrusted_instruction" in flags else c.content
            result.candidates.append(
                CandidateMemory(
                    type=mtype,
                    category=c.category if mtype is MemoryType.FACT else None,
                    slot=c.slot if mtype in (MemoryType.FACT, MemoryType.PREFERENCE) else None,
                    content=mask_identifiers(content).text,
                    span=span,
                    speaker=turn.speaker,
                    source_kind=_source_kind(turn.speaker, mtype),
                    confidence=c.confidence,
                    confidence_basis=f"llm {self.model} with verbatim quote",
                    extractor=self.name,
                    extractor_version=self.version,
                    flags=flags,
                )
            )
        summary = mask_identifiers(parsed.summary.strip()).text[:EPISODE_SUMMARY_MAX_CHARS]
        if summary and unstorable_value(summary) is None:
            result.summary = CandidateMemory(
                type=MemoryType.EPISODE,
                content=summary,
                span=SourceSpan(turn=0, start=0, end=len(transcript.turns[0].text)),
                speaker=Speaker.SYSTEM,
                source_kind=Authority.CUSTOMER_CONFIRMED,
                confidence=0.7,
                confidence_basis="llm session summary",
                extractor=self.name,
                extractor_version=self.version,
            )
        return result


def _source_kind(speaker: Speaker, memory_type: MemoryType) -> Authority:
    if memory_type is MemoryType.OBSERVATION or speaker is Speaker.AGENT:
        return Authority.AGENT_INFERENCE
    if speaker is Speaker.SYSTEM:
        return Authority.CONFIRMED_OUTCOME
    return Authority.CUSTOMER_CONFIRMED
