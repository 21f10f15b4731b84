"""`memory bench <name> [options]`: one command per benchmark, JSON out (`--json FILE`)."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path
from typing import Any

from memory_bench import IDENTIFIERS_DATA


def _emit(report: dict[str, Any], json_path: str | None) -> None:
    text = json.dumps(report, indent=2, default=str)
    print(text)
    if json_path:
        Path(json_path).write_text(text + "\n")


def _extraction(argv: list[str]) -> int:
    from memory_bench.extraction import run_extraction_bench

    p = argparse.ArgumentParser(
        prog="memory bench extraction",
        description="Without --data: the rules and the learned extractor side by side on the in-sample, "
        "cross-domain and held-out splits (a table; --json FILE for the full report). With --data: the "
        "detailed report of one extractor on one labelled file.",
    )
    p.add_argument("--data", help="one labelled file: the detailed single-extractor report")
    p.add_argument(
        "--extractor",
        choices=["rules", "learned", "llm"],
        default="rules",
        help="with --data: the one to report on; llm without --data: the LLM extractor beside both "
        "offline ones on the hand-labelled and held-out files (OPENAI_BASE_URL, OPENAI_API_KEY)",
    )
    p.add_argument("--model", default="gpt-4o-mini", help="the LLM extractor's model name")
    p.add_argument("--policy", default="crm")
    p.add_argument("--json")
    a = p.parse_args(argv)
    if a.extractor == "llm":
        return _llm_extraction(a.model, a.data, a.json)
    if a.data is None:
        from memory_bench.extraction_splits import run, table

        report = run()
        print(table(report))
        if a.json:
            Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
        return 0
    extractor = None
    if a.extractor == "learned":
        from agent_memory.adapters.extractors.learned import LearnedExtractor
        from memory_bench.extraction_splits import CachedEmbedder

        extractor = LearnedExtractor(CachedEmbedder())
    _emit(run_extraction_bench(a.data, extractor, policy=a.policy), a.json)
    return 0


def _llm_extraction(model: str, data: str | None, json_path: str | None) -> int:
    import os

    from agent_memory.adapters.extractors.llm import LlmExtractor
    from memory_bench.extraction_splits import run_llm, table

    llm = LlmExtractor(
        model=model, api_key=os.environ.get("OPENAI_API_KEY"), base_url=os.environ.get("OPENAI_BASE_URL")
    )
    import openai

    try:
        report = run_llm(llm, {Path(data).stem: Path(data)} if data else None)
    except (openai.APIConnectionError, openai.APITimeoutError, openai.AuthenticationError) as exc:
        print(f"memory bench extraction: the endpoint did not answer ({type(exc).__name__})", file=sys.stderr)
        return 2
    print(table(report))
    failed = {name: split["llm"]["failed_transcripts"] for name, split in report["splits"].items()}
    print(f"llm sessions rejected (malformed, partial or refused output): {failed}")
    if json_path:
        Path(json_path).write_text(json.dumps(report, indent=2) + "\n")
    return 0


def _identifiers(argv: list[str]) -> int:
    from memory_bench.identifiers import markdown_table, run_with_heldout

    p = argparse.ArgumentParser(prog="memory bench identifiers")
    p.add_argument("--data", default=str(IDENTIFIERS_DATA))
    p.add_argument("--json")
    p.add_argument("--markdown", action="store_true", help="print the per-type table instead of JSON")
    a = p.parse_args(argv)
    report = run_with_heldout(a.data)
    if a.markdown:
        print(markdown_table(report))
        if a.json:
            Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    else:
        _emit(report, a.json)
    return 0


def _longmemeval(argv: list[str]) -> int:
    from memory_bench.longmemeval import main

    print(json.dumps(main(argv), indent=2))
    return 0


def _database_bench(name: str) -> Any:
    """`memory bench write|retrieve|lifecycle`: each module's main(argv) -> (report, json path)."""

    def run(argv: list[str]) -> int:
        import importlib

        report, json_path = importlib.import_module(f"memory_bench.{name}").main(argv)
        _emit(report, json_path)
        return 0

    return run


def _floor(argv: list[str]) -> int:
    from memory_bench.floor import main

    print(json.dumps(main(argv), indent=2))
    return 0


def _sessions(argv: list[str]) -> int:
    from memory_bench.sessions import main

    print(json.dumps(main(argv), indent=2))
    return 0


def _soak(argv: list[str]) -> int:
    """A table on stdout, the JSON report in --out; exit 1 when an invariant is broken."""
    from memory_bench.soak import format_table, main

    with contextlib.redirect_stdout(sys.stderr):  # what the service prints while it runs
        report, out = main(argv)
    print(format_table(report))
    if out:
        Path(out).write_text(json.dumps(report, indent=2, default=str) + "\n")
    return 0 if all(n == 0 for n in report["invariants"].values()) else 1


def _peer(argv: list[str]) -> int:
    """The JSON report on stdout, the side-by-side table on stderr; exit 2 when mem0 is not installed."""
    from memory_bench.peer import Mem0Missing, main

    try:
        report, json_path = main(argv)
    except Mem0Missing as missing:
        print(missing, file=sys.stderr)
        return 2
    _emit(report, json_path)
    print(report["table"], file=sys.stderr)
    return 0


def _coldstart(argv: list[str]) -> int:
    """The JSON report on stdout, the table on stderr."""
    from memory_bench.coldstart import main, table

    report, json_path = main(argv)
    _emit(report, json_path)
    print(table(report), file=sys.stderr)
    return 0


BENCHES = {
    "sessions": _sessions,
    "floor": _floor,
    "longmemeval": _longmemeval,
    "extraction": _extraction,
    "identifiers": _identifiers,
    "write": _database_bench("write"),
    "retrieve": _database_bench("retrieve"),
    "lifecycle": _database_bench("lifecycle"),
    "compare": _database_bench("compare"),
    "screening": _database_bench("screening"),
    "http": _database_bench("http_latency"),
    "soak": _soak,
    "peer": _peer,
    "coldstart": _coldstart,
}


USAGE = f"usage: memory bench {{{','.join(sorted(BENCHES))}}} [options]"
HELP = (
    USAGE
    + "\n\nOne command per benchmark; `memory bench <name> --help` lists its options."
    + "\nDatabase benchmarks build their embedded PostgreSQL in a temporary folder unless --data-dir is given."
)


def main(argv: list[str] | None = None) -> int:
    """`memory-bench <name> ...` (the console script, argv from the command line) or
    `memory bench <name> ...` (the product's CLI hands over the arguments after `bench`)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(HELP)
        return 0
    if not argv or argv[0] not in BENCHES:
        print(USAGE, file=sys.stderr)
        return 2
    return BENCHES[argv[0]](argv[1:])
