"""Importing history: memories, or closed sessions' transcripts, one JSON object a line, through
the batched write path (services/batch_admission.py): every memory is admitted, held or refused
exactly as a single write would be; nothing here decides anything.

A line is a memory (the body of `POST /v1/memories`) or a transcript (`session_id`, `subject_id`,
`occurred_at`, `turns`, as a session close takes them), whose turns are masked and extracted here,
at once, the candidates written as the extraction worker writes them. Each line is idempotent: a
memory without an `idempotency_key` gets one from its text, a transcript's candidates one from the
session and their position, so importing the same file again replays instead of writing again.

Lines are written a chunk at a time, each chunk one transaction, and `on_chunk` hears after each
commit how many lines are done (the command's checkpoint: an interrupted import resumes after the
last chunk written). A line that cannot be written (not JSON, nested too deeply, malformed, a
source kind the importing role may not assert) is refused alone, named by its line, field and
reason, never its text, and the others go ahead: the checkpoint passes it like any other line.
A quarantined line is named with its reasons too. `parse_memories` (the HTTP route) refuses the
whole request instead.
"""

from __future__ import annotations

import codecs
import functools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_memory.domain.enums import Decision
from agent_memory.domain.errors import DomainError, InvalidRequest, UnauthorizedMutation
from agent_memory.domain.extraction import MAX_TRANSCRIPT_BYTES, Transcript, Turn
from agent_memory.domain.hashing import text_hash
from agent_memory.domain.ids import SessionId, SubjectId
from agent_memory.domain.records import MemoryWrite, Principal, WriteResult
from agent_memory.domain.sanitize import MaskedText, mask_identifiers
from agent_memory.observability import logger
from agent_memory.ports.extractor import ExtractionFailed, Extractor
from agent_memory.progress import ProgressBar, ProgressFactory
from agent_memory.services.authorization import require_source_assertion
from agent_memory.services.batch_admission import MAX_BATCH
from agent_memory.services.extraction import ExtractionWorker
from agent_memory.services.write_gateway import WriteGateway

MAX_LINE_BYTES = MAX_TRANSCRIPT_BYTES + 65_536
MAX_REFUSALS_LISTED = 100
DEFAULT_CHUNK = 500


class ImportedTranscript(BaseModel):
    """A closed session to import: what `POST /v1/sessions/{id}/close` takes, and its id."""

    model_config = ConfigDict(extra="forbid")

    session_id: SessionId
    subject_id: SubjectId
    ticket_id: MaskedText | None = Field(default=None, max_length=200)
    channel: MaskedText | None = Field(default=None, max_length=50)
    occurred_at: datetime
    turns: list[Turn] = Field(min_length=1, max_length=2000)


# Why a line was refused (a code, never the line's text), from the error its write raised.
REFUSAL_REASONS = {
    "invalid_request": "invalid",
    "payload_too_large": "too_large",
    "unauthorized_memory_mutation": "source_kind_not_allowed",
}


class LineRefused(Exception):
    """One line that cannot be written: the field it was refused for and why (a code)."""

    def __init__(self, field_name: str, reason: str) -> None:
        super().__init__(reason)
        self.field = field_name
        self.reason = reason


