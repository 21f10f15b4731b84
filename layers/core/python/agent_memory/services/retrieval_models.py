"""The request and result models of retrieval (services.retrieval re-exports them, where the
handlers import them)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from agent_memory.domain.enums import MemoryType
from agent_memory.domain.ids import ID_MAX_LENGTH, ID_PATTERN, SubjectId
from agent_memory.domain.sanitize import MaskedText

MAX_TOP_K = 50
SlotName = Annotated[str, StringConstraints(max_length=128, pattern=r"^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$")]


class RetrieveRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    subject_id: SubjectId
    query: str = Field(default="", max_length=200_000)
    ticket_id: MaskedText | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"^[^\x00-\x1f\x7f]+$"
    )
    top_k: int | None = Field(default=None, ge=1, le=MAX_TOP_K)
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)
    types: list[MemoryType] | None = Field(default=None, max_length=len(MemoryType))
    session_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_LENGTH,
        pattern=ID_PATTERN,
        description="the open session: its live working values come back as section `working`",
    )
    slots: list[SlotName] | None = Field(
        default=None,
        max_length=20,
        description="slots asked for by name: their memories are returned even below the relevance floor",
    )


class ResolutionSearchRequest(BaseModel):
    """Tenant-wide search of reusable knowledge: resolutions and tenant-scoped memories."""

    model_config = ConfigDict(extra="forbid")

    query: str = Field(max_length=200_000)
    top_k: int = Field(default=5, ge=1, le=MAX_TOP_K)
    subject_id: str | None = Field(
        default=None,
        min_length=1,
        max_length=ID_MAX_LENGTH,
        pattern=ID_PATTERN,
        description="the customer being served (access log only)",
    )
    max_tokens: int | None = Field(default=None, ge=1, le=200_000)


TENANT_WIDE = "tenant"  # the access log's subject for a tenant-wide search with no subject named


class StageClock:
    """Milliseconds spent per stage of one retrieval (embed, db, rank, freshness, render, audit)
    and in all (`total`): the handler emits them as metrics and a Server-Timing header, so an
    operator can read the latency budget per stage."""

    def __init__(self) -> None:
        self._start = time.perf_counter()
        self.ms: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.ms[name] = self.ms.get(name, 0.0) + (time.perf_counter() - t0) * 1000

    def finish(self) -> dict[str, float]:
        self.ms["total"] = (time.perf_counter() - self._start) * 1000
        return self.ms


@dataclass
class Retrieval:
    """What one retrieval answers (`public_view` is the response body), and what the handler
    measures of it (`timings_ms`, `candidates`)."""

    subject_id: str
    context: str
    memories: list[dict[str, Any]]
    live: list[dict[str, Any]]
    excluded: dict[str, int]
    tokens: int
    max_tokens: int
    live_unavailable: bool = False
    ticket_unavailable: bool = False
    ticket_not_found: bool = False
    timings_ms: dict[str, float] = field(default_factory=dict)
    candidates: int = 0
    working: list[dict[str, Any]] | None = None  # the session's working values shown (session_id given)
    relevance_floor: float | None = None  # the embedder's similarity floor this query was held to
    keyword_bar: float | None = None  # ...and the similarity a memory sharing a word with it needs
    relevance_excluded: dict[str, int] | None = None  # excluded["below_threshold"], by why

    def public_view(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "subject_id": self.subject_id,
            "context": self.context,
            "memories": self.memories,
            "live": self.live,
            "excluded": self.excluded,
            "tokens": self.tokens,
            "max_tokens": self.max_tokens,
        }
        if self.relevance_floor is not None:
            out["relevance_floor"] = self.relevance_floor
        if self.keyword_bar is not None:
            out["keyword_bar"] = self.keyword_bar
        if self.relevance_excluded:
            out["relevance_excluded"] = self.relevance_excluded
        if self.live_unavailable:
            out["live_unavailable"] = True
        if self.ticket_unavailable:
            out["ticket_unavailable"] = True
        if self.ticket_not_found:
            out["ticket_not_found"] = True
        if self.working is not None:
            out["working"] = self.working
        return out


class ResolutionSearch(TypedDict):
    """What a tenant-wide search answers (the response body)."""

    resolutions: list[dict[str, Any]]
    context: str
    tokens: int
    max_tokens: int
