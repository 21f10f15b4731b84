"""The operating metrics the product requirements name ("Observability and quality"), per tenant:
what `memory stats` prints. Counts, rates and durations only: never memory content, subjects or
identifiers. The live system-of-record cache's hit rate is not here: the cache lives in each
process and keeps no counts the database could report.

- stale rate: the share of retrievals in which live data overrode a memory (`stale_vs_live`);
- contested: records marked contested now;
- rejection rate: admission decisions that refused a memory, by reason, over all decisions;
- lifecycle lag: how long the oldest record past its expiry has been waiting for the purge;
- deletion time: median and longest erasure, and erasures past their deadline or failed;
- denials: refused requests written to the audit chain (wrong role, tenant, subject, clearance);
- retrieval latency: p50 and p95 per stage, from the access events;
- storage and cost drivers: live memories and bytes, retrievals, writes, sessions extracted.
"""

from __future__ import annotations

import statistics
from datetime import datetime
from typing import Any

from agent_memory.ports.store import MemoryStore

LIVE = ("active", "pending_approval", "contested", "quarantined")
DECISIONS = ("memory_created", "memory_candidate_created", "memory_rejected", "memory_quarantined")


def tenant_stats(store: MemoryStore, tenant_id: str, since: datetime) -> dict[str, Any]:
    with store.tenant(tenant_id) as s:
        raw = s.operating_stats(since)
    return summarize(tenant_id, raw)


def summarize(tenant_id: str, raw: dict[str, Any]) -> dict[str, Any]:
    """The figures from the store's raw counts (pure: tested without a database)."""
    by_status = {r["status"]: int(r["n"]) for r in raw["records"]}
    live = sum(by_status.get(s, 0) for s in LIVE)
    live_bytes = sum(int(r["bytes"]) for r in raw["records"] if r["status"] in LIVE)
    active = by_status.get("active", 0)
    due = sum(int(r["due"]) for r in raw["records"] if r["status"] == "active")
    events = raw["events"]
    decided = sum(events.get(e, 0) for e in DECISIONS)
    retrievals = raw["retrievals"]
    stale = sum(1 for r in retrievals if (r.get("excluded") or {}).get("stale_vs_live"))
    stages: dict[str, list[float]] = {}
    for r in retrievals:
        timed = r.get("stage_ms") or {}
        for stage, ms in timed.items():
            stages.setdefault(stage, []).append(float(ms))
        if timed:  # what the caller waited for before the access event was written
            stages.setdefault("before_audit", []).append(sum(float(v) for v in timed.values()))
    done = [
        float(e["seconds"]) for e in raw["erasures"] if e["status"] == "verified" and e["seconds"] is not None
    ]
    lag = raw["lifecycle_lag"]
    return {
        "tenant_id": tenant_id,
        "storage": {"live_memories": live, "live_bytes": live_bytes, "by_status": by_status},
        "stale_rate": _ratio(stale, len(retrievals)),
        "needs_revalidation_rate": _ratio(due, active),
        "contested": by_status.get("contested", 0),
        "rejection_rate": _ratio(events.get("memory_rejected", 0), decided),
        "rejections_by_reason": dict(sorted(raw["rejections"].items(), key=lambda kv: -kv[1])),
        "lifecycle_lag_seconds": round(float(lag["seconds"]), 1) if lag.get("seconds") is not None else 0.0,
        "records_past_expiry": int(lag.get("n") or 0),
        "deletion": {
            "verified": len(done),
            "median_seconds": round(statistics.median(done), 1) if done else None,
            "max_seconds": round(max(done), 1) if done else None,
            "failed": sum(1 for e in raw["erasures"] if e["status"] == "failed"),
            "overdue": sum(1 for e in raw["erasures"] if e["overdue"]),
        },
        "denials": events.get("memory_authorization_denied", 0),
        "retrieval_latency_ms": {
            stage: {"p50": _percentile(v, 50), "p95": _percentile(v, 95), "n": len(v)}
            for stage, v in sorted(stages.items())
        },
        "cost_drivers": {
            "retrievals": len(retrievals),
            "writes": decided,
            "sessions_extracted": events.get("session_extracted", 0),
            "erasures": events.get("erasure_requested", 0),
        },
    }


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def _percentile(values: list[float], q: int) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1))))
    return round(ordered[k], 2)


