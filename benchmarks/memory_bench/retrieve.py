"""Retrieval latency and throughput at scale: `memory bench retrieve`.

    memory bench retrieve --subjects 25000 --per-subject 40 --json out.json

1. Builds `subjects x per_subject` memories with the store's bulk load (`adapters/postgres/
   bulk_load.py`: COPY as the table owner, secondary indexes rebuilt after; HNSW only with `--hnsw`:
   per-subject search is an exact scan of the (tenant, subject) B-tree range). Text is
   synthetic CS/support content; vectors are MiniLM embeddings of each memory's gist
   (~3,000 distinct gists embedded once) plus noise, so similarities look like real ones.
   As the write path does, a memory whose content splits into several sentences also gets a
   vector per sentence in memory_sentences (about 17% of them, two sentences each).
   `--reuse` keeps a dataset of the same shape already in the data dir.
2. Queries: `--queries` (subject, question) pairs, subjects uniform over all subjects,
   questions realistic text (20 intents x 20 topics), each with a precomputed MiniLM vector.
3. Measured one at a time, interleaved so noise hits each alike:
   - db: the candidate SQL alone, exactly as `retrieval_candidates` sends it (execute + fetch);
   - store: `retrieval_candidates` whole (SQL + turning rows into records);
   - broker: `broker.retrieve` with the precomputed vector (everything but the embedding);
   - floor: a bare exact k-NN over the same filters (tenant, subject, active, unexpired,
     clearance) ORDER BY embedding <=> q LIMIT 5, one statement on a ready connection;
   - embed: the local MiniLM embedder on the query text;
   - floor_logged: the floor, then a bare durable INSERT of the access event (the least a
     retrieval that decides in the application what it returned, then logs it, can cost);
   - floor_logged_one: the same INSERT riding on the floor query in one statement (the least any
     retrieval with a durable access event can cost);
   - sql_ranked: the broker's selection done by the database instead, as one statement: the same
     candidates (vectors, sentence vectors, full text), BM25 over their lexemes, the fused score
     with authority, verification, confidence and recency, the sections with their caps, and the
     access event riding on it (what "ranking in SQL" would cost; it leaves out the newest-version
     reorder, the freshness gate, rendering and the token budget). The report says how often it
     picked the same memories as the broker (`sql_ranked_same_ids_pct`).
   Every step of this loop follows the others, the embedding among them, so each finds caches
   that the others have just used: run alone, the floor is faster (docs/benchmarks.md).
4. Throughput: 1, 4 and 16 client processes (each its own container and one pooled
   connection, like Lambda concurrency: no shared GIL), `--seconds` each, precomputed
   vectors; and 16 clients with the embedder in the loop. For scale, 16 clients running the
   floor query alone (`floor_qps_16`), and the floor query plus a bare durable INSERT of the access
   event, in two statements and in one (`floor_logged_qps_16`, `floor_logged_one_qps_16`): what
   this machine does at best, and at best with a durable log; and the ranking in SQL
   (`sql_ranked_qps_16`).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.adapters.postgres.retrieval import CANDIDATES_FUNCTION, candidates_query
from agent_memory.domain.records import new_id
from memory_bench import common as c

TARGETS = {"db_p95_ms": 1.0, "broker_p95_ms": 2.0, "ratio_to_floor": 5.0, "qps_16": 1000.0, "p95_ms_16": 25.0}

FLOOR_ACTOR = "bench-floor-logged"  # the access events the reference workloads write

FLOOR_SQL = """
SELECT id, embedding <=> %(q)s AS distance
  FROM memory_records
 WHERE tenant_id = %(t)s AND subject_id = %(s)s AND status = 'active'
   AND (expires_at IS NULL OR expires_at > %(now)s)
   AND sensitivity_rank <= %(clr)s
 ORDER BY embedding <=> %(q)s
 LIMIT 5
"""


# --------------------------------------------------------------------------- workload
def query_texts() -> list[str]:
    return [f"{q} ({t})" for q in c.QUERIES for t in c.TOPICS]


def all_gists() -> list[str]:
    gists = [f"discussed {t}; {d}. Next step: {a}." for t in c.TOPICS for d in c.DETAILS for a in c.ACTIONS]
    return gists + [c.slot_gist(s) for s, _, _ in c.SLOTS]


def embed_all(embedder: Any, texts: list[str], batch: int = 64) -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    for i in range(0, len(texts), batch):
        chunk = texts[i : i + batch]
        for t, v in zip(chunk, embedder.embed(chunk), strict=True):
            out[t] = v
    return out


def make_workload(subjects: int, n: int, seed: int) -> list[tuple[str, int]]:
    """(subject_id, query index): subjects drawn uniformly over all subjects."""
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    nq = len(c.QUERIES) * len(c.TOPICS)
    return [(c.subject_id(rng.randrange(subjects)), rng.randrange(nq)) for _ in range(n)]


class TimedConn:
    """Wraps a connection: times execute + fetchall of each statement (what the server and wire cost),
    whether sent with `execute` or through a `cursor` (the candidates are read as tuples)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self.elapsed = 0.0

    def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
        return _Rows(self.run(query, params, None, **kw))

    def cursor(self, row_factory: Any = None) -> Any:
        return _TimedCursor(self, row_factory)

    def run(self, query: Any, params: Any, row_factory: Any, **kw: Any) -> list[Any]:
        t = time.perf_counter()
        cur = self._conn.cursor(row_factory=row_factory) if row_factory else self._conn.cursor()
        rows = cur.execute(query, params, **kw).fetchall()
        self.elapsed += time.perf_counter() - t
        return rows

    def __getattr__(self, name: str) -> Any:
        return getattr(self._conn, name)


