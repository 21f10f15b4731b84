"""`memory import FILE --tenant T`: a JSONL file of memories or transcripts into one tenant,
through the batched write path (services/imports.py), resumable from its checkpoint.

The checkpoint (by default FILE.checkpoint.json) holds the lines done and the summary so far; it
is rewritten after every committed chunk, so an interrupted import run again goes on after the
last chunk written (a chunk committed just before the interruption replays: its keys say so).
It prints the summary of decisions as JSON on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_memory.services.imports import ImportSummary

DEFAULT_CHUNK = 500  # memories per transaction (services.imports.DEFAULT_CHUNK)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="JSONL: one memory (a POST /v1/memories body) or transcript a line")
    p.add_argument("--tenant", required=True)
    p.add_argument("--sub", default="import:cli", help="the actor the audit trail names")
    p.add_argument(
        "--role",
        choices=("integration", "agent"),
        default="integration",
        help="whose rights the import has (only integration may assert system_of_record)",
    )
    p.add_argument("--chunk", type=int, default=DEFAULT_CHUNK, help="memories per transaction")
    p.add_argument("--checkpoint", help="default: FILE.checkpoint.json")
    p.add_argument("--restart", action="store_true", help="ignore the checkpoint and start at line 1")


def _read_checkpoint(path: Path, source: Path) -> tuple[int, ImportSummary | None]:
    from agent_memory.services.imports import ImportSummary

    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return 0, None
    if saved.get("file") != str(source.resolve()):
        raise SystemExit(f"{path} is the checkpoint of another file; pass --checkpoint or --restart")
    return int(saved.get("lines_done", 0)), ImportSummary.from_dict(saved.get("summary", {}))


def _write_checkpoint(path: Path, source: Path, lines_done: int, summary: ImportSummary) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(
        json.dumps({"file": str(source.resolve()), "lines_done": lines_done, "summary": summary.as_dict()})
    )
    os.replace(tmp, path)  # never half a checkpoint


def run(args: argparse.Namespace, container: Any) -> dict[str, Any]:
    """Import `args.file` into `args.tenant` with `container`'s gateway; the summary, as JSON."""
    from agent_memory.domain.enums import Role, Sensitivity
    from agent_memory.domain.records import Principal
    from agent_memory.progress import terminal_progress
    from agent_memory.services.imports import numbered_lines, run_import

    source = Path(args.file)
    if not source.is_file():
        raise SystemExit(f"no such file: {source}")
    checkpoint = (
        Path(args.checkpoint) if args.checkpoint else source.with_name(source.name + ".checkpoint.json")
    )
    done, summary = (0, None) if args.restart else _read_checkpoint(checkpoint, source)
    with source.open("rb") as f:
        total = sum(1 for _ in f)
    principal = Principal(
        sub=args.sub,
        tenant_id=args.tenant,
        roles=frozenset({Role(args.role)}),
        clearance=Sensitivity.CONFIDENTIAL,
    )
    extraction = container.extraction
    result = run_import(
        container.gateway,
        principal,
        numbered_lines(str(source), skip=done),
        extractor=lambda: extraction.extractor,
        chunk=args.chunk,
        summary=summary,
        on_chunk=lambda lines, s: _write_checkpoint(checkpoint, source, lines, s),
        progress=terminal_progress(args.progress),
        total=max(0, total - done),
    )
    return {"file": str(source), "resumed_after": done, "checkpoint": str(checkpoint), **result.as_dict()}