@dataclass
class ImportSummary:
    """What an import did, by decision; refused lines by number, field and reason, quarantined
    ones by number and the gateway's reasons (never their text)."""

    lines: int = 0
    memory_lines: int = 0
    transcript_lines: int = 0
    candidates: int = 0
    decisions: Counter[str] = field(default_factory=Counter)
    refused: int = 0
    refusals: list[dict[str, Any]] = field(default_factory=list)
    quarantines: list[dict[str, Any]] = field(default_factory=list)

    def refuse(self, line: int, field_name: str, reason: str) -> None:
        self.refused += 1
        if len(self.refusals) < MAX_REFUSALS_LISTED:
            self.refusals.append({"line": line, "field": field_name, "reason": reason})

    def quarantine(self, line: int, reasons: list[str]) -> None:
        if len(self.quarantines) < MAX_REFUSALS_LISTED:
            self.quarantines.append({"line": line, "reasons": list(reasons)})

    def as_dict(self) -> dict[str, Any]:
        return {
            "lines": self.lines,
            "memory_lines": self.memory_lines,
            "transcript_lines": self.transcript_lines,
            "candidates": self.candidates,
            "decisions": dict(sorted(self.decisions.items())),
            "refused": self.refused,
            "refusals": list(self.refusals),
            "quarantines": list(self.quarantines),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImportSummary:
        return cls(
            lines=int(d.get("lines", 0)),
            memory_lines=int(d.get("memory_lines", 0)),
            transcript_lines=int(d.get("transcript_lines", 0)),
            candidates=int(d.get("candidates", 0)),
            decisions=Counter(d.get("decisions", {})),
            refused=int(d.get("refused", 0)),
            refusals=list(d.get("refusals", [])),
            quarantines=list(d.get("quarantines", [])),
        )


def _field_of(exc: ValidationError) -> str:
    loc = exc.errors()[0]["loc"]
    name = ".".join(str(p) for p in loc) or "line"
    # A path into `value` names keys the line chose (its content): only `value` is kept.
    return "value" if name == "value" or name.startswith("value.") else name[:100]


def memory_write(obj: dict[str, Any], *, key_basis: str) -> MemoryWrite:
    """One memory line as a write, idempotent by its own key or one drawn from `key_basis`."""
    try:
        write = MemoryWrite.model_validate(obj)
    except ValidationError as exc:
        raise InvalidRequest("not a memory", field=_field_of(exc)) from exc
    if write.idempotency_key is None:
        write = write.model_copy(update={"idempotency_key": f"import:{text_hash(key_basis)[:40]}"})
    return write


def parse_memories(items: list[Any], *, prefix: str = "memories") -> list[MemoryWrite]:
    """The HTTP route's body: every item a memory, or 422 naming the first bad one and its field."""
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise InvalidRequest(f"{prefix}[{i}]: expected an object", field=f"{prefix}[{i}]")
        try:
            out.append(memory_write(item, key_basis=json.dumps(item, sort_keys=True, default=str)))
        except InvalidRequest as exc:
            raise InvalidRequest(f"{prefix}[{i}]: {exc.message}", field=f"{prefix}[{i}].{exc.field}") from exc
    return out


def transcript_writes(obj: dict[str, Any], extractor: Extractor) -> list[MemoryWrite]:
    """A transcript line's candidates as the extraction worker writes them (masked first)."""
    try:
        imported = ImportedTranscript.model_validate(obj)
    except ValidationError as exc:
        raise InvalidRequest("not a transcript", field=_field_of(exc)) from exc
    transcript = Transcript(
        session_id=imported.session_id,
        subject_id=imported.subject_id,
        ticket_id=imported.ticket_id,
        channel=imported.channel,
        occurred_at=imported.occurred_at,
        turns=[Turn(speaker=t.speaker, text=mask_identifiers(t.text).text) for t in imported.turns],
    )
    try:
        result = extractor.extract(transcript)
    except ExtractionFailed as exc:
        raise InvalidRequest("the extractor could not read this transcript", field="turns") from exc
    row = {"transcript_key": f"import:{imported.session_id}"}
    candidates = [*result.candidates, *([result.summary] if result.summary else [])]
    writes = []
    for index, cand in enumerate(candidates):
        try:
            writes.append(ExtractionWorker._to_write(transcript, row, cand, index))
        except ValidationError:  # one unusable candidate never fails the others (as the worker does)
            continue
    return writes


# What `numbered_lines` makes of bytes that are not UTF-8 (surrogateescape), and any lone surrogate.
_NOT_UTF8 = re.compile("[\ud800-\udfff]")


def numbered_lines(path: str, *, skip: int = 0) -> Iterator[tuple[int, str]]:
    """(line number, text) of a JSONL file from line `skip + 1`, blank lines included (numbered).
    A byte-order mark before the first line is dropped; a line that is not UTF-8 keeps its bytes
    as lone surrogates, so that `run_import` refuses that line by number and goes on."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            if number > skip:
                if number == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]
                yield number, raw.decode("utf-8", errors="surrogateescape")


def run_import(
    gateway: WriteGateway,
    principal: Principal,
    lines: Iterable[tuple[int, str]],
    *,
    extractor: Callable[[], Extractor] | None = None,
    chunk: int = DEFAULT_CHUNK,
    summary: ImportSummary | None = None,
    on_chunk: Callable[[int, ImportSummary], None] | None = None,
    progress: ProgressFactory | None = None,
    total: int | None = None,
) -> ImportSummary:
    """Import numbered JSONL lines (see the module); `summary` continues a resumed import."""
    summary = summary or ImportSummary()
    bar = progress("import", total=total, unit="line") if progress else None
    chunks = _Chunks(gateway, principal, summary, on_chunk, max(1, min(chunk, MAX_BATCH)), bar)
    load = functools.cache(extractor) if extractor is not None else None  # loaded at the first transcript
    for number, text in lines:
        if bar:
            bar.update(1)
        if not text.strip():
            chunks.last = number
            continue
        try:
            writes = _line_writes(text, summary, load, principal)
        except LineRefused as refused:
            summary.refuse(number, refused.field, refused.reason)
            chunks.last = number
            continue
        chunks.add(number, writes)
    chunks.flush()
    summary.lines = max(summary.lines, chunks.last)
    if on_chunk:
        on_chunk(summary.lines, summary)
    if bar:
        bar.close()
    logger.info("import finished", extra={k: v for k, v in summary.as_dict().items() if k != "refusals"})
    return summary


def _line_writes(
    text: str, summary: ImportSummary, extractor: Callable[[], Extractor] | None, principal: Principal
) -> list[MemoryWrite]:
    """The writes of one line: a memory's one, or a transcript's candidates (counted by kind);
    `LineRefused` when the line cannot be written, whatever it holds."""
    if _NOT_UTF8.search(text):
        raise LineRefused("line", "not_utf8")
    if len(text.encode()) > MAX_LINE_BYTES:
        raise LineRefused("line", "too_large")
    try:
        obj = json.loads(text)
    except RecursionError as exc:
        raise LineRefused("line", "nested_too_deeply") from exc
    except ValueError as exc:
        raise LineRefused("line", "not_json") from exc
    if not isinstance(obj, dict):
        raise LineRefused("line", "not_an_object")
    try:
        if "turns" in obj:
            if extractor is None:
                raise InvalidRequest("transcripts need an extractor", field="turns")
            writes = transcript_writes(obj, extractor())
        else:
            writes = [memory_write(obj, key_basis=text.strip())]
        for write in writes:  # checked here, so that one line refused never stops its chunk
            require_source_assertion(principal, write.source.kind)
    except UnauthorizedMutation as exc:
        raise LineRefused("source.kind", REFUSAL_REASONS[exc.code]) from exc
    except DomainError as exc:
        raise LineRefused(exc.field or "line", REFUSAL_REASONS.get(exc.code, exc.code)) from exc
    except RecursionError as exc:  # a structure too deep for validation (never for its text)
        raise LineRefused("line", "nested_too_deeply") from exc
    if "turns" in obj:
        summary.transcript_lines += 1
    else:
        summary.memory_lines += 1
    return writes


@dataclass
class _Chunks:
    """The writes waiting for the next transaction, and the last line they (or a refusal) reached."""

    gateway: WriteGateway
    principal: Principal
    summary: ImportSummary
    on_chunk: Callable[[int, ImportSummary], None] | None
    size: int
    bar: ProgressBar | None = None
    pending: list[tuple[int, MemoryWrite]] = field(default_factory=list)
    last: int = 0

    def add(self, number: int, writes: list[MemoryWrite]) -> None:
        if len(self.pending) + len(writes) > MAX_BATCH:
            self.flush()  # a chunk holds whole lines
        self.pending.extend((number, w) for w in writes[:MAX_BATCH])
        self.last = number
        if len(self.pending) >= self.size:
            self.flush()

    def flush(self) -> None:
        """One transaction for the pending writes; then the checkpoint hears how far it got."""
        if not self.pending:
            return
        summary = self.summary
        results = self.gateway.write_many(self.principal, [w for _, w in self.pending], refuse_invalid=True)
        _count(summary, self.pending, results)
        summary.lines = self.last
        if self.on_chunk:
            self.on_chunk(self.last, summary)
        if self.bar:
            self.bar.set_postfix_str(
                f"admitted={summary.decisions.get('admitted', 0)} refused={summary.refused}"
            )
        self.pending = []


def _count(
    summary: ImportSummary, pending: list[tuple[int, MemoryWrite]], results: list[WriteResult]
) -> None:
    for (number, _), result in zip(pending, results, strict=True):
        if result.refused is not None:
            reason = result.reasons[0] if result.reasons else "invalid_request"
            summary.refuse(number, result.refused, REFUSAL_REASONS.get(reason, reason))
            continue
        summary.candidates += 1
        summary.decisions["replayed" if result.replayed else result.decision.value] += 1
        if result.decision is Decision.QUARANTINED and not result.replayed:
            summary.quarantine(number, result.reasons)
