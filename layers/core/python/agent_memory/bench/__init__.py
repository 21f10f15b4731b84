"""Offline benchmarks: pure functions over labelled files, no database, no network."""

from __future__ import annotations

from typing import Any


def run_extraction_bench(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """See `agent_memory.bench.extraction.run_extraction_bench` (imported lazily, so that
    `python -m agent_memory.bench.extraction` runs cleanly)."""
    from agent_memory.bench.extraction import run_extraction_bench as run

    return run(*args, **kwargs)


__all__ = ["run_extraction_bench"]
