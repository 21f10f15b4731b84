"""`memory bench`: the benchmarks are a development package, loaded only when present."""

from __future__ import annotations

import sys
from pathlib import Path

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


@pytest.mark.process  # runs `memory-bench`
def test_given_a_checkout_when_memory_bench_is_run_as_its_own_command_then_it_lists_the_benchmarks():
    import shutil
    import subprocess

    # Given the development install's own command for the benchmarks
    command = shutil.which("memory-bench", path=str(Path(sys.executable).parent))
    assert command is not None
    # When `memory-bench --help` runs
    done = subprocess.run([command, "--help"], capture_output=True, text=True, timeout=120, check=False)
    # Then it succeeds and names the benchmarks, as `memory bench --help` does
    assert done.returncode == 0, done.stderr
    assert "extraction" in done.stdout and "soak" in done.stdout


def test_given_the_service_package_when_its_imports_are_read_then_the_cli_loads_no_benchmark_at_import():
    import ast

    import agent_memory.cli

    # Given the CLI's source
    tree = ast.parse(Path(agent_memory.cli.__file__).read_text())
    # When its module-level imports are read
    top = [
        node.module if isinstance(node, ast.ImportFrom) else alias.name
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    ]
    # Then none of them is the benchmarks (they load only when `memory bench` runs)
    assert not [name for name in top if name and name.split(".")[0] == "memory_bench"]
