"""Offline benchmarks: pure functions over labelled files, no database, no network."""

from __future__ import annotations

from typing import Any


def run_extraction_bench(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """See `memory_bench.extraction.run_extraction_bench` (imported lazily, so that
    `python -m memory_bench.extraction` runs cleanly)."""
    from memory_bench.extraction import run_extraction_bench as run

    return run(*args, **kwargs)


__all__ = ["run_extraction_bench"]
