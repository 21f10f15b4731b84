"""`memory bench floor`: calibrate an embedder's similarity floor and keyword bar with data.

The seed's rule is "cosine >= 0.78" for text-embedding-3-small. A cosine means something else
for every model, so each embedder's floor is set from data by what it does: on the development
half of LongMemEval-S, written and indexed as `memory bench longmemeval` does (the same write
path, the same sentence vectors), every memory of a question's haystack is read with the
broker's own candidates query, and its similarity is the one the broker compares with the floor
(the better of the memory's vector and its best sentence's vector).

Three populations per question:
- evidence: the user turns the data set marks as holding the answer;
- other turns: the rest of the same person's haystack (other topics, the same person);
- unrelated: another question's haystack, asked the first question (another person entirely).

The floor is the similarity that rejects `--reject` (Y) of the same person's other turns; the
report gives the share of evidence turns it keeps (X). The keyword bar (the similarity a memory
sharing a word with the question needs, below the floor) is the one that rejects
`--keyword-reject` of the unrelated records sharing a word with the question: in another person's
records a shared word is chance, so a shared word lifts a memory only when it is also closer to the
question than that share of chance matches. Both are read from the distribution, then rounded to
two decimals; the report gives the evidence each keeps. The values adopted are in
`domain/relevance.EMBEDDER_RELEVANCE` with this report's figures (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import tempfile
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.domain.ranking import topical_query
from agent_memory.domain.records import MAX_CONTENT_CHARS
from memory_bench.longmemeval import TENANT, load_questions, parse_date
from memory_bench.longmemeval import run as ingest


def _dense(rows: list[Any]) -> list[tuple[str, str, float, bool]]:
    """(session id, content, the broker's dense similarity, shares a word with the query) per row."""
    out = []
    for r in rows:
        sims = [s for s in (r.similarity, r.sentence_similarity) if s is not None]
        out.append((r.facts.session_id or "", r.content, max(sims) if sims else -1.0, bool(r.term_counts)))
    return out


def _candidates(container: Any, subject: str, vector: np.ndarray, query: str, now: datetime) -> list[Any]:
    with container.store.reader(TENANT) as reader:
        rows: list[Any] = reader.retrieval_candidates(
            subject_id=subject,
            query_embedding=vector,
            query_text=topical_query(query),
            types=None,
            max_sensitivity_rank=99,
            now=now,
            per_signal=100_000,  # every memory of the subject, unranked
        )
    return rows


def run(
    data: str,
    *,
    limit: int | None,
    data_dir: str | None,
    reject: float,
    keyword_reject: float,
    floors: list[float],
) -> dict[str, Any]:
    from agent_memory.bootstrap import build_container
    from agent_memory.config import Settings

    container = build_container(
        Settings(
            data_dir=Path(data_dir or tempfile.mkdtemp(prefix="floor-")),
            pool_max_size=2,
            embedder_threads=2,
        )
    )
    try:
        ingest(data, limit=limit, container=container, reuse=True, ingest_only=True)
        questions = [q for q in load_questions(data) if not q["question_id"].endswith("_abs")][:limit]
        vectors = container.embedder.embed([q["question"] for q in questions])
        evidence: list[float] = []
        evidence_keyword: list[float] = []
        best: list[float] = []
        other: list[float] = []
        other_keyword: list[float] = []
        unrelated: list[float] = []
        unrelated_keyword: list[float] = []
        for i, q in enumerate(questions):
            now = parse_date(q["question_date"])
            gold = {
                (sid, t["content"][:MAX_CONTENT_CHARS])
                for sid, session in zip(q["haystack_session_ids"], q["haystack_sessions"], strict=True)
                for t in session
                if t["role"] == "user" and t.get("has_answer")
            }
            own = _dense(_candidates(container, f"q-{q['question_id']}", vectors[i], q["question"], now))
            found = [(sim, kw) for sid, text, sim, kw in own if (sid, text) in gold]
            evidence += [sim for sim, _ in found]
            evidence_keyword += [sim for sim, kw in found if kw]
            if found:
                best.append(max(sim for sim, _ in found))
            other += [sim for sid, text, sim, _ in own if (sid, text) not in gold]
            other_keyword += [sim for sid, text, sim, kw in own if kw and (sid, text) not in gold]
            neighbour = questions[(i + 1) % len(questions)]
            theirs = _dense(
                _candidates(container, f"q-{neighbour['question_id']}", vectors[i], q["question"], now)
            )
            unrelated += [sim for _, _, sim, _ in theirs]
            unrelated_keyword += [sim for _, _, sim, kw in theirs if kw]
    finally:
        container.close()
    ev, ek, be, ot, ok, un, uk = (
        np.array(x)
        for x in (evidence, evidence_keyword, best, other, other_keyword, unrelated, unrelated_keyword)
    )
    floor = round(float(np.quantile(ot, reject)), 2)
    bar = min(floor, round(float(np.quantile(uk, keyword_reject)), 2))

    def shares(f: float) -> dict[str, float]:
        return {
            "evidence_kept": round(float(np.mean(ev >= f)), 3),
            "best_evidence_kept": round(float(np.mean(be >= f)), 3),
            "other_turns_rejected": round(float(np.mean(ot < f)), 3),
            "unrelated_rejected": round(float(np.mean(un < f)), 3),
        }

    return {
        "model": container.embedder.name,
        "questions": len(questions),
        "evidence_turns": len(ev),
        "evidence_turns_sharing_a_word": len(ek),
        "other_turns": len(ot),
        "unrelated_records": len(un),
        "evidence_percentiles": {p: round(float(np.percentile(ev, p)), 3) for p in (5, 10, 25, 50)},
        "other_percentiles": {p: round(float(np.percentile(ot, p)), 3) for p in (50, 90, 95, 99)},
        "unrelated_percentiles": {p: round(float(np.percentile(un, p)), 3) for p in (50, 90, 95, 99)},
        "unrelated_sharing_a_word": len(uk),
        "unrelated_sharing_a_word_percentiles": {
            p: round(float(np.percentile(uk, p)), 3) for p in (50, 75, 90, 95)
        },
        "floors": {str(f): shares(f) for f in sorted({*floors, floor})},
        "calibrated": {
            "rule": f"floor rejects {reject:.0%} of the same person's other turns; keyword bar rejects "
            f"{keyword_reject:.0%} of another person's records sharing a word with the question",
            "floor": floor,
            **shares(floor),
            "keyword_bar": bar,
            "keyword_bar_evidence_sharing_a_word_kept": round(float(np.mean(ek >= bar)), 3),
            "evidence_sharing_a_word_below_the_floor": int(np.sum(ek < floor)),
            # what the broker serves: above the floor, or sharing a word and above the keyword bar
            "other_turns_rejected_with_keyword_lift": round(
                1 - float((np.sum(ot >= floor) + np.sum((ok >= bar) & (ok < floor))) / len(ot)), 3
            ),
            "unrelated_rejected_with_keyword_lift": round(
                1 - float((np.sum(un >= floor) + np.sum((uk >= bar) & (uk < floor))) / len(un)), 3
            ),
            "evidence_kept_with_keyword_lift": round(
                float((np.sum(ev >= floor) + np.sum((ek >= bar) & (ek < floor))) / len(ev)), 3
            ),
            "keyword_bar_unrelated_sharing_a_word_rejected": round(float(np.mean(uk < bar)), 3)
            if len(uk)
            else None,
        },
    }


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="memory bench floor")
    p.add_argument("--data", required=True, help="the development half of LongMemEval-S")
    p.add_argument("--limit", type=int, help="only the first N questions")
    p.add_argument("--data-dir", help="a data dir `memory bench longmemeval --data-dir` ingested (reused)")
    p.add_argument("--reject", type=float, default=0.95, help="share of other turns the floor rejects (Y)")
    p.add_argument(
        "--keyword-reject",
        type=float,
        default=0.5,
        help="share of another person's records sharing a word with the question the keyword bar rejects",
    )
    p.add_argument("--floors", default="0.15,0.2,0.25,0.3,0.35,0.4")
    a = p.parse_args(argv)
    return run(
        a.data,
        limit=a.limit,
        data_dir=a.data_dir,
        reject=a.reject,
        keyword_reject=a.keyword_reject,
        floors=[float(x) for x in a.floors.split(",")],
    )
