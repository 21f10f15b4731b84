"""Two versions of the broker, side by side, turn by turn: `memory bench compare`.

    git worktree add /tmp/before <commit>
    memory bench retrieve --keep --data-dir DATASET   # once: the dataset both versions read
    memory bench compare --old /tmp/before --new . --data-dir DATASET --json out.json

On a machine whose speed drifts within minutes, whole runs (or whole processes in blocks of
hundreds) of two versions measure the drift as much as the code. Here two long-lived worker
processes, one per version (each with its own checkout first on PYTHONPATH, a pool of one
connection and precomputed query vectors), take turns of `--per-turn` retrievals for `--rounds`
rounds, the same queries for both in each round and the order flipped every round. Reported per
version: whole-run p50/p95, the median of the turns' p50s, client CPU per retrieval (the worker's
process time) and server CPU per retrieval (the embedded server's, during the worker's turns), the
new/old ratios, and how many retrievals returned the same memories in the same order.

The dataset is a `memory bench retrieve --keep` data dir. The workers run this file as a script,
so `--old` needs no copy of it: each imports the broker from its own checkout (first on its
PYTHONPATH) and `memory_bench.common` from the one running this command. The queries (texts, vectors and each turn's subjects) come from this process, so both
sides are asked exactly the same. Migrations are applied by the code running this command, before
the workers start: run it from the newer checkout.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np


def _code_root(path: str) -> Path:
    """A checkout, or its `layers/core/python`: where `agent_memory` is imported from."""
    p = Path(path).resolve()
    for candidate in (p, p / "layers" / "core" / "python"):
        if (candidate / "agent_memory" / "__init__.py").exists():
            return candidate
    raise SystemExit(f"no agent_memory package under {path}")


def compare(
    old: str,
    new: str,
    data_dir: Path,
    *,
    rounds: int = 40,
    per_turn: int = 100,
    seed: int = 1000,
) -> dict[str, Any]:
    from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder
    from memory_bench import common as c
    from memory_bench import retrieve as rb

    roots = {"old": _code_root(old), "new": _code_root(new)}
    marker = c.read_marker(data_dir)
    if not marker or marker.get("kind") != "retrieve":
        raise SystemExit(f"{data_dir} holds no retrieve dataset: run `memory bench retrieve --keep` first")
    texts = rb.query_texts()
    vectors = rb.embed_all(MiniLMOnnxEmbedder(), texts)
    workdir = Path(tempfile.mkdtemp(prefix="bench-compare-"))
    np.save(workdir / "qvecs.npy", np.stack([vectors[t] for t in texts]))
    (workdir / "texts.json").write_text(json.dumps(texts))
    container = c.build(data_dir, embedder=c.PrecomputedEmbedder())  # this code migrates
    workers: dict[str, subprocess.Popen[str]] = {}
    try:
        url = c.owner_url(container)
        for name, root in roots.items():
            workers[name] = subprocess.Popen(  # noqa: S603 - our own interpreter on our own script
                [sys.executable, __file__, "--worker", url, str(workdir)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env={**os.environ, "PYTHONPATH": str(root)},
            )
        warm_up = json.dumps(rb.make_workload(marker["subjects"], min(50, per_turn * 5), seed - 1)) + "\n"
        for w in workers.values():
            assert w.stdin is not None
            w.stdin.write(warm_up)
            w.stdin.flush()
        ready = {name: json.loads(_readline(w)) for name, w in workers.items()}
        runs: dict[str, dict[str, Any]] = {
            n: {"lat": [], "cpu": 0.0, "pg": 0.0, "turns": []} for n in workers
        }
        same = total = 0
        for r in range(rounds):
            turn = rb.make_workload(marker["subjects"], per_turn, seed + r)
            answers: dict[str, list[list[str]]] = {}
            for name in ("old", "new") if r % 2 == 0 else ("new", "old"):
                w = workers[name]
                assert w.stdin is not None
                pg0 = c.pg_cpu_seconds(data_dir)
                w.stdin.write(json.dumps(turn) + "\n")
                w.stdin.flush()
                out = json.loads(_readline(w))
                runs[name]["pg"] += c.pg_cpu_seconds(data_dir) - pg0
                runs[name]["lat"] += out["lat"]
                runs[name]["cpu"] += out["cpu"]
                runs[name]["turns"].append(statistics.median(out["lat"]))
                answers[name] = out["ids"]
            for a, b in zip(answers["old"], answers["new"], strict=True):
                total += 1
                same += a == b
    finally:
        for w in workers.values():
            _stop(w)
        container.close()
        shutil.rmtree(workdir, ignore_errors=True)
    report: dict[str, Any] = {
        "bench": "compare",
        "old": {"code": ready["old"]["code"], **_summary(runs["old"])},
        "new": {"code": ready["new"]["code"], **_summary(runs["new"])},
        "rounds": rounds,
        "per_turn": per_turn,
        "records": marker.get("subjects", 0) * marker.get("per_subject", 0),
        "same_answers": same,
        "answers": total,
        "machine": c.machine_state(),
    }
    # None, not NaN, where a side used no measurable server time (clock ticks are 10 ms): strict JSON
    report["ratio_new_to_old"] = {
        k: None if math.isnan(x := c.ratio(report["new"][k], report["old"][k])) else x
        for k in ("p50_ms", "p95_ms", "turn_p50_median_ms", "client_cpu_ms", "server_cpu_ms")
    }
    return report


def _stop(worker: subprocess.Popen[str]) -> None:
    """End a worker whatever state it is in: close its input, then kill it if it lingers."""
    try:
        if worker.stdin is not None:
            worker.stdin.close()
        worker.wait(timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        worker.kill()
        worker.wait()


def _readline(worker: subprocess.Popen[str]) -> str:
    assert worker.stdout is not None
    line = worker.stdout.readline()
    if not line:
        raise SystemExit(f"a compare worker exited (code {worker.wait()})")
    return line


def _summary(run: dict[str, Any]) -> dict[str, float]:
    from memory_bench import common as c

    n = len(run["lat"]) or 1
    return {
        **{k.removeprefix("x_"): v for k, v in c.summarize_ms(run["lat"], "x_").items()},
        "turn_p50_median_ms": round(statistics.median(run["turns"]) * 1000, 3) if run["turns"] else 0.0,
        "client_cpu_ms": round(run["cpu"] / n * 1000, 3),
        "server_cpu_ms": round(run["pg"] / n * 1000, 3),
    }


def _worker(url: str, workdir: str) -> None:
    """One version's broker: reads a turn (a JSON list of [subject, query index]) per line and
    answers each with one JSON line. Anything else that would print (logs) goes to stderr: stdout
    is the protocol."""
    protocol, sys.stdout = sys.stdout, sys.stderr
    import agent_memory
    from agent_memory.domain.enums import Role
    from agent_memory.services.retrieval import RetrieveRequest
    from memory_bench import common as c

    container = c.build(
        None, database_url=url, embedder=c.PrecomputedEmbedder(), pool_max_size=1, migrate=False
    )
    texts = json.loads((Path(workdir) / "texts.json").read_text())
    vectors = np.load(Path(workdir) / "qvecs.npy")
    principal = c.principal(c.TENANT, Role.AGENT)

    def turn(queries: list[tuple[str, int]]) -> dict[str, Any]:
        lat, ids = [], []
        cpu0 = time.process_time()
        for subject, qi in queries:
            t = time.perf_counter()
            r = container.broker.retrieve(
                principal, RetrieveRequest(subject_id=subject, query=texts[qi]), query_embedding=vectors[qi]
            )
            lat.append(time.perf_counter() - t)
            ids.append([m["id"] for m in r.memories])
        return {"lat": lat, "cpu": time.process_time() - cpu0, "ids": ids}

    first = json.loads(sys.stdin.readline())  # the warm-up turn: connection, plans, caches
    turn(first)
    print(json.dumps({"code": str(Path(agent_memory.__file__).parent)}), file=protocol, flush=True)
    for line in sys.stdin:
        print(json.dumps(turn(json.loads(line))), file=protocol, flush=True)
    container.close()


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench compare")
    p.add_argument("--old", required=True, help="the baseline's checkout (e.g. a git worktree)")
    p.add_argument("--new", default=".", help="the candidate's checkout (default: this one)")
    p.add_argument(
        "--data-dir", required=True, type=Path, help="a dataset kept by `memory bench retrieve --keep`"
    )
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--per-turn", type=int, default=100)
    p.add_argument("--json")
    a = p.parse_args(argv)
    if a.rounds < 1 or a.per_turn < 1:
        p.error("--rounds and --per-turn must be at least 1")
    from memory_bench import common as c

    try:
        report = compare(a.old, a.new, a.data_dir, rounds=a.rounds, per_turn=a.per_turn)
    finally:
        if (a.data_dir / "pg" / "postmaster.pid").exists():  # stop what ran; never start one to stop it
            c.stop_server(a.data_dir, delete=False)  # the dataset stays: it was built to be reused
    report["command"] = "memory bench compare " + " ".join(argv)
    return report, a.json


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "--worker":
    _worker(*sys.argv[2:])
