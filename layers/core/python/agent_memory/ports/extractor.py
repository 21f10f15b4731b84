from __future__ import annotations

from typing import Protocol

from agent_memory.domain.extraction import ExtractionResult, Transcript


class Extractor(Protocol):
    """Transcript -> candidate memories with source spans. Deterministic or model-backed."""

    name: str
    version: str

    def extract(self, transcript: Transcript) -> ExtractionResult: ...


class ExtractionFailed(Exception):
    """The extractor could not produce a valid result (bad model output, timeouts)."""