class _TimedCursor:
    def __init__(self, owner: TimedConn, row_factory: Any) -> None:
        self.owner, self.row_factory = owner, row_factory

    def __enter__(self) -> _TimedCursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, query: Any, params: Any = None, **kw: Any) -> Any:
        return _Rows(self.owner.run(query, params, self.row_factory, **kw))


class _Rows:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def fetchall(self) -> list[Any]:
        return self.rows

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None


class ExplainConn(TimedConn):
    """Sends EXPLAIN (ANALYZE, BUFFERS) of the statement instead and keeps the plan. A call of the
    candidates function is explained as the query inside it: EXPLAIN of the call would show only a
    function scan. The query inside the function, as the file that defines it states it
    (adapters/postgres/sql/retrieval_functions.sql), is prepared with the function's parameter
    types and run with a generic plan, as the function runs it."""

    plan: list[str]

    def run(self, query: Any, params: Any, row_factory: Any, **kw: Any) -> list[Any]:
        prepared = isinstance(query, str) and CANDIDATES_FUNCTION + "(" in query
        if prepared:
            # EXECUTE takes no bind parameters under EXPLAIN: its arguments go as literals
            import psycopg

            query = psycopg.ClientCursor(self._conn).mogrify(self._as_prepared_body(query), params)
            params = None
        try:
            # EXPLAIN output is text: the plan, not the rows, so the binary flag is not passed on
            rows = self._conn.execute("EXPLAIN (ANALYZE, BUFFERS) " + query, params).fetchall()
        finally:
            if prepared:  # a PREPARE outlives the transaction: never leave it on a pooled connection
                self._conn.execute("DEALLOCATE bench_candidates")
        self.plan = [next(iter(r.values())) if isinstance(r, dict) else r[0] for r in rows]
        return []

    def _as_prepared_body(self, call: str) -> str:
        row = self._conn.execute(
            "SELECT pg_get_function_identity_arguments(%s::regproc) AS args", (CANDIDATES_FUNCTION,)
        ).fetchone()
        body = candidates_query()
        types = ", ".join(arg.split(" ", 1)[1] for arg in row["args"].split(", "))
        self._conn.execute("SELECT set_config('plan_cache_mode', 'force_generic_plan', true)")
        self._conn.execute(f"PREPARE bench_candidates ({types}) AS {body}")
        return "EXECUTE bench_candidates(" + call.split(CANDIDATES_FUNCTION + "(", 1)[1]


def candidate_call(
    container: Any,
    subject: str,
    query: str,
    vec: np.ndarray,
    clearance: int,
    conn_wrapper: type[TimedConn] = TimedConn,
) -> tuple[float, float, int, TimedConn]:
    """`retrieval_candidates` as the broker calls it; (sql seconds, whole call seconds, rows, wrapper)."""
    from agent_memory.adapters.postgres.store import PostgresTenantSession
    from agent_memory.services.retrieval import CANDIDATES_PER_SIGNAL

    # As the broker calls it: one statement on an autocommit connection. The plan is explained
    # inside a transaction that sets the tenant, since the query is run without the function.
    opened = (
        container.db.tenant_transaction(c.TENANT, reuse_plans=True)
        if issubclass(conn_wrapper, ExplainConn)
        else container.db.statements()
    )
    with opened as conn:
        wrapped = conn_wrapper(conn)
        session = PostgresTenantSession(wrapped, c.TENANT)  # type: ignore[arg-type]
        t = time.perf_counter()
        rows = session.retrieval_candidates(
            subject_id=subject,
            query_embedding=vec,
            query_text=query,
            types=None,
            max_sensitivity_rank=clearance,
            now=datetime.now(UTC),
            per_signal=max(CANDIDATES_PER_SIGNAL, 5 * 4),
        )
        whole = time.perf_counter() - t
    return wrapped.elapsed, whole, len(rows), wrapped


