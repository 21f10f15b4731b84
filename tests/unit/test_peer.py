"""The peer comparison's pure parts: paraphrased queries, recall, ratios, the side-by-side table, the
embeddings server mem0 is pointed at, and the message when mem0 is not installed."""

from __future__ import annotations

import base64
import json
import random
import urllib.request

import numpy as np
import pytest

from memory_bench import peer


def test_a_paraphrased_query_names_the_episode_without_copying_it():
    # Given the gist of a synthetic episode
    gist = (
        "discussed the SSO rollout; they want a fix before month end. Next step: open an engineering ticket."
    )
    # When a query is made for it
    queries = {peer.paraphrase_query(gist, random.Random(seed)) for seed in range(40)}
    # Then every template is used, each names the topic and none is the gist itself
    assert len(queries) == len(peer._QUERY_TEMPLATES)
    assert all(q is not None and "the SSO rollout" in q and q != gist for q in queries)


def test_a_gist_that_is_not_an_episode_gets_no_query():
    assert peer.paraphrase_query("Preferred contact channel for the customer", random.Random(0)) is None


def test_rank_and_recall_count_the_target_among_the_first_k():
    # Given three queries: target first, target third, target absent
    ranks = [
        peer.rank_of("a", ["a", "b"]),
        peer.rank_of("a", ["x", "y", "a"]),
        peer.rank_of("a", []),
    ]
    # Then ranks are 1-based and recall counts what is within k
    assert ranks == [1, 3, None]
    assert peer.recall_at(ranks, 1) == pytest.approx(1 / 3, abs=1e-4)
    assert peer.recall_at(ranks, 5) == pytest.approx(2 / 3, abs=1e-4)
    assert np.isnan(peer.recall_at([], 5))


def _figures(**over: float) -> dict[str, float]:
    base = {
        "qps_1": 100.0,
        "qps_4": 200.0,
        "qps_16": 300.0,
        "p50_ms": 4.0,
        "p95_ms": 6.0,
        "p95_ms_16": 60.0,
        "load_per_s": 250.0,
        "recall_at_1": 0.5,
        "recall_at_1_by_score": 0.6,
        "recall_at_5": 0.9,
    }
    return {**base, **over}


def test_ratios_are_this_service_over_the_peer_and_recall_a_difference():
    # Given this service and a peer measured in one run
    service = _figures(load_per_s_batched=1500.0)
    mem0 = _figures(qps_16=100.0, p95_ms=8.0, load_per_s=150.0, recall_at_1=0.4, recall_at_5=0.95)
    # When the ratios are computed
    r = peer.peer_ratios(service, mem0)
    # Then throughput and load are service / peer, latency service / peer, recall service - peer
    assert r["qps_16"] == 3.0 and r["qps_1"] == 1.0
    assert r["p95"] == 0.75 and r["p50"] == 1.0
    assert r["load"] == pytest.approx(1.67) and r["load_batched"] == 10.0
    assert r["recall_at_1_diff"] == 0.1 and r["recall_at_5_diff"] == -0.05
    assert r["recall_at_1_by_score_diff"] == 0.0


def test_a_figure_missing_on_either_side_gives_no_ratio():
    r = peer.peer_ratios({"qps_16": 300.0}, {"qps_16": 0.0, "p95_ms": 5.0})
    assert r["qps_16"] is None and r["p95"] is None and r["recall_at_5_diff"] is None


def test_the_table_puts_the_systems_side_by_side_then_the_ratios():
    # Given a report of the three systems and the ratios
    systems = {
        peer.SERVICE: _figures(),
        peer.MEM0_DEFAULT: _figures(qps_16=100.0, recall_at_1=0.026),
        peer.MEM0_INDEXED: _figures(qps_16=150.0),
    }
    report = {
        "systems": systems,
        "ratios": {s: peer.peer_ratios(systems[peer.SERVICE], systems[s]) for s in peer.SYSTEMS[1:]},
    }
    # When it is rendered
    lines = peer.side_by_side(report).splitlines()
    # Then the header names the systems, each figure has a row, and the ratios follow
    assert lines[0] == "| figure | service | mem0 | mem0_user_index |"
    assert "| searches/s, 16 clients | 300.0 | 100.0 | 150.0 |" in lines
    assert "| recall@1 (first returned) | 0.500 | 0.026 | 0.500 |" in lines
    assert "| qps_16 | 3.00 | 2.00 |" in lines
    assert "| load_batched | - | - |" in lines  # no batched figure: a dash, not a made-up number


def test_the_embeddings_server_answers_like_openai_with_the_precomputed_vectors():
    # Given the server with one precomputed vector
    vec = np.arange(4, dtype=np.float32) / 10
    with peer.EmbeddingServer({"known text": vec}) as server:
        # When a client asks for it as floats and as base64
        def ask(fmt: str) -> dict:
            body = json.dumps({"input": ["known text"], "model": "m", "encoding_format": fmt}).encode()
            req = urllib.request.Request(
                server.url + "/embeddings", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=10) as resp:
                return json.loads(resp.read())

        floats, b64 = ask("float"), ask("base64")
    # Then both carry exactly the vector, and nothing had to be embedded
    assert floats["data"][0]["embedding"] == pytest.approx(vec.tolist())
    decoded = np.frombuffer(base64.b64decode(b64["data"][0]["embedding"]), dtype="<f4")
    assert np.array_equal(decoded, vec)
    assert floats["object"] == "list" and floats["data"][0]["index"] == 0
    assert server.misses == 0


