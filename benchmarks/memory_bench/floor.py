"""`memory bench floor`: calibrate the similarity floor of an embedding model with data.

On LongMemEval-style data, compares cosine(question, evidence turn) with
cosine(question, other turns) and reports, for candidate floors, how much
evidence survives and how much noise is cut. The floor in `domain/ranking.py`
comes from this report (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np

from agent_memory.domain.records import MAX_CONTENT_CHARS
from memory_bench.longmemeval import load_questions


def run(data: str, *, limit: int | None, floors: list[float]) -> dict[str, Any]:
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

    embedder = MiniLMOnnxEmbedder(threads=2)
    gold: list[float] = []
    other: list[float] = []
    best: list[float] = []
    n = 0
    for q in load_questions(data):
        if q["question_id"].endswith("_abs"):
            continue
        if limit is not None and n >= limit:
            break
        n += 1
        turns = [
            (t["content"][:MAX_CONTENT_CHARS], bool(t.get("has_answer")))
            for s in q["haystack_sessions"]
            for t in s
            if t["role"] == "user" and t["content"].strip()
        ]
        vecs = embedder.embed([q["question"]] + [t for t, _ in turns])
        sims = vecs[1:] @ vecs[0]
        g = [float(s) for s, (_, is_gold) in zip(sims, turns, strict=True) if is_gold]
        other += [float(s) for s, (_, is_gold) in zip(sims, turns, strict=True) if not is_gold]
        gold += g
        if g:
            best.append(max(g))
    ga, oa, ba = np.array(gold), np.array(other), np.array(best)
    return {
        "model": embedder.name,
        "questions": n,
        "evidence_turns": len(gold),
        "other_turns": len(other),
        "evidence_percentiles": {p: round(float(np.percentile(ga, p)), 3) for p in (5, 10, 25, 50)},
        "other_percentiles": {p: round(float(np.percentile(oa, p)), 3) for p in (50, 90, 95, 99)},
        "floors": {
            str(f): {
                "evidence_kept": round(float(np.mean(ga >= f)), 3),
                "best_evidence_kept": round(float(np.mean(ba >= f)), 3),
                "other_kept": round(float(np.mean(oa >= f)), 3),
            }
            for f in floors
        },
    }


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="memory bench floor")
    p.add_argument("--data", required=True, help="the LongMemEval-S file")
    p.add_argument("--limit", type=int)
    p.add_argument("--floors", default="0.1,0.15,0.2,0.25,0.3,0.4")
    a = p.parse_args(argv)
    return run(a.data, limit=a.limit, floors=[float(x) for x in a.floors.split(",")])