@contextlib.contextmanager
def floor_connection(url: str) -> Any:
    """A ready connection as the application role, tenant set once: the floor pays one round trip."""
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET ROLE memory_app")
        conn.execute("SELECT set_config('app.tenant_id', %s, false)", (c.TENANT,))
        yield conn


def floor_call(conn: Any, subject: str, vec: np.ndarray, clearance: int, text: str = "") -> tuple[float, int]:
    t = time.perf_counter()
    rows = conn.execute(
        FLOOR_SQL, {"q": vec, "t": c.TENANT, "s": subject, "now": datetime.now(UTC), "clr": clearance}
    ).fetchall()
    return time.perf_counter() - t, len(rows)


def floor_logged_call(conn: Any, subject: str, vec: np.ndarray, clearance: int, text: str = "") -> None:
    """The least any retrieval with a durable access event can cost: the floor query, then a bare
    INSERT of the event with the ids it found, each its own autocommit statement on the floor's
    ready connection (tenant set once: no pool, no function, no JSON payload)."""
    rows = conn.execute(
        FLOOR_SQL, {"q": vec, "t": c.TENANT, "s": subject, "now": datetime.now(UTC), "clr": clearance}
    ).fetchall()
    conn.execute(
        "INSERT INTO retrieval_log (tenant_id, id, subject_id, actor, memory_ids, payload)"
        " VALUES (%s, %s, %s, %s, %s, '{}')",
        (c.TENANT, new_id("acc"), subject, FLOOR_ACTOR, [r[0] for r in rows]),
    )


FLOOR_LOGGED_ONE_SQL = f"""
WITH found AS ({FLOOR_SQL}), logged AS (
    INSERT INTO retrieval_log (tenant_id, id, subject_id, actor, memory_ids, payload)
    SELECT %(t)s, %(log_id)s, %(s)s, %(actor)s, coalesce(array_agg(id), '{{}}'), '{{}}' FROM found
)
SELECT id, distance FROM found
"""


def floor_logged_one_call(conn: Any, subject: str, vec: np.ndarray, clearance: int, text: str = "") -> None:
    """The same in one statement: the INSERT of the ids found rides on the floor query (a
    data-modifying CTE), so one round trip reads and durably logs. Only a broker that decides in
    SQL which ids it returns could log this way."""
    conn.execute(
        FLOOR_LOGGED_ONE_SQL,
        {
            "q": vec,
            "t": c.TENANT,
            "s": subject,
            "now": datetime.now(UTC),
            "clr": clearance,
            "log_id": new_id("acc"),
            "actor": FLOOR_ACTOR,
        },
    ).fetchall()


