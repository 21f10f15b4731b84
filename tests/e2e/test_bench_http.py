"""`memory bench http` end to end on a tiny run: `memory serve` in its own process, the README's
client kept alive, fresh connections, a paced rate, and the stages the service reports in its
Server-Timing header. No timing is asserted."""

from __future__ import annotations

import argparse

import pytest

from memory_bench.http_latency import _stages, run, table

pytestmark = pytest.mark.e2e


def test_server_timing_is_read_per_stage():
    assert _stages("embed;dur=1.50, db;dur=2, total;dur=4.25, junk") == {
        "embed": 1.5,
        "db": 2.0,
        "total": 4.25,
    }
    assert _stages(None) == {}


def test_a_tiny_run_reports_every_mode_with_the_services_stages():
    # Given a run of a few requests per mode, the local embedder
    args = argparse.Namespace(
        requests=6,
        rate=20.0,
        paced_seconds=0.5,
        connections=2,
        saturate_clients=0,
        saturate_seconds=0.0,
        per_subject=1,
        embedder="local",
        embed_delay_ms=0.0,
        keep=False,
    )
    # When it runs
    report = run(args)
    # Then each mode answered every request, and reports the stages the service measured
    assert report["memories"] == 8
    for mode in ("sequential", "fresh", "paced"):
        got = report["modes"][mode]
        assert got["failures"] == 0 and got["requests"] >= 6
        assert {"embed", "db", "rank", "render", "audit", "serialize", "total"} <= set(got["stages_ms"])
        assert got["p50_ms"] <= got["p95_ms"] <= got["p99_ms"]
    assert report["sequential_over_paced_p50"] > 0
    assert "| sequential |" in table(report)
