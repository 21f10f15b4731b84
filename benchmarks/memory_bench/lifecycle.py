"""Nightly purge, subject erasure, and retrieval while the purge runs: `memory bench lifecycle`.

    memory bench lifecycle --records 2000000 --expired 1000000 --json out.json

1. Bulk-loads `--records` memories (40 per subject; `--expired` of them active but past
   expires_at) plus one subject with `--erasure-records` memories with the store's bulk load
   (`adapters/postgres/bulk_load.py`: COPY as the owner, indexes rebuilt after, no HNSW).
2. A retrieval client process (its own container, like a Lambda) runs `broker.retrieve`
   with precomputed vectors on random subjects the whole time: `--baseline-seconds`
   idle first, then while `LifecycleService.purge()` runs (the nightly job as-is:
   expire + hard delete in batches, consolidation, holds). Retrieval p95 during the
   purge vs. idle is the degradation.
3. Erasure of the big subject through `ErasureService.request` + `LocalErasureRunner`
   (no sleeps), timed to status `verified`, with per-step seconds. Runs before step 2.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import random
import time
from pathlib import Path
from typing import Any

import numpy as np

from memory_bench import common as c

PER_SUBJECT = 40
ERASURE_SUBJECT_INDEX = 9_000_000
TARGETS = {"retrieval_p95_degradation_max": 2.0}


def _client(url: str, subjects: int, seed: int, stop: Any, out_q: Any) -> None:
    c.quiet_logs()
    from agent_memory.domain.enums import Role
    from agent_memory.services.retrieval import RetrieveRequest

    container = c.build(
        None, database_url=url, embedder=c.PrecomputedEmbedder(), pool_max_size=1, migrate=False
    )
    p = c.principal(c.TENANT, Role.AGENT)
    rng = random.Random(seed)  # noqa: S311 - synthetic data, not security
    vecs = c.unit_vectors(np.random.default_rng(seed), 256)
    samples: list[tuple[float, float]] = []
    errors = 0
    out_q.put("ready")
    while not stop.is_set():
        req = RetrieveRequest(subject_id=c.subject_id(rng.randrange(subjects)), query=rng.choice(c.QUERIES))
        t = time.perf_counter()
        try:
            container.broker.retrieve(p, req, query_embedding=vecs[rng.randrange(len(vecs))])
        except Exception:
            errors += 1
            continue
        samples.append((time.monotonic(), time.perf_counter() - t))
    out_q.put((samples, errors))
    container.close()


def _window(samples: list[tuple[float, float]], start: float, end: float) -> dict[str, Any]:
    lat = [s for t, s in samples if start <= t <= end]
    return {
        "retrievals": len(lat),
        "seconds": round(end - start, 1),
        "qps": round(len(lat) / (end - start), 1) if end > start else None,
        **c.summarize_ms(lat),
    }


def _timed(fn: Any, into: dict[str, float], key: str) -> Any:
    def wrapper(*a: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        try:
            return fn(*a, **kw)
        finally:
            into[key] = into.get(key, 0.0) + time.perf_counter() - t

    return wrapper


def run_lifecycle_bench(
    data_dir: Path,
    *,
    records: int = 2_000_000,
    expired: int = 1_000_000,
    erasure_records: int = 10_000,
    baseline_seconds: float = 20.0,
    reuse: bool = False,
    seed: int = 5,
    pause_ratio: float | None = None,
) -> dict[str, Any]:
    from agent_memory.domain.enums import Role
    from agent_memory.services.erasure import ErasureRequest, LocalErasureRunner

    data_dir = Path(data_dir)
    subjects = max(1, records // PER_SUBJECT)
    shape = {
        "kind": "lifecycle",
        "records": records,
        "expired": expired,
        "erasure_records": erasure_records,
        "seed": seed,
    }
    marker = c.read_marker(data_dir)
    reusing = bool(reuse and marker and all(marker.get(k) == v for k, v in shape.items()))
    if not reusing:
        c.reset_data_dir(data_dir)
    report: dict[str, Any] = {
        "bench": "lifecycle",
        "records": records,
        "expired_requested": expired,
        "subjects": subjects,
        "machine_before": c.machine_state(),
    }
    container = c.build(data_dir, embedder=c.PrecomputedEmbedder())
    url = c.owner_url(container)
    if reusing:
        report["load"] = {"reused": True}
    else:
        print(f"loading {records + erasure_records:,} memories ...", flush=True)
        report["load"] = c.load_dataset(
            container,
            subjects=subjects,
            per_subject=PER_SUBJECT,
            seed=seed,
            hnsw=False,
            expired_share=expired / records,
            extra=[(ERASURE_SUBJECT_INDEX, erasure_records)] if erasure_records else (),
        )
        c.write_marker(data_dir, {**shape, "load": report["load"]})
    with c.owner_connection(url, c.TENANT) as conn:
        row = conn.execute(
            """SELECT count(*) AS total,
                      count(*) FILTER (WHERE status = 'active' AND expires_at <= now()) AS expirable
                 FROM memory_records"""
        ).fetchone()
        report["table_rows"], report["expired"] = row[0], row[1]
    report["disk_gib"] = c.dir_size_gib(data_dir / "pg")

    c.dataset_marker(data_dir).unlink(missing_ok=True)  # erasure and purge change the dataset: no reuse after
    # Erasure of the subject with `erasure_records` memories, to verified, no sleeps. It runs first: the
    # consolidation pass of the purge compares every pair of a subject's memories, so a 10,000-memory
    # subject alone would cost ~10^8 vector comparisons there (see docs/benchmarks.md).
    if erasure_records:
        dpo = c.principal(c.TENANT, Role.PRIVACY_OFFICER)
        svc = container.erasure
        svc.start_workflow = None
        steps: dict[str, float] = {}
        run_step = svc.run_step

        def timed_step(tenant_id: str, erasure_id: str, step: str) -> dict[str, Any]:
            t = time.perf_counter()
            try:
                return run_step(tenant_id, erasure_id, step)
            finally:
                steps[step] = round(steps.get(step, 0.0) + time.perf_counter() - t, 3)

        svc.run_step = timed_step  # type: ignore[method-assign]
        subject = c.subject_id(ERASURE_SUBJECT_INDEX)
        print(f"erasure of {subject} ...", flush=True)
        t = time.perf_counter()
        view = svc.request(dpo, subject, ErasureRequest(reason="gdpr_art17", request_reference="bench"))
        outcome = LocalErasureRunner(svc, sleep=lambda _s: None).run(
            {"erasure_id": view["erasure_id"], "tenant_id": c.TENANT, "subject_id": subject}
        )
        erase_s = time.perf_counter() - t
        final = svc.status(dpo, view["erasure_id"])
        report["erasure"] = {
            "subject_records": erasure_records,
            "outcome": outcome,
            "status": final["status"],
            "seconds_to_verified": round(erase_s, 2),
            "steps_s": steps,
            "receipt": {
                k: (final["receipt"] or {}).get(k)
                for k in ("records", "embeddings", "derived", "tombstones", "lineage_keys")
            },
        }
    # Retrieval client (its own process and container) for the whole purge phase.
    ctx = mp.get_context("spawn")
    stop, out_q = ctx.Event(), ctx.Queue()
    client = ctx.Process(target=_client, args=(url, subjects, seed + 1, stop, out_q), daemon=True)
    client.start()
    if out_q.get(timeout=300) != "ready":
        raise RuntimeError("retrieval client failed to start")
    time.sleep(2)  # warm-up, not counted
    base_start = time.monotonic()
    time.sleep(baseline_seconds)
    base_end = time.monotonic()

    phases: dict[str, float] = {}
    lc = container.lifecycle
    if pause_ratio is not None:
        lc.pause_ratio = pause_ratio
    lc._purge_tenant = _timed(lc._purge_tenant, phases, "expire_and_delete_s")  # type: ignore[method-assign]
    lc.consolidate = _timed(lc.consolidate, phases, "consolidate_s")  # type: ignore[method-assign]
    if lc.seal_access_log:
        lc.seal_access_log = _timed(lc.seal_access_log, phases, "seal_access_log_s")
    print("purge ...", flush=True)
    sql = c.SqlProfile()
    busy = c.CpuSampler()
    purge_start = time.monotonic()
    t = time.perf_counter()
    with sql.active():
        purge = lc.purge(tenants=[c.TENANT])
    purge_s = time.perf_counter() - t
    purge_end = time.monotonic()
    purge_busy = busy.busy_pct()
    time.sleep(1)
    stop.set()
    samples, client_errors = out_q.get(timeout=600)
    client.join(timeout=60)

    pr = purge.as_dict()
    report["purge"] = {
        **{
            k: pr[k]
            for k in (
                "expired",
                "deleted",
                "held",
                "merged",
                "promoted",
                "demoted",
                "batches",
                "access_events_sealed",
            )
        },
        "seconds": round(purge_s, 1),
        "records_per_s": round(pr["expired"] / purge_s, 1) if purge_s else None,
        "expire_phase_records_per_s": round(pr["expired"] / phases["expire_and_delete_s"], 1)
        if phases.get("expire_and_delete_s")
        else None,
        "longest_batch_ms": round(pr["longest_batch_ms"], 1),
        "batch_size": lc.batch_size,
        "pause_ratio": lc.pause_ratio,
        "phases_s": {k: round(v, 1) for k, v in phases.items()},
        "machine_busy_pct": purge_busy,
        "profile_sql": sql.report(1, purge_s),
    }
    idle = _window(samples, base_start, base_end)
    during = _window(samples, purge_start, purge_end)
    report["retrieval_idle"] = idle
    report["retrieval_during_purge"] = during
    report["retrieval_client_errors"] = client_errors
    report["retrieval_p95_degradation"] = c.ratio(during["p95_ms"], idle["p95_ms"])

    report["targets"] = TARGETS
    report["met"] = {"retrieval_p95_degradation": report["retrieval_p95_degradation"] <= 2.0}
    report["machine_after"] = c.machine_state()
    container.close()
    return report


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench lifecycle")
    p.add_argument("--data-dir", type=Path, help=c.DATA_DIR_HELP)
    p.add_argument("--records", type=int, default=2_000_000)
    p.add_argument("--expired", type=int, default=1_000_000)
    p.add_argument("--erasure-records", type=int, default=10_000)
    p.add_argument("--baseline-seconds", type=float, default=20.0)
    p.add_argument("--reuse", action="store_true", help="keep a dataset of the same shape in --data-dir")
    p.add_argument("--keep", action="store_true", help="leave the data dir (default: delete it when done)")
    p.add_argument("--seed", type=int, default=5)
    p.add_argument(
        "--pause-ratio",
        type=float,
        default=None,
        help="MEMORY_PURGE_PAUSE_RATIO for the purge (default: the setting)",
    )
    p.add_argument("--json")
    a = p.parse_args(argv)
    if a.reuse and a.data_dir is None:
        p.error("--reuse needs the --data-dir of a kept dataset")
    a.data_dir = c.data_dir_or_temporary(a.data_dir, "lifecycle")
    try:
        report = run_lifecycle_bench(
            a.data_dir,
            records=a.records,
            expired=a.expired,
            erasure_records=a.erasure_records,
            baseline_seconds=a.baseline_seconds,
            reuse=a.reuse,
            seed=a.seed,
            pause_ratio=a.pause_ratio,
        )
        report["command"] = "memory bench lifecycle " + " ".join(argv)
        return report, a.json
    finally:
        c.stop_server(a.data_dir, delete=not a.keep)