# The broker's selection as one statement, with the access event on it (see the module docstring).
# Its weights, factors, half-lives, caps and floor are parameters taken from the broker's own
# constants (domain/ranking.py, sql_ranked_call), so the two cannot drift apart; the half-lives'
# CASE has a branch per memory type the ranking knows.
SQL_RANKED_SQL_TEMPLATE = """
WITH q AS MATERIALIZED (
  SELECT coalesce((SELECT array_agg(t.lexeme) FROM unnest(to_tsvector('english', %(qtext)s)) t), '{}') AS lex
),
sent AS (
  SELECT ms.memory_id, max(1 - (ms.embedding <=> %(q)s)) AS ss
    FROM memory_sentences ms WHERE ms.tenant_id = %(t)s AND ms.subject_id = %(s)s GROUP BY ms.memory_id
),
scoped AS MATERIALIZED (
  SELECT r.id, r.type, r.authority, r.authority_rank, r.confidence, r.effective_at, r.content_tsv,
         greatest(1 - (r.embedding <=> %(q)s), s.ss) AS dense
    FROM memory_records r LEFT JOIN sent s ON s.memory_id = r.id
   WHERE r.tenant_id = %(t)s AND r.subject_id = %(s)s AND r.status = 'active'
     AND (r.expires_at IS NULL OR r.expires_at > %(now)s) AND r.sensitivity_rank <= %(clr)s
),
lex AS MATERIALIZED (  -- each lexeme of each candidate: its count, and whether the query has it
  SELECT sc.id, u.lexeme, coalesce(array_length(u.positions, 1), 1) AS f, u.lexeme = ANY(q.lex) AS hit
    FROM scoped sc CROSS JOIN q CROSS JOIN LATERAL unnest(sc.content_tsv) u
),
len AS (SELECT id, sum(f)::float8 AS dl FROM lex GROUP BY id),
tf AS (SELECT id, lexeme, f FROM lex WHERE hit),
df AS (SELECT lexeme, count(*) AS d FROM tf GROUP BY lexeme),
stats AS (SELECT count(*)::float8 AS n, coalesce(nullif(avg(coalesce(len.dl, 0)), 0), 1) AS avgdl
            FROM scoped LEFT JOIN len USING (id)),
bm AS (  -- BM25
  SELECT tf.id, sum(ln(1 + (st.n - df.d + 0.5) / (df.d + 0.5)) * tf.f * (%(k1)s + 1)
                    / (tf.f + %(k1)s * (1 - %(b)s + %(b)s * len.dl / st.avgdl))) AS bm25
    FROM tf JOIN df USING (lexeme) JOIN len USING (id) CROSS JOIN stats st GROUP BY tf.id
),
norm AS (
  SELECT sc.*, coalesce(bm.bm25, 0) AS lexical,
         min(coalesce(bm.bm25, 0)) OVER () AS lmin, max(coalesce(bm.bm25, 0)) OVER () AS lmax,
         min(coalesce(sc.dense, 0)) OVER () AS dmin, max(coalesce(sc.dense, 0)) OVER () AS dmax
    FROM scoped sc LEFT JOIN bm USING (id)
),
scored AS (
  SELECT n.id, n.type, n.authority, n.authority_rank, n.effective_at, n.dense, n.lexical,
         (%(w_lex)s * CASE WHEN n.lmax - n.lmin < 1e-12 THEN 0 ELSE (n.lexical - n.lmin) / (n.lmax - n.lmin) END
          + (1 - %(w_lex)s) * CASE WHEN n.dmax - n.dmin < 1e-12 THEN 0 ELSE (coalesce(n.dense, 0) - n.dmin) / (n.dmax - n.dmin) END)
         * (%(trust_base)s + %(trust_per_rank)s * n.authority_rank)
         * CASE WHEN n.authority = ANY(%(verified)s) THEN %(verified_boost)s ELSE 1 END
         * (%(confidence_base)s + %(confidence_weight)s * n.confidence)
         * (1 - %(rw)s + %(rw)s * coalesce(0.5 ^ (greatest(0, extract(epoch FROM %(now)s - n.effective_at)) / 86400
              / CASE n.type {half_lives} END), 1)) AS score
    FROM norm n
),
sectioned AS (  -- every section passes the relevance floor (no slot is asked for by name here)
  SELECT s.*, CASE
      WHEN NOT (coalesce(s.dense, -1) >= %(floor)s
                OR (s.lexical > 0 AND coalesce(s.dense, %(keyword_bar)s) >= %(keyword_bar)s))
           THEN NULL
      WHEN s.type = 'fact' AND s.authority = ANY(%(verified)s) THEN 'verified_facts'
      WHEN s.authority_rank <= %(claim_rank)s OR s.type = 'sentiment' THEN 'unverified'
      WHEN s.type IN ('episode', 'observation') THEN 'supporting'
      ELSE 'relevant' END AS section
    FROM scored s
),
capped AS (  -- at most verified_cap verified facts
  SELECT * FROM (
    SELECT x.*, row_number() OVER (PARTITION BY x.section = 'verified_facts'
                                   ORDER BY x.score DESC, x.effective_at DESC, x.id) AS rn
      FROM sectioned x WHERE x.section IS NOT NULL) y
   WHERE y.section <> 'verified_facts' OR y.rn <= %(verified_cap)s
),
picked AS MATERIALIZED (  -- top_k across all sections, verified facts first, then by rank
  SELECT * FROM (
    SELECT c.*, row_number() OVER (ORDER BY (c.section = 'verified_facts') DESC, c.score DESC,
                                            c.effective_at DESC, c.id) AS g
      FROM capped c) z
   WHERE z.g <= %(k)s
),
logged AS (
  INSERT INTO retrieval_log (tenant_id, id, subject_id, actor, memory_ids, payload)
  SELECT %(t)s, %(log_id)s, %(s)s, %(actor)s, coalesce(array_agg(id ORDER BY score DESC), '{}'), '{}' FROM picked
)
SELECT p.id, p.section, p.score, p.dense, r.content, r.category, r.source::text, r.value::text,
       r.authority, r.type, r.effective_at, r.expires_at, r.session_id, r.slot, r.confidence
  FROM picked p JOIN memory_records r ON r.id = p.id AND r.tenant_id = %(t)s
 ORDER BY p.section, p.score DESC
"""


def _sql_ranked_sql() -> str:
    from agent_memory.domain import ranking

    half_lives = " ".join(f"WHEN '{t.value}' THEN %(hl_{t.value})s" for t in ranking.HALF_LIFE_DAYS)
    # the template's only literal braces are '{}' (an empty array), kept as they are
    return SQL_RANKED_SQL_TEMPLATE.replace("{half_lives}", half_lives)


SQL_RANKED_SQL = _sql_ranked_sql()


