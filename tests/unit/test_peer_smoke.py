"""`memory bench peer` end to end on a tiny corpus (a few minutes: marked `bench`, not part of
`make test`; run with `pytest -m bench tests/unit/test_peer_smoke.py`). Needs the `peer` group.
No timing is asserted."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("mem0")

from memory_bench import peer

pytestmark = pytest.mark.bench


def test_peer_bench_loads_both_systems_with_the_same_vectors_and_reports_them_side_by_side(tmp_path):
    # Given a tiny corpus
    out = tmp_path / "peer.json"
    argv = ["--data-dir", str(tmp_path / "data"), "--subjects", "12", "--per-subject", "8"]
    argv += ["--queries", "30", "--seconds", "1", "--clients", "1,2", "--write-records", "40"]
    argv += ["--mem0-adds", "20", "--json", str(out)]
    # When the benchmark runs
    report, json_path = peer.main(argv)
    # Then mem0 holds every active memory (some added by Memory.add, the rest copied in its row format)
    load = report["mem0_load"]
    assert load["added_one_at_a_time"] == 20 and load["copied"] == report["mem0_memories"] - 20
    # and every text mem0 embedded was answered from the service's own vectors
    assert report["embedding_server_misses"] == 0
    # and the per-user index exists only on the copy
    indexes = report["mem0_user_index"]["indexes"]
    assert any("user_id" in d for d in indexes[peer.MEM0_INDEXED])
    assert not any("user_id" in d for d in indexes[peer.MEM0_DEFAULT])
    # and mem0's table ends with exactly the indexes mem0 made, its HNSW index built after the COPY
    assert sorted(load["copy"]["indexes"]) == sorted(indexes[peer.MEM0_DEFAULT])
    assert any("hnsw" in name for name in load["copy"]["index_build_s"])
    # and the copy has each of them, under its own name, besides the per-user index
    same = {
        peer.retarget_index(d, peer.MEM0_DEFAULT, peer.MEM0_INDEXED)[1] for d in indexes[peer.MEM0_DEFAULT]
    }
    extra = set(indexes[peer.MEM0_INDEXED]) - same
    assert same <= set(indexes[peer.MEM0_INDEXED]) and len(extra) == 1 and "user_id" in extra.pop()
    # and each system has recall, latency and throughput at each client count, with ratios to mem0
    for name in peer.SYSTEMS:
        figures = report["systems"][name]
        assert 0.0 <= figures["recall_at_1"] <= figures["recall_at_5"] <= 1.0
        assert figures["p95_ms"] > 0 and figures["qps_1"] > 0 and figures["qps_2"] > 0
    assert set(report["ratios"]) == {peer.MEM0_DEFAULT, peer.MEM0_INDEXED}
    assert all(r["errors"] == 0 for r in report["throughput"])
    assert "| figure | service | mem0 | mem0_user_index |" in report["table"]
    assert json_path == str(out)
    json.dumps(report, default=str)  # the report is JSON
