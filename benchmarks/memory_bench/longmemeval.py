"""`memory bench longmemeval`: LongMemEval-S through the real write path and broker.

Each question is its own subject; its haystack's user turns are written as
episodic memories (dated by their session) under the `benchmark` policy (no
TTLs: the dates are years old), then the question is asked as of its
question_date. Scoring follows the data's README: skip `_abs` questions; turn
gold = user turns with has_answer; session gold = answer_session_ids;
recall_all@k (every gold item in the first k), recall_any@k (at least one), ndcg_any@k, and
knowledge-update ordering (newer evidence above older), overall and per question type. Any file of the same format works (`--data`).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MAX_CONTENT_CHARS, MemoryWrite, Principal
from agent_memory.progress import ProgressBar, ProgressFactory, terminal_progress
from agent_memory.services.retrieval import RetrievalBroker, RetrieveRequest

TENANT = "longmemeval"
# Memories per write_many call: a whole haystack (about 200-250 turns) in one or two, so the
# embedder's length-sorted mini-batches hold texts of near-equal length (1.5x the rate of 64).
INGEST_BATCH = 256


def parse_date(raw: str) -> datetime:
    """'2023/05/20 (Sat) 02:21' -> aware datetime."""
    day, _, clock = raw.partition(" (")
    hhmm = clock.split(") ")[-1] if ")" in clock else "00:00"
    return datetime.strptime(f"{day} {hhmm}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def load_questions(path: str | Path) -> Iterator[dict[str, Any]]:
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:  # type: ignore[operator]
        for line in f:
            if line.strip():
                yield json.loads(line)


def recall_all(ranked: list[str], gold: set[str], k: int) -> float:
    return 1.0 if gold and gold <= set(ranked[:k]) else 0.0


def recall_any(ranked: list[str], gold: set[str], k: int) -> float:
    return 1.0 if gold & set(ranked[:k]) else 0.0


def ndcg_any(ranked: list[str], gold: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, x in enumerate(ranked[:k]) if x in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def dedupe(seq: list[str]) -> list[str]:
    return list(dict.fromkeys(seq))


@dataclass
class Scores:
    """Means per metric over the questions the metric applies to (a metric given as None is skipped:
    turn metrics for a question whose evidence is only in assistant turns, which are not indexed)."""

    n: int = 0
    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, **values: float | None) -> None:
        self.n += 1
        for k, v in values.items():
            if v is not None:
                self.sums[k] += v
                self.counts[k] += 1

    def means(self) -> dict[str, float]:
        return {k: round(v / self.counts[k], 4) for k, v in self.sums.items()}


def run(
    data: str,
    *,
    limit: int | None = None,
    data_dir: str | None = None,
    top_k: int = 50,
    container: Any = None,
    reuse: bool = False,
    embedding_cache: str | None = None,
    details: list[dict[str, Any]] | None = None,
    ingest_only: bool = False,
    progress: ProgressFactory | None = None,
) -> dict[str, Any]:
    """`ingest_only` writes the haystacks and asks nothing (the ingest rate alone); `progress`
    draws a bar over the haystack memories written."""
    from agent_memory.bootstrap import build_container
    from agent_memory.config import Settings

    own = container is None
    if own:
        container = build_container(
            Settings(
                data_dir=Path(data_dir or tempfile.mkdtemp(prefix="lme-")),
                pool_max_size=4,
                embedder_threads=2,
            )
        )
    cache_report: dict[str, Any] | None = None
    if embedding_cache:
        cached = CachedEmbedder.load(container.embedder, Path(embedding_cache))
        container.embedder = container.gateway.embedder = cached
        cache_report = cached.report
    container.policies.set(TENANT, "benchmark", actor="bench")
    agent = Principal(sub="bench", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
    overall = Scores()
    by_type: defaultdict[str, Scores] = defaultdict(Scores)
    ku_pairs = ku_right = 0
    truncated = 0
    t_ingest = t_query = 0.0
    questions = questions_reused = ingested = 0
    bar = progress("haystack memories", total=None, unit="memory") if progress else None
    for q in load_questions(data):
        if q["question_id"].endswith("_abs"):
            continue
        if limit is not None and questions >= limit:
            break
        questions += 1
        subject = f"q-{q['question_id']}"
        turns: list[tuple[str, int, str, datetime, bool]] = []
        for sid, date, session in zip(
            q["haystack_session_ids"], q["haystack_dates"], q["haystack_sessions"], strict=True
        ):
            when = parse_date(date)
            for i, turn in enumerate(session):
                if turn["role"] == "user" and turn["content"].strip():
                    turns.append((sid, i, turn["content"], when, bool(turn.get("has_answer"))))
        turns.sort(key=lambda x: x[3])  # ingest in date order
        if cache_report is not None and "verified_sample" not in cache_report:
            container.embedder.verify([t[2] for t in turns])
        t0 = time.perf_counter()
        texts = [t[2][:MAX_CONTENT_CHARS] for t in turns]
        if reuse and _already_ingested(container, subject):
            memory_turns, memory_session = _mapping_from_store(container, subject, turns, texts)
            questions_reused += 1
        else:
            memory_turns, memory_session = _ingest(container, agent, subject, turns, texts, bar)
            truncated += sum(len(t[2]) > MAX_CONTENT_CHARS for t in turns)
            ingested += len(turns)
        t_ingest += time.perf_counter() - t0
        if ingest_only:
            continue

        t1 = time.perf_counter()
        qdate = parse_date(q["question_date"])
        broker = RetrievalBroker(
            container.store,
            container.embedder,
            container.policies,
            container.system_of_record,
            clock=_fixed_clock(qdate),
        )
        result = broker.retrieve(agent, RetrieveRequest(subject_id=subject, query=q["question"], top_k=top_k))
        t_query += time.perf_counter() - t1
        ranked_ids = [m["id"] for m in sorted(result.memories, key=lambda m: -m["score"])]
        ranked_turns = [t for mid in ranked_ids for t in memory_turns.get(mid, [])]
        ranked_sessions = dedupe([memory_session[mid] for mid in ranked_ids if mid in memory_session])
        gold_turns = {f"{sid}#{i}" for sid, i, _, _, gold in turns if gold}
        gold_sessions = set(q["answer_session_ids"])
        has_turn_gold = bool(gold_turns)
        scores = {
            "turn_recall_all_at_5": recall_all(ranked_turns, gold_turns, 5) if has_turn_gold else None,
            "turn_recall_all_at_10": recall_all(ranked_turns, gold_turns, 10) if has_turn_gold else None,
            "session_recall_all_at_5": recall_all(ranked_sessions, gold_sessions, 5),
            "session_recall_all_at_10": recall_all(ranked_sessions, gold_sessions, 10),
            "turn_recall_any_at_5": recall_any(ranked_turns, gold_turns, 5) if has_turn_gold else None,
            "turn_recall_any_at_10": recall_any(ranked_turns, gold_turns, 10) if has_turn_gold else None,
            "session_recall_any_at_5": recall_any(ranked_sessions, gold_sessions, 5),
            "session_recall_any_at_10": recall_any(ranked_sessions, gold_sessions, 10),
            "turn_ndcg_any_at_5": ndcg_any(ranked_turns, gold_turns, 5) if has_turn_gold else None,
            "session_ndcg_any_at_5": ndcg_any(ranked_sessions, gold_sessions, 5),
        }
        overall.add(**scores)
        by_type[q["question_type"]].add(**scores)
        if q["question_type"] == "knowledge-update":
            dated = sorted(
                {
                    (parse_date(d), s)
                    for s, d in zip(q["haystack_session_ids"], q["haystack_dates"], strict=True)
                    if s in gold_sessions
                }
            )
            if len(dated) == 2:
                older, newer = dated[0][1], dated[1][1]
                pos = {s: i for i, s in enumerate(ranked_sessions)}
                ku_pairs += 1
                ku_right += int(pos.get(newer, 10**6) < pos.get(older, 10**6))
                scores["ku_newer_rank"], scores["ku_older_rank"] = pos.get(newer), pos.get(older)
        if details is not None:
            details.append({"question_id": q["question_id"], "type": q["question_type"], **scores})
    if bar is not None:
        bar.close()
    if own:
        container.close()
    means = overall.means()
    return {
        "data": str(data),
        "questions": overall.n,
        "questions_with_user_turn_evidence": overall.counts.get("turn_recall_all_at_5", 0),
        **means,
        "ku_ordering": round(ku_right / ku_pairs, 4) if ku_pairs else None,
        "ku_pairs": ku_pairs,
        "by_type": {
            k: {
                "questions": v.n,
                "questions_with_user_turn_evidence": v.counts.get("turn_recall_all_at_5", 0),
                **v.means(),
            }
            for k, v in sorted(by_type.items())
        },
        "turns_truncated_to_max_content": truncated,
        "ingest_seconds": round(t_ingest, 1),
        "haystacks": questions,
        "ingested_memories": ingested,
        "ingest_memories_per_s": round(ingested / t_ingest, 1) if ingested and t_ingest else None,
        "query_ms_mean": round(1000 * t_query / max(overall.n, 1), 2),
        "top_k": top_k,
        "questions_reused_from_data_dir": questions_reused,
        "embedding_cache": cache_report,
    }


def _ingest(
    container: Any,
    agent: Principal,
    subject: str,
    turns: list[Any],
    texts: list[str],
    bar: ProgressBar | None = None,
) -> tuple[dict[str, list[str]], dict[str, str]]:
    writes = [
        MemoryWrite(
            subject_id=subject,
            type="episode",
            content=text,
            source={"kind": "customer_confirmed"},
            session_id=sid,
            effective_at=when,
            confidence=0.9,
        )
        for (sid, _, _, when, _), text in zip(turns, texts, strict=True)
    ]
    memory_turns: dict[str, list[str]] = defaultdict(list)
    memory_session: dict[str, str] = {}
    for start in range(0, len(writes), INGEST_BATCH):  # each chunk and its sentences: one embedder call
        end = start + INGEST_BATCH
        results = container.gateway.write_many(agent, writes[start:end])
        for (sid, i, _, _, _), res in zip(turns[start:end], results, strict=True):
            if res.memory is not None:
                memory_turns[res.memory.id].append(f"{sid}#{i}")
                memory_session.setdefault(res.memory.id, sid)
        if bar is not None:
            bar.update(len(results))
    return memory_turns, memory_session


def _already_ingested(container: Any, subject: str) -> bool:
    with container.db.tenant_transaction(TENANT) as conn:
        row = conn.execute(
            "SELECT count(*) AS n FROM memory_records WHERE subject_id = %s", (subject,)
        ).fetchone()
    return bool(row and row["n"])


def _mapping_from_store(
    container: Any, subject: str, turns: list[Any], texts: list[str]
) -> tuple[dict[str, list[str]], dict[str, str]]:
    """`--reuse`: rank again over a data dir an earlier run ingested (ranking changes, same data)."""
    by_key: dict[tuple[str, str], list[str]] = defaultdict(list)
    for (sid, i, _, _, _), text in zip(turns, texts, strict=True):
        by_key[(sid, text)].append(f"{sid}#{i}")
    memory_turns: dict[str, list[str]] = defaultdict(list)
    memory_session: dict[str, str] = {}
    with container.db.tenant_transaction(TENANT) as conn:
        rows = conn.execute(
            "SELECT id, session_id, content FROM memory_records WHERE subject_id = %s AND status = 'active'",
            (subject,),
        ).fetchall()
    for r in rows:
        memory_turns[r["id"]] += by_key.get((r["session_id"], r["content"]), [])
        memory_session[r["id"]] = r["session_id"]
    return memory_turns, memory_session


class CachedEmbedder:
    """Vectors the same model computed before (`<name>_keys.json`: sha1 of each text, beside
    `<name>_emb.npy`), so a re-run does not spend an hour embedding the same 170,000 texts.
    Misses go to the real embedder. Refused unless a sample of cached vectors matches what the
    real embedder computes now (cosine >= 0.999): a cache from another model cannot slip in."""

    def __init__(self, inner: Any, table: dict[str, np.ndarray]) -> None:
        self.inner = inner
        self.name = inner.name
        self.dimension = inner.dimension
        self.table = table
        self.hits = self.misses = 0
        self.report: dict[str, Any] = {"vectors": len(table)}

    @classmethod
    def load(cls, inner: Any, directory: Path) -> CachedEmbedder:
        table: dict[str, np.ndarray] = {}
        for keys_file in sorted(directory.glob("*_keys.json")):
            vectors = np.load(keys_file.with_name(keys_file.name.replace("_keys.json", "_emb.npy")))
            keys = json.loads(keys_file.read_text())
            if len(keys) != len(vectors) or vectors.shape[1] != inner.dimension:
                raise ValueError(
                    f"{keys_file}: keys and vectors do not line up with a {inner.dimension}-d model"
                )
            table.update(zip(keys, vectors, strict=True))
        return cls(inner, table)

    def verify(self, texts: list[str]) -> None:
        known = [t for t in texts if _key(t) in self.table][:16]
        if not known:
            raise ValueError("the embedding cache holds none of the benchmark's texts")
        fresh = self.inner.embed(known)
        cosines = [float(self.table[_key(t)] @ v) for t, v in zip(known, fresh, strict=True)]
        self.report["verified_sample"] = len(known)
        self.report["min_cosine_to_fresh"] = round(min(cosines), 5)
        if min(cosines) < 0.999:
            raise ValueError(f"the embedding cache was made by another model (cosine {min(cosines):.4f})")

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        missing = []
        for i, t in enumerate(texts):
            v = self.table.get(_key(t))
            if v is None:
                missing.append(i)
            else:
                out[i] = v
        if missing:
            out[missing] = self.inner.embed([texts[i] for i in missing])
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        self.report.update(hits=self.hits, misses=self.misses)
        return out


def _key(text: str) -> str:
    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()


def _fixed_clock(moment: datetime) -> Callable[[], datetime]:
    """The broker asked 'as of' a question's date (recency decay is relative to it)."""
    return lambda: moment


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="memory bench longmemeval")
    p.add_argument("--data", required=True, help="the LongMemEval-S file (.json, .jsonl or .jsonl.gz)")
    p.add_argument("--limit", type=int, help="only the first N questions (smoke runs)")
    p.add_argument("--data-dir", help="where the benchmark's embedded PostgreSQL lives (default: a temp dir)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="questions already ingested in --data-dir are only asked again (ranking experiments)",
    )
    p.add_argument(
        "--embedding-cache",
        help="directory of <name>_keys.json (sha1 of each text) + <name>_emb.npy vectors from the same "
        "model; checked against fresh vectors before use, misses are embedded",
    )
    p.add_argument(
        "--ingest-only",
        action="store_true",
        help="write the haystacks and ask nothing: the ingest rate (memories/s) alone",
    )
    p.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="a progress bar on stderr (default: only when stderr is a terminal)",
    )
    p.add_argument("--details", help="write one JSON line per question (its scores and evidence ranks) here")
    p.add_argument("--json")
    a = p.parse_args(argv)
    details: list[dict[str, Any]] | None = [] if a.details else None
    report = run(
        a.data,
        limit=a.limit,
        data_dir=a.data_dir,
        reuse=a.reuse,
        embedding_cache=a.embedding_cache,
        details=details,
        ingest_only=a.ingest_only,
        progress=terminal_progress(a.progress),
    )
    if a.details and details is not None:
        Path(a.details).write_text("".join(json.dumps(d) + "\n" for d in details))
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return report