def sql_ranked_call(conn: Any, subject: str, vec: np.ndarray, clearance: int, text: str = "") -> list[str]:
    """The broker's selection in one statement that also logs it (SQL_RANKED_SQL): the ids chosen."""
    from agent_memory.domain import ranking
    from agent_memory.domain.enums import VERIFIED_AUTHORITIES, Authority
    from agent_memory.domain.policy import PROFILES
    from agent_memory.domain.relevance import relevance_bar
    from agent_memory.services.retrieval import VERIFIED_FACTS_CAP

    bar = relevance_bar("local-minilm-onnx")  # the bench embedder is named like MiniLM
    rows = conn.execute(
        SQL_RANKED_SQL,
        {
            "q": vec,
            "qtext": ranking.topical_query(text),
            "t": c.TENANT,
            "s": subject,
            "now": datetime.now(UTC),
            "clr": clearance,
            "k": PROFILES["crm"].retrieval_top_k,  # the bench's policy
            "verified_cap": VERIFIED_FACTS_CAP,
            "floor": bar.floor,
            "keyword_bar": bar.keyword_bar,
            "verified": sorted(a.value for a in VERIFIED_AUTHORITIES),
            "claim_rank": Authority.CUSTOMER_CLAIM.rank,
            "w_lex": ranking.W_LEXICAL,
            "k1": ranking.BM25_K1,
            "b": ranking.BM25_B,
            "rw": ranking.RECENCY_WEIGHT,
            "trust_base": ranking.TRUST_BASE,
            "trust_per_rank": ranking.TRUST_PER_RANK,
            "verified_boost": ranking.VERIFIED_BOOST,
            "confidence_base": ranking.CONFIDENCE_BASE,
            "confidence_weight": ranking.CONFIDENCE_WEIGHT,
            **{f"hl_{t.value}": days for t, days in ranking.HALF_LIFE_DAYS.items()},
            "log_id": new_id("acc"),
            "actor": FLOOR_ACTOR,
        },
    ).fetchall()
    return [row[0] for row in rows]


def floor_logged_events(url: str) -> int:
    with c.owner_connection(url, c.TENANT) as conn:
        return int(
            conn.execute("SELECT count(*) FROM retrieval_log WHERE actor = %s", (FLOOR_ACTOR,)).fetchone()[0]
        )


# The reference workloads that write an access event, each timed in the single-client loop and
# at the most clients; with the bare floor, what a client process can be told to run.
LOGGED_CALLS: dict[str, Any] = {
    "floor_logged": floor_logged_call,
    "floor_logged_one": floor_logged_one_call,
    "sql_ranked": sql_ranked_call,
}
FLOOR_CALLS: dict[str, Any] = {"floor": floor_call, **LOGGED_CALLS}


def warm_os_cache(data_dir: Path) -> float:
    """Read the database files once: the runs measure a warm OS page cache, not the disk."""
    t = time.perf_counter()
    base = Path(data_dir) / "pg" / "base"
    buf = bytearray(1 << 22)
    for root, _, files in os.walk(base):
        for f in files:
            with contextlib.suppress(OSError), open(os.path.join(root, f), "rb", buffering=0) as fh:
                while fh.readinto(buf):
                    pass
    return round(time.perf_counter() - t, 1)


# --------------------------------------------------------------------------- client processes
def _worker(
    idx: int,
    url: str,
    data_dir: str,
    workload: list[tuple[str, int]],
    qtexts: list[str],
    qvecs: np.ndarray,
    cmd_q: Any,
    out_q: Any,
) -> None:
    c.quiet_logs()
    from agent_memory.domain.enums import Role
    from agent_memory.services.retrieval import RetrieveRequest

    container = c.build(
        None, database_url=url, embedder=c.PrecomputedEmbedder(), pool_max_size=1, migrate=False
    )
    p = c.principal(c.TENANT, Role.AGENT)
    rng = random.Random(1000 + idx)  # noqa: S311 - synthetic data, not security
    real_embedder = None
    floor_conn = None
    clearance = p.clearance.rank
    stack = contextlib.ExitStack()  # the floor's own connection, opened on first use

    def ask(mode: str, subject: str, qi: int, req: Any) -> None:
        nonlocal floor_conn
        if mode in FLOOR_CALLS:  # the bare exact k-NN [+ the access event]
            if floor_conn is None:
                floor_conn = stack.enter_context(floor_connection(url))
            FLOOR_CALLS[mode](floor_conn, subject, qvecs[qi], clearance, qtexts[qi])
        elif mode == "embed":
            container.broker.retrieve(p, req)
        else:
            container.broker.retrieve(p, req, query_embedding=qvecs[qi])

    out_q.put(("ready", idx))
    while True:
        cmd = cmd_q.get()
        if cmd is None:
            break
        mode, start_at, seconds = cmd
        if mode == "embed" and real_embedder is None:
            from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

            real_embedder = MiniLMOnnxEmbedder()
            container.broker.embedder = real_embedder
            out_q.put(("loaded", idx))
            continue

        def prepare(mode: str = mode) -> Any:
            subject, qi = workload[rng.randrange(len(workload))]
            req = RetrieveRequest(subject_id=subject, query=qtexts[qi])
            return lambda: ask(mode, subject, qi, req)

        lat, errors, cpu = c.timed_loop(prepare, start_at, seconds)
        out_q.put(("done", idx, lat, errors, cpu))
    stack.close()
    container.close()


