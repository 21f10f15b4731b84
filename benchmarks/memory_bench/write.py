"""Write throughput through the gateway: `memory bench write`.

    memory bench write --records 100000 --json out.json

Every record goes through `WriteGateway.write` (sanitize, screen, classify, dedupe,
tombstone check, conflict resolution, persist record + audit events in one
transaction) with a precomputed embedding (random unit vectors, dim 384; or
`--embed batched`: MiniLM over all texts in batches of 64 first, timed apart).

The stream: `--subjects` subjects (default records / 20) in random order; ~80%
append-only episodes, ~5% resolutions, ~11% slotted preferences/facts of mixed
authority (so supersession and contests run), ~1% commercial terms (held for
approval), ~2% agent inferences (quarantined observations), ~1% exact repeats
(dedupe). Content is distinct per record otherwise.

Single client first (the headline), then `--concurrent` threads in one process on
`--concurrent-records` more records (fresh subjects), then a profiled sample.

`--batch N` adds the batched path (`WriteGateway.write_batch`, N candidates per transaction) side
by side with the single-record path in the same run: `--rounds` rounds, each a fresh stream of
`--side-records` through `write` and another through `write_batch`, one after the other; the report
gives each round, the medians and the ratio of the medians (batched / single).
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np

from memory_bench import common as c

TARGET_RECORDS_PER_S = 1000.0

_KIND_WEIGHTS = (
    ("episode", 80),
    ("resolution", 5),
    ("slot", 11),
    ("commercial", 1),
    ("inference", 2),
    ("repeat", 1),
)


def make_writes(n: int, subjects: int, seed: int, first_subject: int = 0) -> list[Any]:
    """The write stream: MemoryWrite objects (built ahead: request parsing is not the gateway's cost)."""
    from agent_memory.domain.records import MemoryWrite

    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    kinds, weights = zip(*_KIND_WEIGHTS, strict=True)
    now = datetime.now(UTC)
    seen: dict[str, list[dict[str, Any]]] = {}
    out = []
    for i in range(n):
        sid = c.subject_id(first_subject + rng.randrange(subjects))
        kind = rng.choices(kinds, weights)[0]
        effective = now - timedelta(days=rng.uniform(0, 300))
        if kind == "repeat" and seen.get(sid):
            body = dict(rng.choice(seen[sid]))
        elif kind in ("episode", "repeat"):
            body = {
                "type": "episode",
                "content": c.episode_content(rng, i)[0],
                "source": {"kind": "customer_claim"},
                "effective_at": effective,
            }
        elif kind == "resolution":
            body = {
                "type": "resolution",
                "content": "Resolved: " + c.episode_content(rng, i)[0],
                "source": {"kind": "confirmed_outcome"},
                "effective_at": effective,
            }
        elif kind == "slot":
            slot, mtype, category = rng.choice(c.SLOTS[:-1])
            authority = rng.choice(["customer_confirmed", "customer_confirmed", "customer_claim"])
            body = {
                "type": mtype.value,
                "slot": slot,
                "content": f"{c.slot_content(slot, rng)} (noted {i})",
                "source": {"kind": authority},
                "effective_at": effective,
            }
            if category:
                body["category"] = category
        elif kind == "commercial":
            slot, mtype, category = c.SLOTS[-1]
            body = {
                "type": mtype.value,
                "slot": slot,
                "category": category,
                "content": f"{c.slot_content(slot, rng)} (quote {i})",
                "source": {"kind": "customer_claim"},
            }
        else:  # an agent's inference about a preference: becomes a quarantined observation
            slot, mtype, _ = c.SLOTS[rng.randrange(3)]
            body = {
                "type": mtype.value,
                "slot": slot,
                "content": f"Seems to like {rng.choice(c.CHANNELS)} ({i})",
                "source": {"kind": "agent_inference"},
            }
        body["subject_id"] = sid
        if body["type"] == "episode":
            seen.setdefault(sid, []).append(body)
        out.append(MemoryWrite.model_validate(body))
    return out


def _run(
    gateway: Any,
    principal: Any,
    writes: list[Any],
    vectors: np.ndarray,
    lat: list[float],
    decisions: Counter[str],
    errors: Counter[str],
) -> None:
    for w, v in zip(writes, vectors, strict=True):
        t = time.perf_counter()
        try:
            r = gateway.write(principal, w, embedding=v)
        except Exception as exc:
            errors[type(exc).__name__] += 1
            continue
        lat.append(time.perf_counter() - t)
        decisions[r.decision.value] += 1


def _run_batched(
    gateway: Any,
    principal: Any,
    writes: list[Any],
    vectors: np.ndarray,
    size: int,
    lat: list[float],
    decisions: Counter[str],
    errors: Counter[str],
) -> int:
    """The stream through `write_batch`, `size` at a time; `lat` gets one latency per batch."""
    done = 0
    for at in range(0, len(writes), size):
        chunk, vecs = writes[at : at + size], list(vectors[at : at + size])
        t = time.perf_counter()
        try:
            results = gateway.write_batch(principal, chunk, embeddings=vecs)
        except Exception as exc:
            errors[type(exc).__name__] += 1
            continue
        lat.append(time.perf_counter() - t)
        done += len(results)
        for r in results:
            decisions[r.decision.value] += 1
    return done


def timed_batched_run(
    container: Any, principal: Any, writes: list[Any], vectors: np.ndarray, size: int, data_dir: Path
) -> dict[str, Any]:
    lat: list[float] = []
    decisions: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    pg0, cpu0 = c.pg_cpu_seconds(data_dir), time.process_time()
    t0 = time.perf_counter()
    done = _run_batched(container.gateway, principal, writes, vectors, size, lat, decisions, errors)
    seconds = time.perf_counter() - t0
    client_cpu, server_cpu = time.process_time() - cpu0, c.pg_cpu_seconds(data_dir) - pg0
    return {
        "batch_size": size,
        "records": len(writes),
        "seconds": round(seconds, 2),
        "records_per_s": round(done / seconds, 1),
        "admitted_per_s": round(decisions.get("admitted", 0) / seconds, 1),
        **c.summarize_ms(lat, prefix="batch_"),
        "decisions": dict(decisions),
        "errors": dict(errors),
        "client_cpu_ms_per_write": round(client_cpu / max(1, done) * 1000, 3),
        "server_cpu_ms_per_write": round(server_cpu / max(1, done) * 1000, 3),
    }


def side_by_side(
    container: Any,
    principal: Any,
    *,
    batch: int,
    rounds: int,
    records: int,
    first_subject: int,
    seed: int,
    data_dir: Path,
) -> dict[str, Any]:
    """Single-record and batched writes alternating on fresh streams of the same shape."""
    nrng = np.random.default_rng(seed)
    per_subject = 20
    warm = make_writes(min(records, 2 * batch), 50, seed + 98, first_subject=first_subject)
    timed_batched_run(container, principal, warm, c.unit_vectors(nrng, len(warm)), batch, data_dir)
    base = first_subject + 1000
    out: dict[str, Any] = {"batch_size": batch, "rounds": [], "records_per_round": records}
    for r in range(rounds):
        subjects = max(1, records // per_subject)
        one = make_writes(records, subjects, seed + 10 * r, first_subject=base)
        base += subjects
        many = make_writes(records, subjects, seed + 10 * r + 5, first_subject=base)
        base += subjects
        single = timed_run(container, principal, one, c.unit_vectors(nrng, records), 1, data_dir)
        batched = timed_batched_run(
            container, principal, many, c.unit_vectors(nrng, records), batch, data_dir
        )
        print(
            f"  round {r + 1}: single {single['admitted_per_s']} admitted/s,"
            f" batched {batched['admitted_per_s']} admitted/s",
            flush=True,
        )
        out["rounds"].append({"single": single, "batched": batched})

    def median(kind: str, key: str) -> float:
        return round(float(np.median([x[kind][key] for x in out["rounds"]])), 1)

    for kind in ("single", "batched"):
        out[f"{kind}_records_per_s_median"] = median(kind, "records_per_s")
        out[f"{kind}_admitted_per_s_median"] = median(kind, "admitted_per_s")
    out["single_p95_ms_median"] = median("single", "p95_ms")
    out["batched_batch_p95_ms_median"] = median("batched", "batch_p95_ms")
    out["ratio_admitted_per_s"] = c.ratio(
        out["batched_admitted_per_s_median"], out["single_admitted_per_s_median"]
    )
    out["ratio_records_per_s"] = c.ratio(
        out["batched_records_per_s_median"], out["single_records_per_s_median"]
    )
    out["target_admitted_per_s"] = TARGET_RECORDS_PER_S
    out["met"] = out["batched_admitted_per_s_median"] >= TARGET_RECORDS_PER_S
    return out


def timed_run(
    container: Any,
    principal: Any,
    writes: list[Any],
    vectors: np.ndarray,
    threads: int,
    data_dir: Path | None = None,
) -> dict[str, Any]:
    lat: list[float] = []
    decisions: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    busy = c.CpuSampler()
    pg0, cpu0 = c.pg_cpu_seconds(data_dir), time.process_time()
    t0 = time.perf_counter()
    if threads == 1:
        _run(container.gateway, principal, writes, vectors, lat, decisions, errors)
    else:
        parts = [(writes[i::threads], vectors[i::threads]) for i in range(threads)]
        lats = [[] for _ in range(threads)]  # type: list[list[float]]
        workers = [
            threading.Thread(
                target=_run, args=(container.gateway, principal, w, v, lats[i], decisions, errors)
            )
            for i, (w, v) in enumerate(parts)
        ]
        for th in workers:
            th.start()
        for th in workers:
            th.join()
        lat = [x for part in lats for x in part]
    seconds = time.perf_counter() - t0
    client_cpu, server_cpu = time.process_time() - cpu0, c.pg_cpu_seconds(data_dir) - pg0
    admitted = decisions.get("admitted", 0)
    done = max(1, len(lat))
    return {
        "threads": threads,
        "records": len(writes),
        "seconds": round(seconds, 2),
        "records_per_s": round(len(lat) / seconds, 1),
        "admitted_per_s": round(admitted / seconds, 1),
        **c.summarize_ms(lat),
        "decisions": dict(decisions),
        "errors": dict(errors),
        "machine_busy_pct": busy.busy_pct(),
        "client_cpu_ms_per_write": round(client_cpu / done * 1000, 3),
        "server_cpu_ms_per_write": round(server_cpu / done * 1000, 3),
    }


def run_write_bench(
    data_dir: Path,
    *,
    records: int = 100_000,
    subjects: int | None = None,
    concurrent: int = 4,
    concurrent_records: int = 20_000,
    profile_records: int = 2000,
    embed: str = "precomputed",
    seed: int = 11,
    batch: int = 0,
    rounds: int = 3,
    side_records: int = 5000,
) -> dict[str, Any]:
    data_dir = Path(data_dir)
    c.reset_data_dir(data_dir)
    subjects = subjects or max(1, records // 20)
    report: dict[str, Any] = {
        "bench": "write",
        "records": records,
        "subjects": subjects,
        "embedding": embed,
        "machine_before": c.machine_state(),
    }
    embedder: Any = c.PrecomputedEmbedder()
    if embed == "batched":
        from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder

        embedder = MiniLMOnnxEmbedder()
    container = c.build(data_dir, embedder=embedder, pool_max_size=max(8, concurrent + 2))
    p = c.principal(c.TENANT)
    t = time.perf_counter()
    writes = make_writes(records, subjects, seed)
    report["build_requests_s"] = round(time.perf_counter() - t, 1)
    nrng = np.random.default_rng(seed)
    if embed == "batched":
        t = time.perf_counter()
        texts = [w.content for w in writes]
        vectors = np.concatenate([embedder.embed(texts[i : i + 64]) for i in range(0, len(texts), 64)])
        s = time.perf_counter() - t
        report["embed_batched"] = {
            "texts": len(texts),
            "seconds": round(s, 1),
            "texts_per_s": round(len(texts) / s, 1),
        }
    else:
        vectors = c.unit_vectors(nrng, records)

    # Warm-up on other subjects (connections, statement preparation): not measured.
    warm = make_writes(200, 50, seed + 99, first_subject=10_000_000)
    timed_run(container, p, warm, c.unit_vectors(nrng, len(warm)), 1, data_dir)

    print(f"single client: {records:,} writes ...", flush=True)
    single = timed_run(container, p, writes, vectors, 1, data_dir)
    print(f"  {single}", flush=True)
    report["single"] = single
    report.update(
        {
            k: single[k]
            for k in ("seconds", "records_per_s", "admitted_per_s", "p50_ms", "p95_ms", "p99_ms", "decisions")
        }
    )
    if concurrent > 1 and concurrent_records:
        more = make_writes(
            concurrent_records, max(1, concurrent_records // 20), seed + 1, first_subject=subjects
        )
        print(f"{concurrent} threads: {concurrent_records:,} writes ...", flush=True)
        report["concurrent"] = timed_run(
            container, p, more, c.unit_vectors(nrng, len(more)), concurrent, data_dir
        )
        print(f"  {report['concurrent']}", flush=True)
        # The same slice size single-threaded right after, for a side-by-side ratio.
        again = make_writes(
            concurrent_records,
            max(1, concurrent_records // 20),
            seed + 2,
            first_subject=subjects + concurrent_records,
        )
        report["single_same_size"] = timed_run(
            container, p, again, c.unit_vectors(nrng, len(again)), 1, data_dir
        )
        report["concurrent_speedup"] = c.ratio(
            report["concurrent"]["records_per_s"], report["single_same_size"]["records_per_s"]
        )
    if batch:
        print(f"side by side: {rounds} rounds of {side_records:,} writes, single and batched by {batch} ...")
        report["batched"] = side_by_side(
            container,
            p,
            batch=batch,
            rounds=rounds,
            records=side_records,
            first_subject=20_000_000,
            seed=seed + 50,
            data_dir=data_dir,
        )
    if profile_records:
        base = subjects + 3 * concurrent_records
        sample = make_writes(profile_records, max(1, profile_records // 20), seed + 3, first_subject=base)
        svec = c.unit_vectors(nrng, len(sample))
        sql = c.SqlProfile()
        t = time.perf_counter()
        with sql.active():
            timed_run(container, p, sample, svec, 1, data_dir)
        report["profile_sql"] = sql.report(len(sample), time.perf_counter() - t)
        sample2 = make_writes(
            profile_records, max(1, profile_records // 20), seed + 4, first_subject=base + 10**6
        )
        _, report["profile_cprofile"] = c.cprofile_top(
            lambda: timed_run(container, p, sample2, c.unit_vectors(nrng, len(sample2)), 1, data_dir)
        )
    with c.owner_connection(c.owner_url(container), c.TENANT) as conn:
        report["table_rows"] = conn.execute("SELECT count(*) FROM memory_records").fetchone()[0]
        report["audit_events"] = conn.execute("SELECT count(*) FROM memory_events").fetchone()[0]
        report["settings"] = {
            r[0]: r[1]
            for r in conn.execute(
                "SELECT name, setting FROM pg_settings WHERE name IN ('synchronous_commit', 'fsync', 'shared_buffers',"
                " 'wal_sync_method', 'commit_delay')"
            ).fetchall()
        }
    report["target_records_per_s"] = TARGET_RECORDS_PER_S
    report["met"] = report["records_per_s"] >= TARGET_RECORDS_PER_S
    report["disk_gib"] = c.dir_size_gib(data_dir / "pg")
    report["machine_after"] = c.machine_state()
    container.close()
    return report


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench write")
    p.add_argument("--data-dir", type=Path, help=c.DATA_DIR_HELP)
    p.add_argument("--records", type=int, default=100_000)
    p.add_argument("--subjects", type=int, default=None, help="default: records / 20")
    p.add_argument("--concurrent", type=int, default=4, help="threads of the concurrent variant (1 = skip)")
    p.add_argument("--concurrent-records", type=int, default=20_000)
    p.add_argument(
        "--profile-records", type=int, default=2000, help="writes of the profiled sample (0 = skip)"
    )
    p.add_argument("--embed", choices=("precomputed", "batched"), default="precomputed")
    p.add_argument(
        "--batch", type=int, default=0, help="also the batched path, this many per transaction (0 = skip)"
    )
    p.add_argument("--rounds", type=int, default=3, help="with --batch: alternating rounds (medians)")
    p.add_argument("--side-records", type=int, default=5000, help="with --batch: writes per path per round")
    p.add_argument("--keep", action="store_true", help="leave the data dir (default: delete it when done)")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--json")
    a = p.parse_args(argv)
    a.data_dir = c.data_dir_or_temporary(a.data_dir, "write")
    try:
        report = run_write_bench(
            a.data_dir,
            records=a.records,
            subjects=a.subjects,
            concurrent=a.concurrent,
            concurrent_records=a.concurrent_records,
            profile_records=a.profile_records,
            embed=a.embed,
            seed=a.seed,
            batch=a.batch,
            rounds=a.rounds,
            side_records=a.side_records,
        )
        report["command"] = "memory bench write " + " ".join(argv)
        return report, a.json
    finally:
        c.stop_server(a.data_dir, delete=not a.keep)