def test_the_embeddings_server_refuses_a_body_without_input():
    with peer.EmbeddingServer({}) as server:
        req = urllib.request.Request(server.url + "/embeddings", b'{"model": "m"}')
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 400


def test_memory_bench_peer_says_how_to_install_mem0_when_it_is_missing(monkeypatch, capsys):
    # Given mem0 is not importable
    monkeypatch.setattr(peer, "mem0_installed", lambda: False)
    from memory_bench.cli import main

    # When the command runs
    code = main(["peer", "--subjects", "1"])
    # Then it exits 2 with the setup command, before building anything
    assert code == 2
    err = capsys.readouterr().err
    assert "needs mem0" in err and "--group peer" in err


def test_an_index_of_mem0s_table_is_recreated_on_the_copy_with_the_same_method_and_expression():
    # Given mem0's index definitions as pg_indexes gives them
    hnsw = "CREATE INDEX mem0_hnsw_idx ON public.mem0 USING hnsw (vector vector_cosine_ops)"
    pkey = "CREATE UNIQUE INDEX mem0_pkey ON public.mem0 USING btree (id)"
    gin = (
        "CREATE INDEX mem0_text_lemmatized_idx ON public.mem0 USING gin "
        "(to_tsvector('simple'::regconfig, (payload ->> 'text_lemmatized'::text)))"
    )
    # When each is retargeted to the copy
    out = [peer.retarget_index(d, "mem0", "mem0_user_index") for d in (hnsw, pkey, gin)]
    # Then the name and table change and nothing else does
    assert out[0] == (
        "mem0_user_index_hnsw_idx",
        "CREATE INDEX mem0_user_index_hnsw_idx ON public.mem0_user_index USING hnsw (vector vector_cosine_ops)",
    )
    assert out[1][1] == "CREATE UNIQUE INDEX mem0_user_index_pkey ON public.mem0_user_index USING btree (id)"
    assert out[2][1].endswith(
        "USING gin (to_tsvector('simple'::regconfig, (payload ->> 'text_lemmatized'::text)))"
    )


def test_an_index_name_without_the_table_prefix_gets_it_and_a_schemaless_table_stays_schemaless():
    name, ddl = peer.retarget_index("CREATE INDEX idx_x ON mem0 USING btree (id)", "mem0", "copy")
    assert (name, ddl) == ("copy_idx_x", "CREATE INDEX copy_idx_x ON copy USING btree (id)")


@pytest.mark.parametrize(
    "indexdef",
    [
        "CREATE INDEX other_idx ON public.other USING btree (id)",  # another table's
        "ALTER TABLE public.mem0 ADD PRIMARY KEY (id)",  # not an index definition
    ],
)
def test_a_definition_that_is_not_an_index_of_the_source_table_is_refused(indexdef):
    with pytest.raises(ValueError):
        peer.retarget_index(indexdef, "mem0", "mem0_user_index")


def test_the_build_memory_holds_the_hnsw_graph_of_the_rows_within_bounds():
    # A million 384-dimension vectors: the vectors alone are 1.4 GiB, the setting holds them and their lists
    million = peer.maintenance_work_mem_mb(1_000_000)
    assert 1_000_000 * 384 * 4 / (1 << 20) < million <= 8192
    assert peer.maintenance_work_mem_mb(100_000) < million
    # PostgreSQL's default for a tiny table, and a ceiling for a huge one
    assert peer.maintenance_work_mem_mb(10) == 64
    assert peer.maintenance_work_mem_mb(100_000_000) == 8192


def test_a_runs_figures_for_the_page_carry_the_ratios_recall_and_figures_under_the_pages_names():
    # Given a run's report
    systems = {
        peer.SERVICE: _figures(load_per_s_batched=1500.0),
        peer.MEM0_DEFAULT: _figures(qps_16=100.0, recall_at_1=0.1, recall_at_5=0.2),
        peer.MEM0_INDEXED: _figures(qps_16=150.0),
    }
    ratios = {s: peer.peer_ratios(systems[peer.SERVICE], systems[s]) for s in peer.SYSTEMS[1:]}
    report = {"records": 1000, "queries": 50, "systems": systems, "ratios": ratios}
    # When its entry for docs/benchmark-figures.json is made
    entry = peer.figures_entry(report)
    # Then the ratios are the run's, by the page's names, and recall is (@1, @1 by score, @5) for each system
    assert (entry["memories"], entry["queries"]) == (1000, 50)
    assert list(entry["ratios"]) == ["mem0, default schema", "mem0 + per-user index"]
    assert entry["ratios"]["mem0, default schema"]["qps_16"] == 3.0
    assert entry["ratios"]["mem0 + per-user index"]["load_batched"] == 6.0  # 1500 / 250
    assert entry["recall"] == {
        "this service": [0.5, 0.6, 0.9],
        "mem0, default schema": [0.1, 0.6, 0.2],
        "mem0 + per-user index": [0.5, 0.6, 0.9],
    }
    assert entry["systems"]["this service"]["load_per_s_batched"] == 1500.0
    assert entry["systems"]["mem0 + per-user index"]["qps_16"] == 150.0
    json.dumps(entry)  # plain JSON