class ClientPool:
    """N client processes (spawned once), each with its own container and connection."""

    def __init__(
        self,
        n: int,
        url: str,
        data_dir: Path,
        workload: list[tuple[str, int]],
        qtexts: list[str],
        qvecs: np.ndarray,
    ) -> None:
        self.pool = c.ProcessPool(
            n, _worker, lambda i: (i, url, str(data_dir), workload, qtexts, qvecs), data_dir
        )

    def load_embedders(self, n: int) -> None:
        self.pool.send(n, ("embed", 0.0, 0.0))
        for _ in range(n):
            self.pool.get("loaded")

    def run(self, n: int, mode: str, seconds: float) -> dict[str, Any]:
        r = self.pool.timed(n, lambda start_at: (mode, start_at, seconds), seconds)
        done = max(1, len(r.latencies))
        return {
            "clients": n,
            "mode": mode,
            "seconds": seconds,
            "retrievals": len(r.latencies),
            "errors": r.errors,
            "qps": round(len(r.latencies) / seconds, 1),
            **c.summarize_ms(r.latencies),
            "machine_busy_pct": r.machine_busy_pct,
            "client_cpu_ms_per_retrieval": round(r.client_cpu_s / done * 1000, 2),
            "server_cpu_ms_per_retrieval": round(r.server_cpu_s / done * 1000, 2),
            "cpu_bound_qps_2_cores": round(2000 / ((r.client_cpu_s + r.server_cpu_s) / done * 1000), 1)
            if r.client_cpu_s + r.server_cpu_s > 0
            else None,
        }

    def close(self) -> None:
        self.pool.close()


