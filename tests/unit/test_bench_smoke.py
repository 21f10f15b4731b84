"""The database benchmarks: pure helpers and tiny end-to-end smoke runs (~45 s, part of
`make test`). No timing is asserted anywhere."""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from memory_bench import common as c

REPO = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- pure helpers
def test_percentile_interpolates_like_numpy():
    xs = [5.0, 1.0, 3.0, 2.0, 4.0, 10.0, 7.0]
    for q in (0, 25, 50, 90, 95, 99, 100):
        assert c.percentile(xs, q) == pytest.approx(float(np.percentile(xs, q)))


def test_percentile_edge_cases():
    assert np.isnan(c.percentile([], 50))
    assert c.percentile([3.0], 95) == 3.0


def test_summarize_ms_converts_seconds_and_names_keys():
    s = c.summarize_ms([0.001, 0.002, 0.003], "db_")
    assert s == {"db_p50_ms": 2.0, "db_p95_ms": 2.9, "db_p99_ms": 2.98, "db_max_ms": 3.0}


def test_ratio_rounds_and_guards_zero():
    assert c.ratio(3.0, 2.0) == 1.5
    assert np.isnan(c.ratio(1.0, 0.0))


def test_unit_vectors_and_near_are_unit_length():
    g = np.random.default_rng(0)
    v = c.unit_vectors(g, 10)
    assert v.shape == (10, c.DIM) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    w = c.near(v, g, noise=0.35)
    assert np.allclose(np.linalg.norm(w, axis=1), 1.0, atol=1e-5)
    assert float((v * w).sum(axis=1).min()) > 0.8  # close to its base


def test_planned_subject_rows_keep_one_active_row_per_slot_and_the_expired_share():
    now = datetime.now(UTC)
    rows = [
        r for i in range(200) for r in c.plan_subject_rows(i, 40, random.Random(i), now, expired_share=0.5)
    ]
    assert len(rows) == 8000
    active_slots = Counter(
        (r["subject_id"], r["slot"]) for r in rows if r["slot"] and r["status"] == "active"
    )
    assert max(active_slots.values()) == 1
    expired = sum(1 for r in rows if r["expires_at"] is not None and r["expires_at"] <= now)
    assert 0.45 < expired / len(rows) < 0.55
    assert len({r["content"] for r in rows if r["type"] == "episode"}) == sum(
        r["type"] == "episode" for r in rows
    )


def test_planned_rows_are_valid_records_of_their_plan():
    now = datetime.now(UTC)
    plans = c.plan_subject_rows(1, 40, random.Random(1), now, inactive_share=0.3)
    records = [c.planned_record(p, "t", k) for k, p in enumerate(plans)]
    assert len({r.id for r in records}) == len(plans)
    assert [(r.subject_id, r.status.value, r.content) for r in records] == [
        (p["subject_id"], p["status"], p["content"]) for p in plans
    ]
    assert all((r.embedding_model is None) == (r.status.value != "active") for r in records)


def test_the_ranking_in_sql_takes_its_constants_from_domain_ranking():
    from agent_memory.domain.ranking import HALF_LIFE_DAYS
    from memory_bench.retrieve import SQL_RANKED_SQL

    scored = SQL_RANKED_SQL.split("scored AS (", 1)[1].split("sectioned AS", 1)[0]
    # no weight written into the SQL: only the half-life's base and a division guard
    assert set(re.findall(r"(?<![\w.])\d+\.\d+(?:e-\d+)?|\b\d+e-\d+", scored)) <= {"0.5", "1e-12"}
    for name in ("w_lex", "rw", "trust_base", "trust_per_rank", "verified_boost", "confidence_base"):
        assert f"%({name})s" in scored, name
    assert all(f"%(hl_{t.value})s" in scored for t in HALF_LIFE_DAYS)


def test_write_stream_is_distinct_and_mixes_types():
    from memory_bench.write import make_writes

    writes = make_writes(2000, 100, seed=3)
    types = Counter(w.type.value for w in writes)
    assert types["episode"] > 1400 and types["preference"] + types["fact"] > 150 and types["resolution"] > 40
    repeats = len(writes) - len({(w.subject_id, w.content) for w in writes})
    assert 0 < repeats < 60  # ~1% exact repeats (dedupe), everything else distinct


def test_retrieval_workload_spreads_subjects_and_queries():
    from memory_bench.retrieve import make_workload, query_texts

    assert len(set(query_texts())) == len(c.QUERIES) * len(c.TOPICS)
    w = make_workload(25_000, 2000, seed=1)
    subjects = {s for s, _ in w}
    assert len(subjects) > 1900  # uniform over 25k subjects: few repeats
    assert max(int(s.split("-")[1]) for s in subjects) > 24_000


# ------------------------------------------------------------------ smoke runs (tiny sizes, ~45 s in all)
# In `make test`: a benchmark nobody runs breaks unnoticed (the write bench did, session 3).
@pytest.mark.integration
def test_write_bench_smoke(tmp_path):
    from memory_bench.write import run_write_bench

    try:
        r = run_write_bench(
            tmp_path / "w", records=60, subjects=6, concurrent=2, concurrent_records=20, profile_records=10
        )
    finally:
        c.stop_server(tmp_path / "w", delete=True)
    assert r["single"]["records"] == 60 and not r["single"]["errors"]
    assert sum(r["decisions"].values()) == 60 and r["decisions"]["admitted"] > 30
    assert r["concurrent"]["threads"] == 2 and r["p95_ms"] > 0


