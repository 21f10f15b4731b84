"""This service beside mem0 OSS on the same corpus and the same PostgreSQL: `memory bench peer`.

    memory bench peer --subjects 2500 --per-subject 40 --json out.json

Needs the optional `peer` dependency group (mem0ai, pinned in pyproject.toml):
`python3 -m uv sync --frozen --all-extras --group dev --group infra --group peer --inexact`.

1. The corpus of `memory bench retrieve`: `subjects x per_subject` synthetic memories (MiniLM vectors of
   each memory's gist plus noise, sentence vectors where the content has several sentences),
   bulk-loaded into this service's store on its embedded PostgreSQL.
2. An OpenAI-compatible embeddings server on 127.0.0.1 (`EmbeddingServer`) answers with the very
   vectors the service holds for each memory and query (any other text is embedded by the local
   MiniLM). mem0 (pgvector vector store, `infer=False`: no LLM, telemetry off) is pointed at it, so
   both systems search the same vectors, and the time mem0 spends in its embedding call can be
   taken out of its timings.
3. mem0 adds the first `--mem0-adds` active memories one `add` at a time into its default schema (a
   table with an HNSW index, as `PGVectorConfig` makes it), in a database of its own on the same
   server: its load rate. The rest go into its table by COPY, each row as its `add` writes it (one
   `add` at a time would take hours at 100k on this machine), its HNSW and full-text indexes dropped
   first and created again afterwards from their own definitions (`copy_mem0_rows`): the schema mem0
   makes, loaded faster. A copy of that table (the same indexes, built the same way) gets, besides, a B-tree index on the user id
   (`payload->>'user_id'`), added by hand: mem0's search filters on it, and with only the HNSW
   index the filter is applied after the approximate scan, which rarely keeps the user's rows.
   The service's load rate is its write path, one `WriteGateway.write` at a time with precomputed
   vectors (the whole admission policy), on fresh subjects.
4. Queries: `--queries` memories drawn at random (active episodes and resolutions a default agent
   may read), each asked about by a question that paraphrases it (`paraphrase_query`), embedded by
   MiniLM. recall@k: the memory is among the first k returned (the service in the order it returns
   its context, mem0 in score order; both asked for 5). Single client, the three systems
   interleaved query by query; mem0's figures with and without its embedding call.
5. Throughput: 1, 4 and 16 client processes per system for `--seconds` each, each with one
   connection; the service through `RetrievalBroker.retrieve` with the precomputed vector (as in
   `memory bench retrieve`), mem0 through `Memory.search` with its embedder answering from the
   same precomputed vectors in process (so neither pays for embedding). The systems take turns at
   each client count, the order flipped from one count to the next.

Every figure that compares is a ratio measured in the same run (`ratios`): this service's
throughput / mem0's, its p95 / mem0's p95 without embedding, its recall minus mem0's.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import importlib.util
import json
import os
import random
import re
import sys
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

from memory_bench import common as c

MEM0_VERSION = "2.2.1"  # the version pinned in the `peer` dependency group
MEM0_DB = "mem0"  # mem0's own database on the service's embedded server
MEM0_DEFAULT = "mem0"  # mem0 as configured: the default schema
MEM0_INDEXED = "mem0_user_index"  # the same rows with a per-user B-tree index added by hand
SERVICE = "service"
SYSTEMS = (SERVICE, MEM0_DEFAULT, MEM0_INDEXED)
TOP_K = 5
SETUP_HINT = (
    "memory bench peer needs mem0 (the optional 'peer' dependency group): "
    "python3 -m uv sync --frozen --all-extras --group dev --group infra --group peer --inexact"
)

_GIST = re.compile(r"^discussed (?P<topic>.+?); (?P<detail>.+?)\. Next step: (?P<action>.+?)\.$")
_QUERY_TEMPLATES = (
    "Remind me what we agreed about {topic} after {detail}",
    "Last time {topic} came up, {detail} - what was the follow-up?",
    "Did we say we would {action} regarding {topic}?",
    "What happened with {topic}? I think {detail}",
)


# --------------------------------------------------------------------------- pure parts
def mem0_installed() -> bool:
    return importlib.util.find_spec("mem0") is not None


def paraphrase_query(gist: str, rng: random.Random) -> str | None:
    """A question about an episode, worded unlike its text (None for a gist that is not an episode's)."""
    m = _GIST.match(gist)
    if m is None:
        return None
    return rng.choice(_QUERY_TEMPLATES).format(**m.groupdict())


def rank_of(target: str, returned: Sequence[str]) -> int | None:
    """1-based position of the target content among what was returned, None if absent."""
    for i, content in enumerate(returned, 1):
        if content == target:
            return i
    return None


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Share of queries whose target came back among the first k."""
    if not ranks:
        return float("nan")
    return round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 4)


def _div(a: Any, b: Any) -> float | None:
    if not isinstance(a, int | float) or not isinstance(b, int | float) or not b:
        return None
    return round(a / b, 2)


def peer_ratios(service: dict[str, Any], peer: dict[str, Any]) -> dict[str, Any]:
    """This service against one mem0 variant, from one run: throughput and load rate as this service's /
    mem0's (above 1: this service does more), latency as this service's / mem0's without embedding
    (below 1: this service answers sooner), recall as the difference (above 0: this service finds more)."""
    out: dict[str, Any] = {}
    for n in (1, 4, 16):
        out[f"qps_{n}"] = _div(service.get(f"qps_{n}"), peer.get(f"qps_{n}"))
    out["p50"] = _div(service.get("p50_ms"), peer.get("p50_ms"))
    out["p95"] = _div(service.get("p95_ms"), peer.get("p95_ms"))
    out["p95_16"] = _div(service.get("p95_ms_16"), peer.get("p95_ms_16"))
    out["load"] = _div(service.get("load_per_s"), peer.get("load_per_s"))
    out["load_batched"] = _div(service.get("load_per_s_batched"), peer.get("load_per_s"))
    for key in ("recall_at_1", "recall_at_1_by_score", "recall_at_5"):
        a, b = service.get(key), peer.get(key)
        out[f"{key}_diff"] = round(a - b, 4) if isinstance(a, float) and isinstance(b, float) else None
    return out


ROWS: tuple[tuple[str, str], ...] = (
    ("single client p50 ms (no embedding)", "p50_ms"),
    ("single client p95 ms (no embedding)", "p95_ms"),
    ("single client p95 ms with the embedding call", "p95_ms_with_embed"),
    ("searches/s, 1 client", "qps_1"),
    ("searches/s, 4 clients", "qps_4"),
    ("searches/s, 16 clients", "qps_16"),
    ("p95 ms at 16 clients", "p95_ms_16"),
    ("recall@1 (first returned)", "recall_at_1"),
    ("recall@1 (highest score)", "recall_at_1_by_score"),
    ("recall@5", "recall_at_5"),
    ("load: memories/s one at a time (no embedding)", "load_per_s"),
    ("load: memories/s with the embedding call", "load_per_s_with_embed"),
    ("load: memories/s in batches (no embedding)", "load_per_s_batched"),
)


def _cell(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.3f}" if abs(v) < 1 else f"{v:,.1f}" if abs(v) >= 100 else f"{v:,.2f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def side_by_side(report: dict[str, Any]) -> str:
    """The report's systems side by side, then this service's ratios to each mem0 variant (markdown)."""
    systems = report["systems"]
    names = [s for s in SYSTEMS if s in systems]
    lines = ["| figure | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for label, key in ROWS:
        lines.append(f"| {label} | " + " | ".join(_cell(systems[s].get(key)) for s in names) + " |")
    ratios = report.get("ratios", {})
    if ratios:
        peers = [s for s in names if s in ratios]
        lines += ["", "| this service / | " + " | ".join(peers) + " |", "|---" * (len(peers) + 1) + "|"]
        for key in next(iter(ratios.values())):
            lines.append(f"| {key} | " + " | ".join(_cell(ratios[p].get(key)) for p in peers) + " |")
    return "\n".join(lines)


NAMES = {SERVICE: "this service", MEM0_DEFAULT: "mem0, default schema", MEM0_INDEXED: "mem0 + per-user index"}
_RATIO_KEYS = ("qps_1", "qps_4", "qps_16", "p50", "p95", "p95_16", "load", "load_batched")
_SYSTEM_KEYS = tuple(key for _, key in ROWS)


def figures_entry(report: dict[str, Any]) -> dict[str, Any]:
    """One run's figures as docs/benchmark-figures.json keeps them for the page's table and plot (a corpus
    size under `peer.sizes`): the ratios to each mem0 variant, recall@1 (first returned, highest score)
    and @5 of each system, and each
    system's own figures, under the names the page uses."""
    systems, ratios = report["systems"], report["ratios"]
    return {
        "memories": report["records"],
        "queries": report["queries"],
        "ratios": {NAMES[s]: {k: ratios[s].get(k) for k in _RATIO_KEYS} for s in SYSTEMS if s in ratios},
        "recall": {
            NAMES[s]: [systems[s][k] for k in ("recall_at_1", "recall_at_1_by_score", "recall_at_5")]
            for s in SYSTEMS
        },
        "systems": {NAMES[s]: {k: systems[s].get(k) for k in _SYSTEM_KEYS} for s in SYSTEMS},
    }


# --------------------------------------------------------------------------- the corpus
@dataclass
class Corpus:
    """What was loaded into the service, as mem0 is given it: active memories (subject, content) in
    load order, every vector by its text (memories and queries), and the query targets."""

    memories: list[tuple[str, str]] = field(default_factory=list)
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    candidates: list[tuple[str, str, str]] = field(default_factory=list)  # subject, content, gist

    def capture(self, plans: list[dict[str, Any]], vecs: np.ndarray) -> None:
        from agent_memory.domain.enums import MemoryType, Sensitivity

        for p, v in zip(plans, vecs, strict=True):
            if p["status"] != "active":
                continue
            self.memories.append((p["subject_id"], p["content"]))
            self.vectors[p["content"]] = v
            if (
                p["type"] in (MemoryType.EPISODE.value, MemoryType.RESOLUTION.value)
                and p["sensitivity"] is Sensitivity.INTERNAL
            ):
                self.candidates.append((p["subject_id"], p["content"], p["gist"]))


@dataclass
class Query:
    subject: str
    text: str
    target: str


def make_queries(corpus: Corpus, n: int, seed: int) -> list[Query]:
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    picked = rng.sample(corpus.candidates, min(n, len(corpus.candidates)))
    out = []
    for subject, content, gist in picked:
        text = paraphrase_query(gist, rng)
        if text is not None:
            out.append(Query(subject, text, content))
    return out


# --------------------------------------------------------------------------- the embeddings server
class EmbeddingServer:
    """`POST /v1/embeddings` as OpenAI answers it, from a table of precomputed vectors (float or base64
    encoding); a text not in the table is embedded by the local MiniLM. Listens on 127.0.0.1 only."""

    def __init__(self, vectors: dict[str, np.ndarray]) -> None:
        self.vectors = vectors
        self.misses = 0
        self._embedder: Any = None
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length))
                    texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                    vecs = server.embed([str(t) for t in texts])
                except (ValueError, KeyError, TypeError) as exc:
                    self._send(400, {"error": {"message": f"bad request: {type(exc).__name__}"}})
                    return
                b64 = body.get("encoding_format") == "base64"
                data = [
                    {
                        "object": "embedding",
                        "index": i,
                        "embedding": base64.b64encode(v.astype("<f4").tobytes()).decode()
                        if b64
                        else v.tolist(),
                    }
                    for i, v in enumerate(vecs)
                ]
                self._send(
                    200,
                    {
                        "object": "list",
                        "data": data,
                        "model": body.get("model", "minilm"),
                        "usage": {"prompt_tokens": 0, "total_tokens": 0},
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                raw = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def log_message(self, format: str, *args: Any) -> None:  # no access log (texts are content)
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def embed(self, texts: list[str]) -> list[np.ndarray]:
        out: list[np.ndarray | None] = [self.vectors.get(t.replace("\n", " ")) for t in texts]
        missing = [i for i, v in enumerate(out) if v is None]
        if missing:
            with self._lock:
                if self._embedder is None:
                    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

                    self._embedder = MiniLMOnnxEmbedder()
                self.misses += len(missing)
                for i, v in zip(missing, self._embedder.embed([texts[i] for i in missing]), strict=True):
                    out[i] = v
        return [v for v in out if v is not None]

    def __enter__(self) -> EmbeddingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


# --------------------------------------------------------------------------- mem0
def mem0_environment(data_dir: Path) -> None:
    """Before mem0 is imported: no telemetry, and its home folder inside the data dir."""
    os.environ["MEM0_TELEMETRY"] = "False"
    os.environ.setdefault("MEM0_DIR", str(Path(data_dir) / "mem0-home"))
    Path(os.environ["MEM0_DIR"]).mkdir(parents=True, exist_ok=True)


def mem0_config(conninfo: str, collection: str, embed_url: str, history: Path) -> dict[str, Any]:
    """mem0 as its documentation configures it for pgvector and an OpenAI-compatible embedder; the LLM
    is never called (`infer=False`), its key is a placeholder."""
    return {
        "vector_store": {
            "provider": "pgvector",
            "config": {
                "connection_string": conninfo,
                "collection_name": collection,
                "embedding_model_dims": c.DIM,
                "minconn": 1,
                "maxconn": 1,
            },
        },
        "embedder": {
            "provider": "openai",
            "config": {
                "model": "all-MiniLM-L6-v2",
                "embedding_dims": c.DIM,
                "api_key": "local",
                "openai_base_url": embed_url,
            },
        },
        "llm": {"provider": "openai", "config": {"api_key": "unused", "openai_base_url": embed_url}},
        "history_db_path": str(history),
    }


def open_mem0(data_dir: Path, config: dict[str, Any]) -> Any:
    mem0_environment(data_dir)
    import logging

    from mem0 import Memory

    logging.getLogger("mem0").setLevel(logging.ERROR)
    return Memory.from_config(config)


class TimedEmbed:
    """Wraps mem0's embedder: the seconds spent in each call (an HTTP request to the server above)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seconds = 0.0

    def embed(self, text: str, memory_action: Any = None) -> Any:
        t = time.perf_counter()
        try:
            return self.inner.embed(text, memory_action)
        finally:
            self.seconds += time.perf_counter() - t

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class LookupEmbed:
    """mem0's embedder answering from the precomputed vectors in process: throughput without embedding."""

    def __init__(self, inner: Any, vectors: dict[str, list[float]]) -> None:
        self.inner, self.vectors = inner, vectors

    def embed(self, text: str, memory_action: Any = None) -> Any:
        v = self.vectors.get(text)
        return v if v is not None else self.inner.embed(text, memory_action)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def mem0_conninfo(owner_url: str) -> str:
    from psycopg.conninfo import make_conninfo

    return make_conninfo(owner_url, dbname=MEM0_DB)


def create_mem0_database(owner_url: str) -> None:
    import psycopg

    with psycopg.connect(owner_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {MEM0_DB}")
        conn.execute(f"CREATE DATABASE {MEM0_DB}")


def load_mem0(mem: Any, corpus: Corpus, conninfo: str, adds: int, log_every: int = 1000) -> dict[str, Any]:
    """The first `adds` active memories through `Memory.add(..., infer=False)`, one at a time, as an
    integrator would load them (the load rate; the seconds in the embedding call counted apart); the rest
    by COPY into mem0's table, each row as its `add` writes it (same id kind, vector and payload keys,
    its own lemmatizer), without its history rows, which search does not read."""
    timed = TimedEmbed(mem.embedding_model)
    mem.embedding_model = timed
    sample = corpus.memories[:adds]
    lat: list[float] = []
    t0 = time.perf_counter()
    for i, (subject, content) in enumerate(sample, 1):
        t = time.perf_counter()
        mem.add(content, user_id=subject, infer=False)
        lat.append(time.perf_counter() - t)
        if i % log_every == 0:
            el = time.perf_counter() - t0
            print(f"  mem0: added {i:,}/{len(sample):,} in {el:.0f}s ({i / el:,.0f}/s)", flush=True)
    seconds = time.perf_counter() - t0
    mem.embedding_model = timed.inner
    report: dict[str, Any] = {
        "memories": len(corpus.memories),
        "added_one_at_a_time": len(sample),
        "seconds": round(seconds, 1),
        "per_s": round(len(sample) / seconds, 1) if seconds else None,
        "embed_seconds": round(timed.seconds, 1),
        "per_s_excluding_embed": round(len(sample) / (seconds - timed.seconds), 1)
        if seconds > timed.seconds
        else None,
        **c.summarize_ms(lat, "add_"),
    }
    rest = corpus.memories[adds:]
    if rest:
        print(f"  mem0: copying the other {len(rest):,} memories in its row format ...", flush=True)
        t = time.perf_counter()
        report["copy"] = copy_mem0_rows(conninfo, rest, corpus.vectors)
        report["copied"] = len(rest)
        report["copy_s"] = round(time.perf_counter() - t, 1)
    return report


def mem0_payload(subject: str, content: str, now: str) -> dict[str, Any]:
    """The payload mem0's `add(content, user_id=subject, infer=False)` stores (`Memory._create_memory`)."""
    from mem0.utils.lemmatization import lemmatize_for_bm25

    return {
        "user_id": subject,
        "role": "user",
        "data": content,
        "hash": hashlib.md5(content.encode()).hexdigest(),  # noqa: S324 - mem0's content hash, not security
        "created_at": now,
        "updated_at": now,
        "text_lemmatized": lemmatize_for_bm25(content),
    }


_INDEXDEF = re.compile(
    r"^CREATE (?P<unique>UNIQUE )?INDEX (?P<name>\S+) ON (?P<table>\S+) (?P<rest>USING .+)$"
)


def retarget_index(indexdef: str, source: str, target: str) -> tuple[str, str]:
    """An index definition as pg_indexes gives it, for another table: `mem0_hnsw_idx ON public.mem0 USING
    hnsw (...)` becomes `mem0_user_index_hnsw_idx ON public.mem0_user_index USING hnsw (...)` (same method,
    operator class, expressions). Returns the new index's name and its statement."""
    m = _INDEXDEF.match(indexdef.strip())
    if m is None:
        raise ValueError(f"not an index definition: {indexdef!r}")
    schema, dot, table = m["table"].rpartition(".")
    if table != source:
        raise ValueError(f"index of {m['table']}, not of {source}")
    name = m["name"]
    name = target + name[len(source) :] if name.startswith(source) else f"{target}_{name}"
    on = f"{schema}{dot}{target}"
    return name, f"CREATE {m['unique'] or ''}INDEX {name} ON {on} {m['rest']}"


def maintenance_work_mem_mb(rows: int, dim: int = c.DIM) -> int:
    """Enough memory to build an HNSW graph of `rows` vectors in one pass (pgvector slows down sharply
    once the graph no longer fits): the vector plus about 1 KiB of neighbour lists and tuple overhead
    per row, a quarter on top; at least PostgreSQL's 64 MB, at most 8 GiB."""
    need = rows * (dim * 4 + 1024) * 5 // 4
    return max(64, min(8192, -(-need // (1 << 20))))


def _indexes(conn: Any, table: str) -> list[tuple[str, str, bool]]:
    """(name, definition, backs a constraint) of each index of a table, by name."""
    return [
        (r[0], r[1], bool(r[2]))
        for r in conn.execute(
            "SELECT i.indexname, i.indexdef, EXISTS (SELECT 1 FROM pg_constraint k"
            " WHERE k.conindid = format('%%I.%%I', i.schemaname, i.indexname)::regclass)"
            " FROM pg_indexes i WHERE i.tablename = %s ORDER BY i.indexname",
            (table,),
        )
    ]


def _count(conn: Any, table: str) -> int:
    row = conn.execute(f"SELECT count(*) FROM {table}").fetchone()
    return int(row[0]) if row is not None else 0


def _set_build_memory(conn: Any, rows: int) -> None:
    conn.execute(f"SET maintenance_work_mem = '{maintenance_work_mem_mb(rows)}MB'")


def copy_mem0_rows(
    conninfo: str, rows: Sequence[tuple[str, str]], vectors: dict[str, np.ndarray]
) -> dict[str, Any]:
    """The rows by COPY into mem0's table, its indexes built after the COPY instead of maintained row
    by row: each index that backs no constraint (the HNSW and full-text ones mem0 creates) is dropped
    first and created again afterwards from its own definition in pg_indexes, so the table ends with
    exactly mem0's schema. The primary key stays in place."""
    import psycopg

    with psycopg.connect(conninfo, autocommit=True) as conn:
        sample = conn.execute(f"SELECT payload FROM {MEM0_DEFAULT} LIMIT 1").fetchone()
        now = datetime.now(UTC).isoformat()
        if sample is not None and set(sample[0]) != set(mem0_payload("s", "x", now)):
            raise RuntimeError(f"mem0 stores other payload keys than the copy writes: {sorted(sample[0])}")
        before = _indexes(conn, MEM0_DEFAULT)
        deferred = [(name, ddl) for name, ddl, constraint in before if not constraint]
        t = time.perf_counter()
        with conn.transaction():
            for name, _ in deferred:
                conn.execute(f"DROP INDEX {name}")
            with conn.cursor().copy(f"COPY {MEM0_DEFAULT} (id, vector, payload) FROM STDIN") as copy:
                for subject, content in rows:
                    vec = "[" + ",".join(repr(float(x)) for x in vectors[content]) + "]"
                    copy.write_row((str(uuid.uuid4()), vec, json.dumps(mem0_payload(subject, content, now))))
        copy_s = time.perf_counter() - t
        total = _count(conn, MEM0_DEFAULT)
        _set_build_memory(conn, total)
        builds: dict[str, float] = {}
        for name, ddl in deferred:
            print(f"  mem0: building {name} on {total:,} rows ...", flush=True)
            t = time.perf_counter()
            conn.execute(ddl)
            builds[name] = round(time.perf_counter() - t, 1)
        after = _indexes(conn, MEM0_DEFAULT)
    if after != before:
        raise RuntimeError(f"mem0's indexes changed in the copy: {before} -> {after}")
    return {
        "copy_s": round(copy_s, 1),
        "index_build_s": builds,
        "maintenance_work_mem_mb": maintenance_work_mem_mb(total),
        "indexes": [ddl for _, ddl, _ in after],
    }


def add_user_index(conninfo: str) -> dict[str, Any]:
    """A copy of mem0's table with the same indexes (each created after the rows are in, from mem0's own
    definition in pg_indexes; its primary key as a primary key), plus the per-user B-tree index mem0 does
    not make."""
    import psycopg

    t = time.perf_counter()
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f"DROP TABLE IF EXISTS {MEM0_INDEXED}")
        conn.execute(f"CREATE TABLE {MEM0_INDEXED} (LIKE {MEM0_DEFAULT} INCLUDING DEFAULTS)")
        conn.execute(f"INSERT INTO {MEM0_INDEXED} SELECT * FROM {MEM0_DEFAULT}")
        copied = time.perf_counter() - t
        total = _count(conn, MEM0_INDEXED)
        _set_build_memory(conn, total)
        builds: dict[str, float] = {}
        for _, indexdef, constraint in _indexes(conn, MEM0_DEFAULT):
            name, ddl = retarget_index(indexdef, MEM0_DEFAULT, MEM0_INDEXED)
            print(f"  mem0: building {name} on {total:,} rows ...", flush=True)
            t = time.perf_counter()
            conn.execute(ddl)
            if constraint:  # mem0's only constraint is its primary key
                conn.execute(
                    f"ALTER TABLE {MEM0_INDEXED} ADD CONSTRAINT {name} PRIMARY KEY USING INDEX {name}"
                )
            builds[name] = round(time.perf_counter() - t, 1)
        t = time.perf_counter()
        conn.execute(f"CREATE INDEX {MEM0_INDEXED}_user_idx ON {MEM0_INDEXED} ((payload->>'user_id'))")
        index_s = time.perf_counter() - t
        conn.execute(f"ANALYZE {MEM0_DEFAULT}")
        conn.execute(f"ANALYZE {MEM0_INDEXED}")
        indexes = {
            table: [
                r[0] for r in conn.execute("SELECT indexdef FROM pg_indexes WHERE tablename = %s", (table,))
            ]
            for table in (MEM0_DEFAULT, MEM0_INDEXED)
        }
    return {
        "copy_s": round(copied, 1),
        "index_build_s": builds,
        "user_index_build_s": round(index_s, 2),
        "maintenance_work_mem_mb": maintenance_work_mem_mb(total),
        "indexes": indexes,
    }


def mem0_plans(conninfo: str, vec: np.ndarray, subject: str) -> dict[str, list[str]]:
    """EXPLAIN of mem0's semantic search statement on each table."""
    import psycopg

    out = {}
    with psycopg.connect(conninfo, autocommit=True) as conn:
        for table in (MEM0_DEFAULT, MEM0_INDEXED):
            rows = conn.execute(
                f"EXPLAIN SELECT id, vector <=> %s::vector AS distance, payload FROM {table}"
                " WHERE payload->>%s = %s ORDER BY distance LIMIT %s",
                (vec.tolist(), "user_id", subject, 60),
            ).fetchall()
            out[table] = [r[0] for r in rows]
    return out


def mem0_search(mem: Any, q: Query) -> list[str]:
    found = mem.search(q.text, filters={"user_id": q.subject}, top_k=TOP_K)
    return [r["memory"] for r in found["results"]]


# --------------------------------------------------------------------------- mem0 client processes
def _mem0_worker(
    idx: int,
    data_dir: str,
    configs: dict[str, dict[str, Any]],
    queries: list[tuple[str, str]],
    qvecs: dict[str, list[float]],
    cmd_q: Any,
    out_q: Any,
) -> None:
    mems = {}
    for name, config in configs.items():
        config = {**config, "history_db_path": str(Path(data_dir) / f"mem0-history-{name}-{idx}.db")}
        mems[name] = open_mem0(Path(data_dir), config)
        mems[name].embedding_model = LookupEmbed(mems[name].embedding_model, qvecs)
    rng = random.Random(2000 + idx)  # noqa: S311 - synthetic data, not security
    out_q.put(("ready", idx))
    while True:
        cmd = cmd_q.get()
        if cmd is None:
            break
        name, start_at, seconds = cmd
        mem_search = mems[name].search

        def prepare(mem_search: Any = mem_search) -> Any:
            subject, text = queries[rng.randrange(len(queries))]
            return lambda: mem_search(text, filters={"user_id": subject}, top_k=TOP_K)

        lat, errors, cpu = c.timed_loop(prepare, start_at, seconds)
        out_q.put(("done", idx, lat, errors, cpu))


class Mem0Pool:
    """N mem0 client processes (spawned once), each with a Memory per variant and one connection each."""

    def __init__(
        self,
        n: int,
        data_dir: Path,
        configs: dict[str, dict[str, Any]],
        queries: list[Query],
        vectors: dict[str, np.ndarray],
    ) -> None:
        pairs = [(q.subject, q.text) for q in queries]
        qvecs = {q.text: vectors[q.text].tolist() for q in queries}
        self.pool = c.ProcessPool(
            n, _mem0_worker, lambda i: (i, str(data_dir), configs, pairs, qvecs), data_dir
        )

    def run(self, n: int, name: str, seconds: float) -> dict[str, Any]:
        r = self.pool.timed(n, lambda start_at: (name, start_at, seconds), seconds)
        done = max(1, len(r.latencies))
        return {
            "clients": n,
            "system": name,
            "seconds": seconds,
            "searches": len(r.latencies),
            "errors": r.errors,
            "qps": round(len(r.latencies) / seconds, 1),
            **c.summarize_ms(r.latencies),
            "machine_busy_pct": r.machine_busy_pct,
            "client_cpu_ms_per_search": round(r.client_cpu_s / done * 1000, 2),
            "server_cpu_ms_per_search": round(r.server_cpu_s / done * 1000, 2),
        }

    def close(self) -> None:
        self.pool.close()


# --------------------------------------------------------------------------- the service
def service_load_rate(
    container: Any, data_dir: Path, records: int, seed: int, first_subject: int, batch: int = 100
) -> dict[str, Any]:
    """The service's write path with precomputed vectors, on subjects the corpus does not have: one
    `WriteGateway.write` at a time (as `memory bench write` drives it), then the same number of records
    through `write_batch`, `batch` to a transaction (the path imports and session extraction take)."""
    from collections import Counter

    from memory_bench.write import make_writes, timed_run

    p = c.principal(c.TENANT)
    nrng = np.random.default_rng(seed)
    warm = make_writes(200, 50, seed + 99, first_subject=first_subject + 1_000_000)
    timed_run(container, p, warm, c.unit_vectors(nrng, len(warm)), 1, data_dir)
    writes = make_writes(records, max(1, records // 20), seed, first_subject=first_subject)
    out: dict[str, Any] = {
        "single": timed_run(container, p, writes, c.unit_vectors(nrng, len(writes)), 1, data_dir)
    }
    if not hasattr(container.gateway, "write_batch"):
        return out
    more = make_writes(records, max(1, records // 20), seed + 1, first_subject=first_subject + 2_000_000)
    vecs = c.unit_vectors(nrng, len(more))
    decisions: Counter[str] = Counter()
    busy = c.CpuSampler()
    t0 = time.perf_counter()
    for i in range(0, len(more), batch):
        for r in container.gateway.write_batch(p, more[i : i + batch], embeddings=list(vecs[i : i + batch])):
            decisions[r.decision.value] += 1
    seconds = time.perf_counter() - t0
    out["batched"] = {
        "records": len(more),
        "batch": batch,
        "seconds": round(seconds, 2),
        "records_per_s": round(len(more) / seconds, 1),
        "admitted_per_s": round(decisions.get("admitted", 0) / seconds, 1),
        "decisions": dict(decisions),
        "machine_busy_pct": busy.busy_pct(),
    }
    return out


def _broker_contents(
    container: Any, principal: Any, q: Query, vec: np.ndarray
) -> tuple[list[str], list[str]]:
    """What the broker returns, in the order of its context (sections: verified facts first) and by score."""
    from agent_memory.services.retrieval import RetrieveRequest

    r = container.broker.retrieve(
        principal, RetrieveRequest(subject_id=q.subject, query=q.text, top_k=TOP_K), query_embedding=vec
    )
    by_score = sorted(r.memories, key=lambda m: -m["score"])
    return [m["content"] for m in r.memories], [m["content"] for m in by_score]


# --------------------------------------------------------------------------- the bench
def run_peer_bench(
    data_dir: Path,
    *,
    subjects: int = 2500,
    per_subject: int = 40,
    queries: int = 2000,
    seconds: float = 10.0,
    clients: tuple[int, ...] = (1, 4, 16),
    write_records: int = 2000,
    mem0_adds: int = 2000,
    seed: int = 7,
) -> dict[str, Any]:
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder
    from agent_memory.domain.enums import Role
    from memory_bench.retrieve import ClientPool, all_gists, embed_all, warm_os_cache

    data_dir = Path(data_dir)
    c.reset_data_dir(data_dir)
    mem0_environment(data_dir)
    report: dict[str, Any] = {
        "bench": "peer",
        "peer": f"mem0ai {MEM0_VERSION} (pgvector, infer=False, telemetry off)",
        "records": subjects * per_subject,
        "subjects": subjects,
        "per_subject": per_subject,
        "machine_before": c.machine_state(),
    }
    embedder = MiniLMOnnxEmbedder()
    container = c.build(data_dir, embedder=embedder)
    url = c.owner_url(container)
    t = time.perf_counter()
    gists = embed_all(embedder, all_gists())
    report["embed_gists_s"] = round(time.perf_counter() - t, 1)
    corpus = Corpus()

    def vectors(g: np.random.Generator, plans: list[dict[str, Any]]) -> np.ndarray:
        vecs = c.near(np.stack([gists[p["gist"]] for p in plans]), g, noise=0.35)
        corpus.capture(plans, vecs)
        return vecs

    print(f"service: bulk-loading {subjects * per_subject:,} memories ...", flush=True)
    report["service_bulk_load"] = c.load_dataset(
        container,
        subjects=subjects,
        per_subject=per_subject,
        seed=seed,
        hnsw=False,
        vectors=vectors,
        sentences=True,
    )
    qs = make_queries(corpus, queries, seed + 1)
    t = time.perf_counter()
    qvec_map = embed_all(embedder, [q.text for q in qs])
    report["embed_queries_s"] = round(time.perf_counter() - t, 1)
    corpus.vectors.update(qvec_map)
    report["queries"] = len(qs)
    report["mem0_memories"] = len(corpus.memories)

    conninfo = mem0_conninfo(url)
    create_mem0_database(url)
    with EmbeddingServer(corpus.vectors) as server:
        configs = {
            name: mem0_config(conninfo, name, server.url, data_dir / f"mem0-history-{name}.db")
            for name in (MEM0_DEFAULT, MEM0_INDEXED)
        }
        mem_default = open_mem0(data_dir, configs[MEM0_DEFAULT])
        print(
            f"mem0: {min(mem0_adds, len(corpus.memories)):,} of {len(corpus.memories):,} memories one at a time ...",
            flush=True,
        )
        busy = c.CpuSampler()
        report["mem0_load"] = load_mem0(mem_default, corpus, conninfo, mem0_adds)
        report["mem0_load"]["machine_busy_pct"] = busy.busy_pct()
        print(f"  {report['mem0_load']}", flush=True)
        report["mem0_user_index"] = add_user_index(conninfo)
        mem_indexed = open_mem0(data_dir, configs[MEM0_INDEXED])
        report["mem0_plans"] = mem0_plans(conninfo, qvec_map[qs[0].text], qs[0].subject)

        print(f"service: {write_records:,} writes through the gateway ...", flush=True)
        report["service_load"] = service_load_rate(
            container, data_dir, write_records, seed + 5, subjects + 10
        )
        print(f"  {report['service_load']}", flush=True)
        report["os_cache_warm_s"] = warm_os_cache(data_dir)

        # Single client, the three systems interleaved query by query.
        principal = c.principal(c.TENANT, Role.AGENT)
        timers = {
            MEM0_DEFAULT: TimedEmbed(mem_default.embedding_model),
            MEM0_INDEXED: TimedEmbed(mem_indexed.embedding_model),
        }
        mem_default.embedding_model = timers[MEM0_DEFAULT]
        mem_indexed.embedding_model = timers[MEM0_INDEXED]
        mems = {MEM0_DEFAULT: mem_default, MEM0_INDEXED: mem_indexed}

        def ask(system: str, q: Query) -> tuple[list[str], list[str]]:
            if system == SERVICE:
                return _broker_contents(container, principal, q, qvec_map[q.text])
            found = mem0_search(mems[system], q)  # in score order
            return found, found

        for q in qs[: min(200, len(qs))]:  # warm-up, not measured
            for system in SYSTEMS:
                ask(system, q)
        lat: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        lat_embed: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        ranks: dict[str, list[int | None]] = {s: [] for s in SYSTEMS}
        score_ranks: dict[str, list[int | None]] = {s: [] for s in SYSTEMS}
        returned: dict[str, list[int]] = {s: [] for s in SYSTEMS}
        print(f"single client: {len(qs):,} queries x {len(SYSTEMS)} systems ...", flush=True)
        busy = c.CpuSampler()
        for i, q in enumerate(qs):
            for system in SYSTEMS if i % 2 == 0 else SYSTEMS[::-1]:
                e0 = timers[system].seconds if system in timers else 0.0
                t = time.perf_counter()
                contents, by_score = ask(system, q)
                whole = time.perf_counter() - t
                embed_s = (timers[system].seconds - e0) if system in timers else 0.0
                lat[system].append(whole - embed_s)
                lat_embed[system].append(whole)
                ranks[system].append(rank_of(q.target, contents))
                score_ranks[system].append(rank_of(q.target, by_score))
                returned[system].append(len(contents))
        report["single_client_machine_busy_pct"] = busy.busy_pct()
        report["embedding_server_misses"] = server.misses

    systems: dict[str, dict[str, Any]] = {}
    for s in SYSTEMS:
        systems[s] = {
            **c.summarize_ms(lat[s]),
            "p95_ms_with_embed": c.summarize_ms(lat_embed[s])["p95_ms"] if s != SERVICE else None,
            "p50_ms_with_embed": c.summarize_ms(lat_embed[s])["p50_ms"] if s != SERVICE else None,
            "recall_at_1": recall_at(ranks[s], 1),
            "recall_at_5": recall_at(ranks[s], 5),
            "recall_at_1_by_score": recall_at(score_ranks[s], 1),
            "returned_median": c.percentile(returned[s], 50),
            "returned_none_pct": round(100 * sum(1 for n in returned[s] if n == 0) / max(1, len(qs)), 1),
        }
    systems[SERVICE]["load_per_s"] = report["service_load"]["single"]["records_per_s"]
    systems[SERVICE]["admitted_per_s"] = report["service_load"]["single"]["admitted_per_s"]
    if "batched" in report["service_load"]:
        systems[SERVICE]["load_per_s_batched"] = report["service_load"]["batched"]["records_per_s"]
    for s in (MEM0_DEFAULT, MEM0_INDEXED):
        systems[s]["load_per_s"] = report["mem0_load"]["per_s_excluding_embed"]
        systems[s]["load_per_s_with_embed"] = report["mem0_load"]["per_s"]

    # Throughput: both pools of client processes up at once, the three systems taking turns at each
    # client count (the order flipped from one count to the next), so drift hits each alike.
    print("throughput runs ...", flush=True)
    qtexts = [q.text for q in qs]
    qvecs = np.stack([qvec_map[t] for t in qtexts])
    workload = [(q.subject, i) for i, q in enumerate(qs)]
    runs: list[dict[str, Any]] = []
    with EmbeddingServer(corpus.vectors) as server, contextlib.ExitStack() as pools:
        configs = {
            name: mem0_config(conninfo, name, server.url, data_dir / f"mem0-history-{name}.db")
            for name in (MEM0_DEFAULT, MEM0_INDEXED)
        }
        pool = ClientPool(max(clients), url, data_dir, workload, qtexts, qvecs)
        pools.callback(pool.close)
        mpool = Mem0Pool(max(clients), data_dir, configs, qs, qvec_map)
        pools.callback(mpool.close)
        for k, n in enumerate(clients):
            for system in SYSTEMS if k % 2 == 0 else SYSTEMS[::-1]:
                if system == SERVICE:
                    runs.append({"system": SERVICE, **pool.run(n, "precomputed", seconds)})
                else:
                    runs.append(mpool.run(n, system, seconds))
                print(f"  {runs[-1]}", flush=True)
    for r in runs:
        systems[r["system"]][f"qps_{r['clients']}"] = r["qps"]
        systems[r["system"]][f"p95_ms_{r['clients']}"] = r["p95_ms"]
    report["throughput"] = runs
    report["systems"] = systems
    report["ratios"] = {s: peer_ratios(systems[SERVICE], systems[s]) for s in (MEM0_DEFAULT, MEM0_INDEXED)}
    report["client_model"] = (
        "processes: each client its own process with one connection (the service: a container with a pool "
        "of 1; mem0: a Memory per variant, pgvector pool of 1); PostgreSQL and all clients share the CPUs"
    )
    report["disk_gib"] = c.dir_size_gib(data_dir / "pg")
    report["machine_after"] = c.machine_state()
    container.close()
    return report


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(
        prog="memory bench peer",
        description="This service and mem0 OSS side by side on one corpus and one PostgreSQL. " + SETUP_HINT,
    )
    p.add_argument("--data-dir", type=Path, help=c.DATA_DIR_HELP)
    p.add_argument("--subjects", type=int, default=2500)
    p.add_argument("--per-subject", type=int, default=40)
    p.add_argument("--queries", type=int, default=2000, help="paraphrased queries, each about one memory")
    p.add_argument("--seconds", type=float, default=10.0, help="duration of each throughput run")
    p.add_argument("--clients", default="1,4,16")
    p.add_argument("--write-records", type=int, default=2000, help="records of the service's write-path rate")
    p.add_argument(
        "--mem0-adds",
        type=int,
        default=2000,
        help="memories mem0 adds one at a time (its load rate); the rest by COPY",
    )
    p.add_argument("--keep", action="store_true", help="leave the data dir (default: delete it when done)")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--json")
    a = p.parse_args(argv)
    if not mem0_installed():
        raise Mem0Missing(SETUP_HINT)
    a.data_dir = c.data_dir_or_temporary(a.data_dir, "peer")
    try:
        with contextlib.redirect_stdout(sys.stderr):  # progress; the report alone goes to stdout
            report = run_peer_bench(
                a.data_dir,
                subjects=a.subjects,
                per_subject=a.per_subject,
                queries=a.queries,
                seconds=a.seconds,
                clients=tuple(int(x) for x in a.clients.split(",")),
                write_records=a.write_records,
                mem0_adds=a.mem0_adds,
                seed=a.seed,
            )
        report["command"] = "memory bench peer " + " ".join(argv)
        report["table"] = side_by_side(report)
        return report, a.json
    finally:
        c.stop_server(a.data_dir, delete=not a.keep)


class Mem0Missing(RuntimeError):
    """mem0 is not installed: the optional `peer` group was not synced."""
