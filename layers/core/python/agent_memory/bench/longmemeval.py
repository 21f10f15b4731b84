"""`memory bench longmemeval`: LongMemEval-S through the real write path and broker.

Each question is its own subject; its haystack's user turns are written as
episodic memories (dated by their session) under the `benchmark` policy (no
TTLs: the dates are years old), then the question is asked as of its
question_date. Scoring follows the data's README: skip `_abs` questions; turn
gold = user turns with has_answer; session gold = answer_session_ids;
recall_all@k, ndcg_any@k, and knowledge-update ordering (newer evidence above
older). Any file of the same format works (`--data`).
"""

from __future__ import annotations

import argparse
import gzip
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

from agent_memory.domain.enums import Role
from agent_memory.domain.records import MAX_CONTENT_CHARS, MemoryWrite, Principal
from agent_memory.services.retrieval import RetrievalBroker, RetrieveRequest

TENANT = "longmemeval"
DEFAULT_DATA = "../shared/data/longmemeval_s_dev.jsonl.gz"


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


def ndcg_any(ranked: list[str], gold: set[str], k: int) -> float:
    dcg = sum(1.0 / math.log2(i + 2) for i, x in enumerate(ranked[:k]) if x in gold)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(len(gold), k)))
    return dcg / ideal if ideal else 0.0


def dedupe(seq: list[str]) -> list[str]:
    return list(dict.fromkeys(seq))


@dataclass
class Scores:
    n: int = 0
    sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, **values: float) -> None:
        self.n += 1
        for k, v in values.items():
            self.sums[k] += v

    def means(self) -> dict[str, float]:
        return {k: round(v / self.n, 4) for k, v in self.sums.items()} if self.n else {}


def run(
    data: str,
    *,
    limit: int | None = None,
    data_dir: str | None = None,
    top_k: int = 10,
    container: Any = None,
    reuse: bool = False,
) -> dict[str, Any]:
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
    container.policies.set(TENANT, "benchmark")
    agent = Principal(sub="bench", tenant_id=TENANT, roles=frozenset({Role.AGENT}))
    overall = Scores()
    by_type: defaultdict[str, Scores] = defaultdict(Scores)
    ku_pairs = ku_right = 0
    truncated = 0
    t_ingest = t_query = 0.0
    questions = questions_reused = 0
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
        t0 = time.perf_counter()
        texts = [t[2][:MAX_CONTENT_CHARS] for t in turns]
        if reuse and _already_ingested(container, subject):
            memory_turns, memory_session = _mapping_from_store(container, subject, turns, texts)
            questions_reused += 1
        else:
            memory_turns, memory_session = _ingest(container, agent, subject, turns, texts)
            truncated += sum(len(t[2]) > MAX_CONTENT_CHARS for t in turns)
        t_ingest += time.perf_counter() - t0

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
        scores = {
            "turn_recall_all_at_5": recall_all(ranked_turns, gold_turns, 5),
            "turn_recall_all_at_10": recall_all(ranked_turns, gold_turns, 10),
            "session_recall_all_at_5": recall_all(ranked_sessions, gold_sessions, 5),
            "session_recall_all_at_10": recall_all(ranked_sessions, gold_sessions, 10),
            "turn_ndcg_any_at_5": ndcg_any(ranked_turns, gold_turns, 5),
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
    if own:
        container.close()
    means = overall.means()
    return {
        "data": str(data),
        "questions": overall.n,
        **means,
        "ku_ordering": round(ku_right / ku_pairs, 4) if ku_pairs else None,
        "ku_pairs": ku_pairs,
        "by_type": {k: {"questions": v.n, **v.means()} for k, v in sorted(by_type.items())},
        "turns_truncated_to_max_content": truncated,
        "ingest_seconds": round(t_ingest, 1),
        "query_ms_mean": round(1000 * t_query / max(overall.n, 1), 2),
        "top_k": top_k,
        "questions_reused_from_data_dir": questions_reused,
    }


def _ingest(
    container: Any, agent: Principal, subject: str, turns: list[Any], texts: list[str]
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
    for start in range(0, len(writes), 64):  # the gateway embeds each chunk (and its sentences) in one batch
        results = container.gateway.write_many(agent, writes[start : start + 64])
        for (sid, i, _, _, _), res in zip(turns[start : start + 64], results, strict=True):
            if res.memory is not None:
                memory_turns[res.memory.id].append(f"{sid}#{i}")
                memory_session.setdefault(res.memory.id, sid)
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


def _fixed_clock(moment: datetime) -> Callable[[], datetime]:
    """The broker asked 'as of' a question's date (recency decay is relative to it)."""
    return lambda: moment


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="memory bench longmemeval")
    p.add_argument("--data", default=DEFAULT_DATA)
    p.add_argument("--limit", type=int, help="only the first N questions (smoke runs)")
    p.add_argument("--data-dir", help="where the benchmark's embedded PostgreSQL lives (default: a temp dir)")
    p.add_argument(
        "--reuse",
        action="store_true",
        help="questions already ingested in --data-dir are only asked again (ranking experiments)",
    )
    p.add_argument("--json")
    a = p.parse_args(argv)
    report = run(a.data, limit=a.limit, data_dir=a.data_dir, reuse=a.reuse)
    if a.json:
        Path(a.json).write_text(json.dumps(report, indent=2) + "\n")
    return report