@pytest.fixture(scope="module")
def retrieve_run(tmp_path_factory):
    """One tiny retrieve benchmark; its dataset is kept for the comparison below, then deleted."""
    from memory_bench.retrieve import run_retrieve_bench

    data_dir = tmp_path_factory.mktemp("bench") / "r"
    try:
        report = run_retrieve_bench(
            data_dir,
            subjects=20,
            per_subject=10,
            queries=20,
            seconds=0.5,
            clients=(1, 2),
            profile=False,
        )
        c.stop_server(data_dir, delete=False)
        yield report, data_dir
    finally:
        c.stop_server(data_dir, delete=True)


@pytest.mark.integration
def test_retrieve_bench_smoke(retrieve_run):
    r, _ = retrieve_run
    assert r["records"] == 200
    for key in (
        "db_p50_ms",
        "db_p95_ms",
        "broker_p95_ms",
        "embed_p95_ms",
        "floor_p95_ms",
        "floor_logged_p95_ms",
        "floor_logged_one_p95_ms",
        "sql_ranked_p95_ms",
        "ratio_to_floor",
        "qps_1",
        "qps_2",
        "p95_ms_2",
        "qps_2_embed",
    ):
        assert r[key] == r[key], key  # present and not NaN
    assert r["floor_rows_median"] == 5
    # the bare floor query's own throughput at the most clients, run without error
    assert r["floor_qps_2"] > 0 and r["floor_throughput"]["mode"] == "floor"
    assert r["floor_throughput"]["errors"] == 0 and r["floor_throughput"]["clients"] == 2
    assert r["floor_logged_qps_2"] > 0 and r["floor_logged_throughput"]["errors"] == 0
    assert r["floor_logged_one_qps_2"] > 0 and r["floor_logged_one_throughput"]["errors"] == 0
    assert r["sql_ranked_qps_2"] > 0 and r["sql_ranked_throughput"]["errors"] == 0
    # the ranking in SQL is a faithful cost model only if it picks what the broker returns
    assert r["sql_ranked_same_ids_pct"] >= 90
    # ...and it wrote one access event per call it timed (warm-up aside: none)
    assert r["floor_logged_events_written"] == r["floor_logged_calls"] > 20
    assert r["load"]["sentence_rows"] > 0  # multi-sentence memories carry sentence vectors, as written
    # the report shows the plan of the query inside the candidates function, not a function scan
    plan = "\n".join(r["plans"]["candidates"])
    assert "on memory_records" in plan and "on memory_sentences" in plan
    assert "Function Scan on memory_retrieval_candidates" not in plan


@pytest.mark.integration
def test_compare_bench_smoke_runs_two_checkouts_turn_by_turn(retrieve_run):
    from memory_bench.compare import compare

    # Given the retrieve dataset and the same code as "old" and "new"
    _, data_dir = retrieve_run
    here = str(REPO)
    # When they take 3 turns of 4 retrievals each
    r = compare(here, here, data_dir, rounds=3, per_turn=4)
    # Then both ran every retrieval, from this checkout, with the same answers
    assert r["answers"] == 12 and r["same_answers"] == 12
    for side in ("old", "new"):
        assert r[side]["code"].startswith(here) and r[side]["client_cpu_ms"] > 0
        assert 0 < r[side]["p50_ms"] <= r[side]["p95_ms"] <= r[side]["max_ms"]
    assert set(r["ratio_new_to_old"]) == {
        "p50_ms",
        "p95_ms",
        "turn_p50_median_ms",
        "client_cpu_ms",
        "server_cpu_ms",
    }


@pytest.mark.integration
def test_lifecycle_bench_smoke(tmp_path):
    from memory_bench.lifecycle import run_lifecycle_bench

    try:
        r = run_lifecycle_bench(
            tmp_path / "l", records=400, expired=200, erasure_records=50, baseline_seconds=1
        )
    finally:
        c.stop_server(tmp_path / "l", delete=True)
    assert r["purge"]["expired"] == r["expired"] > 100
    assert r["erasure"]["status"] == "verified" and r["erasure"]["receipt"]["records"] == 50
    assert r["retrieval_idle"]["retrievals"] > 0


@pytest.mark.integration
def test_explaining_the_candidates_function_twice_on_one_connection_leaves_nothing_behind(
    database_url, embedder, tmp_path
):
    # Given a pool of one connection (the explain PREPAREs the function's query, which would outlive
    # the transaction)
    from agent_memory.bootstrap import build_container
    from agent_memory.config import Settings
    from memory_bench.retrieve import ExplainConn, candidate_call

    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path,
        pool_min_size=1,
        pool_max_size=1,
        database_prepared_statements=False,
    )
    container = build_container(settings, embedder=embedder)
    try:
        vec = np.ones(container.settings.embedding_dim, dtype=np.float32)
        # When it is explained twice
        plans = [candidate_call(container, "S", "renewal", vec, 1, ExplainConn)[3].plan for _ in range(2)]
        # Then both explains work and the connection keeps no prepared statement
        assert all(any("memory_records" in line for line in plan) for plan in plans)
        with container.db.pool.connection() as conn:
            assert conn.execute("SELECT count(*) AS n FROM pg_prepared_statements").fetchone()["n"] == 0
            conn.rollback()
    finally:
        container.close()