# --------------------------------------------------------------------------- the bench
def run_retrieve_bench(
    data_dir: Path,
    *,
    subjects: int = 25_000,
    per_subject: int = 40,
    queries: int = 2000,
    seconds: float = 10.0,
    clients: tuple[int, ...] = (1, 4, 16),
    hnsw: bool = False,
    reuse: bool = False,
    seed: int = 7,
    profile: bool = True,
) -> dict[str, Any]:
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder
    from agent_memory.domain.enums import Role
    from agent_memory.services.retrieval import RetrieveRequest

    data_dir = Path(data_dir)
    shape = {
        "subjects": subjects,
        "per_subject": per_subject,
        "hnsw": hnsw,
        "seed": seed,
        "kind": "retrieve",
        "sentences": True,
    }
    marker = c.read_marker(data_dir)
    reusing = bool(reuse and marker and all(marker.get(k) == v for k, v in shape.items()))
    if not reusing:
        c.reset_data_dir(data_dir)
    report: dict[str, Any] = {
        "bench": "retrieve",
        "records": subjects * per_subject,
        "subjects": subjects,
        "per_subject": per_subject,
        "machine_before": c.machine_state(),
    }
    embedder = MiniLMOnnxEmbedder()
    container = c.build(data_dir, embedder=embedder)
    url = c.owner_url(container)
    qtexts = query_texts()
    t = time.perf_counter()
    qvec_map = embed_all(embedder, qtexts)
    qvecs = np.stack([qvec_map[q] for q in qtexts])
    if reusing:
        report["load"] = {"reused": True, **(marker or {}).get("load", {})}
    else:
        gists = embed_all(embedder, all_gists())
        report["embed_gists_s"] = round(time.perf_counter() - t, 1)
        print(f"loading {subjects * per_subject:,} memories ...", flush=True)

        def vectors(g: np.random.Generator, plans: list[dict[str, Any]]) -> np.ndarray:
            return c.near(np.stack([gists[p["gist"]] for p in plans]), g, noise=0.35)

        report["load"] = c.load_dataset(
            container,
            subjects=subjects,
            per_subject=per_subject,
            seed=seed,
            hnsw=hnsw,
            vectors=vectors,
            sentences=True,
        )
        c.write_marker(data_dir, {**shape, "load": report["load"]})
    report["disk_gib"] = c.dir_size_gib(data_dir / "pg")
    with c.owner_connection(url, c.TENANT) as conn:
        report["records"] = conn.execute("SELECT count(*) FROM memory_records").fetchone()[0]
        report["table_sizes"] = dict(
            zip(
                ("heap", "toast", "indexes"),
                conn.execute(
                    """SELECT pg_size_pretty(pg_relation_size(c.oid)), pg_size_pretty(pg_total_relation_size(c.reltoastrelid)),
                      pg_size_pretty(pg_indexes_size(c.oid)) FROM pg_class c WHERE relname = 'memory_records'"""
                ).fetchone(),
                strict=True,
            )
        )
    report["os_cache_warm_s"] = warm_os_cache(data_dir)
    floor_events_before = floor_logged_events(url)

    workload = make_workload(subjects, queries, seed + 1)
    p = c.principal(c.TENANT, Role.AGENT)
    clearance = p.clearance.rank
    # Warm-up (connections, prepared statements, caches): not measured.
    with floor_connection(url) as fconn:
        for subject, qi in workload[: min(200, len(workload))]:
            container.broker.retrieve(
                p, RetrieveRequest(subject_id=subject, query=qtexts[qi]), query_embedding=qvecs[qi]
            )
            candidate_call(container, subject, qtexts[qi], qvecs[qi], clearance)
            floor_call(fconn, subject, qvecs[qi], clearance)

        db: list[float] = []
        store: list[float] = []
        broker: list[float] = []
        floor: list[float] = []
        embed: list[float] = []
        logged: dict[str, list[float]] = {mode: [] for mode in LOGGED_CALLS}
        steps = ["db", "floor", "broker", "embed", *LOGGED_CALLS]
        same_ids = 0  # sql_ranked chose what the broker returned
        cand_rows, floor_rows, memories, broker_db = [], [], [], []
        busy = c.CpuSampler()
        for i, (subject, qi) in enumerate(workload):
            vec, text = qvecs[qi], qtexts[qi]
            broker_ids: set[str] = set()
            ranked_set: set[str] = set()
            for step in steps if i % 2 == 0 else steps[::-1]:
                if step == "db":
                    sql_s, whole_s, n, _ = candidate_call(container, subject, text, vec, clearance)
                    db.append(sql_s)
                    store.append(whole_s)
                    cand_rows.append(n)
                elif step == "floor":
                    s, n = floor_call(fconn, subject, vec, clearance)
                    floor.append(s)
                    floor_rows.append(n)
                elif step == "broker":
                    t = time.perf_counter()
                    r = container.broker.retrieve(
                        p, RetrieveRequest(subject_id=subject, query=text), query_embedding=vec
                    )
                    broker.append(time.perf_counter() - t)
                    memories.append(len(r.memories))
                    broker_ids = {m["id"] for m in r.memories}
                    broker_db.append(r.timings_ms["db"] / 1000)
                elif step == "embed":
                    t = time.perf_counter()
                    embedder.embed([text])
                    embed.append(time.perf_counter() - t)
                else:
                    t = time.perf_counter()
                    found = LOGGED_CALLS[step](fconn, subject, vec, clearance, text)
                    logged[step].append(time.perf_counter() - t)
                    if step == "sql_ranked":
                        ranked_set = set(found)
            same_ids += ranked_set == broker_ids
        single_busy = busy.busy_pct()
        _, _, _, explain = candidate_call(
            container, workload[0][0], qtexts[workload[0][1]], qvecs[workload[0][1]], clearance, ExplainConn
        )
        floor_plan = [
            r[0]
            for r in fconn.execute(
                "EXPLAIN (ANALYZE, BUFFERS) " + FLOOR_SQL,
                {
                    "q": qvecs[0],
                    "t": c.TENANT,
                    "s": workload[0][0],
                    "now": datetime.now(UTC),
                    "clr": clearance,
                },
            ).fetchall()
        ]

    report.update(
        {
            "queries": len(workload),
            **c.summarize_ms(db, "db_"),
            **c.summarize_ms(store, "store_"),
            **c.summarize_ms(broker, "broker_"),
            **c.summarize_ms(embed, "embed_"),
            **c.summarize_ms(floor, "floor_"),
            **{k: v for mode, lat in logged.items() for k, v in c.summarize_ms(lat, f"{mode}_").items()},
            "sql_ranked_same_ids_pct": round(100 * same_ids / len(workload), 1) if workload else None,
            "broker_db_timing_p50_ms": round(c.percentile([x * 1000 for x in broker_db], 50), 3),
            "candidates_per_query_median": c.percentile(cand_rows, 50),
            "floor_rows_median": c.percentile(floor_rows, 50),
            "memories_returned_median": c.percentile(memories, 50),
            "single_client_machine_busy_pct": single_busy,
        }
    )
    report["ratio_to_floor"] = c.ratio(report["broker_p95_ms"], report["floor_p95_ms"])
    report["plans"] = {"candidates": explain.plan, "floor": floor_plan}

    if profile:
        n_prof = min(300, len(workload))

        def broker_loop() -> None:
            for subject, qi in workload[:n_prof]:
                container.broker.retrieve(
                    p, RetrieveRequest(subject_id=subject, query=qtexts[qi]), query_embedding=qvecs[qi]
                )

        sql = c.SqlProfile()
        t = time.perf_counter()
        with sql.active():
            broker_loop()
        report["profile_sql_broker"] = sql.report(n_prof, time.perf_counter() - t)
        _, report["profile_cprofile_broker"] = c.cprofile_top(broker_loop)

    # Throughput: client processes.
    print("throughput runs ...", flush=True)
    pool = ClientPool(max(clients), url, data_dir, workload, qtexts, qvecs)
    try:
        runs = []
        for n in clients:
            runs.append(pool.run(n, "precomputed", seconds))
            print(f"  {runs[-1]}", flush=True)
        # The floor's own throughput at the most clients: what this machine does at best with
        # the bare query alone (client and server CPU included), to read qps_16 against.
        floor_run = pool.run(max(clients), "floor", seconds)
        print(f"  {floor_run}", flush=True)
        # ...and with the access event every retrieval must write durably before it answers
        logged_runs = {}
        for mode in LOGGED_CALLS:
            logged_runs[mode] = pool.run(max(clients), mode, seconds)
            print(f"  {logged_runs[mode]}", flush=True)
        pool.load_embedders(max(clients))
        runs.append(pool.run(max(clients), "embed", seconds))
        print(f"  {runs[-1]}", flush=True)
    finally:
        pool.close()
    report["throughput"] = runs
    report["floor_throughput"] = floor_run
    report[f"floor_qps_{max(clients)}"] = floor_run["qps"]
    report[f"floor_p95_ms_{max(clients)}"] = floor_run["p95_ms"]
    for mode, run in logged_runs.items():
        report[f"{mode}_throughput"] = run
        report[f"{mode}_qps_{max(clients)}"] = run["qps"]
    # a check that the reference workloads wrote what they claim: one event per timed call
    report["floor_logged_events_written"] = floor_logged_events(url) - floor_events_before
    report["floor_logged_calls"] = sum(len(lat) for lat in logged.values()) + sum(
        run["retrievals"] for run in logged_runs.values()
    )
    for r in runs:
        if r["mode"] == "precomputed":
            report[f"qps_{r['clients']}"] = r["qps"]
            report[f"p95_ms_{r['clients']}"] = r["p95_ms"]
    report[f"qps_{max(clients)}_embed"] = runs[-1]["qps"]
    report[f"p95_ms_{max(clients)}_embed"] = runs[-1]["p95_ms"]
    report["targets"] = TARGETS
    report["met"] = {
        "db_p95_ms": report["db_p95_ms"] <= TARGETS["db_p95_ms"],
        "broker_p95_ms": report["broker_p95_ms"] <= TARGETS["broker_p95_ms"],
        "ratio_to_floor": report["ratio_to_floor"] <= TARGETS["ratio_to_floor"],
        "qps_16": report.get("qps_16", 0) >= TARGETS["qps_16"],
        "p95_ms_16": report.get("p95_ms_16", float("inf")) <= TARGETS["p95_ms_16"],
    }
    report["client_model"] = (
        "processes: each client its own container, pool of 1 connection and GIL "
        "(Lambda-like concurrency); PostgreSQL and all clients share the machine's CPUs"
    )
    report["machine_after"] = c.machine_state()
    container.close()
    return report


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench retrieve")
    p.add_argument("--data-dir", type=Path, help=c.DATA_DIR_HELP)
    p.add_argument("--subjects", type=int, default=25_000)
    p.add_argument("--per-subject", type=int, default=40)
    p.add_argument("--queries", type=int, default=2000, help="measured single-client queries per kind")
    p.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--hnsw", action="store_true", help="rebuild the HNSW index after loading")
    p.add_argument("--reuse", action="store_true", help="keep a dataset of the same shape in --data-dir")
    p.add_argument("--keep", action="store_true", help="leave the data dir (default: delete it when done)")
    p.add_argument("--no-profile", action="store_true")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json")
    a = p.parse_args(argv)
    if a.reuse and a.data_dir is None:
        p.error("--reuse needs the --data-dir of a kept dataset")
    a.data_dir = c.data_dir_or_temporary(a.data_dir, "retrieve")
    try:
        report = run_retrieve_bench(
            a.data_dir,
            subjects=a.subjects,
            per_subject=a.per_subject,
            queries=a.queries,
            seconds=a.seconds,
            clients=tuple(int(x) for x in a.clients.split(",")),
            hnsw=a.hnsw,
            reuse=a.reuse,
            seed=a.seed,
            profile=not a.no_profile,
        )
        report["command"] = "memory bench retrieve " + " ".join(argv)
        return report, a.json
    finally:
        c.stop_server(a.data_dir, delete=not a.keep)