def format_table(stats: list[dict[str, Any]], since: datetime) -> str:
    """One column per tenant, one row per metric: the terminal view."""
    rows: list[tuple[str, list[str]]] = [
        ("live memories", [str(s["storage"]["live_memories"]) for s in stats]),
        ("live bytes", [str(s["storage"]["live_bytes"]) for s in stats]),
        ("stale rate (live overrode memory)", [_show(s["stale_rate"]) for s in stats]),
        ("needs revalidation (of active)", [_show(s["needs_revalidation_rate"]) for s in stats]),
        ("contested", [str(s["contested"]) for s in stats]),
        ("rejection rate", [_show(s["rejection_rate"]) for s in stats]),
        ("top rejection reason", [next(iter(s["rejections_by_reason"]), "-") for s in stats]),
        ("lifecycle lag (s)", [str(s["lifecycle_lag_seconds"]) for s in stats]),
        (
            "deletion median / max (s)",
            [
                f"{_show(s['deletion']['median_seconds'])} / {_show(s['deletion']['max_seconds'])}"
                for s in stats
            ],
        ),
        (
            "erasures failed / overdue",
            [f"{s['deletion']['failed']} / {s['deletion']['overdue']}" for s in stats],
        ),
        ("denials", [str(s["denials"]) for s in stats]),
        ("retrieval p50 / p95 (ms, before audit)", [_stage(s, "before_audit") for s in stats]),
        ("retrieval db p50 / p95 (ms)", [_stage(s, "db") for s in stats]),
        ("retrievals", [str(s["cost_drivers"]["retrievals"]) for s in stats]),
        ("writes", [str(s["cost_drivers"]["writes"]) for s in stats]),
        ("sessions extracted", [str(s["cost_drivers"]["sessions_extracted"]) for s in stats]),
    ]
    heads = ["metric", *[s["tenant_id"] for s in stats]]
    widths = [max(len(heads[0]), *(len(r[0]) for r in rows))]
    for i in range(len(stats)):
        widths.append(max(len(heads[i + 1]), *(len(r[1][i]) for r in rows)))
    lines = [
        f"since {since.isoformat(timespec='seconds')}",
        "  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)),
    ]
    lines.append("  ".join("-" * w for w in widths))
    for name, values in rows:
        lines.append("  ".join(v.ljust(w) for v, w in zip([name, *values], widths, strict=True)))
    return "\n".join(lines)


def _show(value: float | None) -> str:
    return "-" if value is None else f"{value}"


def _stage(s: dict[str, Any], stage: str) -> str:
    got = s["retrieval_latency_ms"].get(stage)
    return f"{got['p50']} / {got['p95']}" if got else "-"


# The figures the nightly run publishes per tenant as metrics (dimension `tenant_id`; the stack's
# dashboard graphs them): name, unit and where the value is in `summarize`'s answer.
TENANT_GAUGES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("LiveMemories", "Count", ("storage", "live_memories")),
    ("LiveBytes", "Bytes", ("storage", "live_bytes")),
    ("StaleRate", "None", ("stale_rate",)),
    ("ContestedRecords", "Count", ("contested",)),
    ("RejectionRate", "None", ("rejection_rate",)),
    ("LifecycleLagSeconds", "Seconds", ("lifecycle_lag_seconds",)),
    ("DeletionMedianSeconds", "Seconds", ("deletion", "median_seconds")),
    ("ErasuresOverdue", "Count", ("deletion", "overdue")),
    ("Denials", "Count", ("denials",)),
    ("Retrievals", "Count", ("cost_drivers", "retrievals")),
    ("Writes", "Count", ("cost_drivers", "writes")),
    ("SessionsExtracted", "Count", ("cost_drivers", "sessions_extracted")),
)


def gauges(stats: dict[str, Any]) -> list[tuple[str, str, float]]:
    """(metric name, unit, value) of each figure a tenant has (a rate with nothing to divide is left out)."""
    out = []
    for name, unit, path in TENANT_GAUGES:
        value: Any = stats
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if value is not None:
            out.append((name, unit, float(value)))
    return out
