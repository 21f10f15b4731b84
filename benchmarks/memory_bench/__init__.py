"""The service's benchmarks, a development package outside the product (not in the Lambda layer).

`memory bench <name>` runs one (memory_bench.cli). Two kinds:
- over labelled files, in process: extraction, identifiers, screening (no database);
- against a real embedded PostgreSQL that each builds in its data dir (a temporary folder unless
  `--data-dir` is given): write, retrieve, lifecycle, compare, sessions, soak (the soak also drives
  the local HTTP server and moto); longmemeval and floor read a downloaded dataset and run the
  local embedder.
Nothing calls a remote service: the embedder is the local ONNX model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

# The labelled data sets live beside this package, under benchmarks/: found from any folder.
DATA = Path(__file__).resolve().parents[1]
EXTRACTION_DATA = DATA / "extraction" / "labelled_transcripts.jsonl"
IDENTIFIERS_DATA = DATA / "identifiers" / "identifiers.jsonl"
SCREENING_DATA = DATA / "screening" / "screening.jsonl"


def run_extraction_bench(*args: Any, **kwargs: Any) -> dict[str, Any]:
    """See `memory_bench.extraction.run_extraction_bench` (imported lazily, so that
    `python -m memory_bench.extraction` runs cleanly)."""
    from memory_bench.extraction import run_extraction_bench as run

    return run(*args, **kwargs)


__all__ = ["DATA", "EXTRACTION_DATA", "IDENTIFIERS_DATA", "SCREENING_DATA", "run_extraction_bench"]
