"""`memory bench`: the benchmarks are a development package, loaded only when present."""

from __future__ import annotations

import sys

import pytest

from agent_memory.cli import main


def test_given_a_checkout_when_memory_bench_help_is_asked_then_it_lists_the_benchmarks(capsys):
    # When `memory bench --help` runs where the development package is installed
    code = main(["bench", "--help"])
    # Then it succeeds and names each benchmark
    out = capsys.readouterr().out
    assert code == 0
    for name in ("write", "retrieve", "lifecycle", "soak", "extraction", "identifiers", "screening"):
        assert name in out


def test_given_no_benchmark_package_when_memory_bench_runs_then_it_says_why_and_exits_2(
    capsys, monkeypatch: pytest.MonkeyPatch
):
    # Given an installation without the benchmarks (the Lambda layer, a wheel)
    monkeypatch.setitem(sys.modules, "memory_bench.cli", None)
    # When `memory bench write` runs
    code = main(["bench", "write"])
    # Then it exits 2 with one line saying where the benchmarks are, not a traceback
    err = capsys.readouterr().err
    assert code == 2
    assert "development package" in err and "benchmarks/memory_bench" in err
