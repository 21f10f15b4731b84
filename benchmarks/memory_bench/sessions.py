"""`memory bench sessions`: the extraction worker end to end on the embedded database.

Closes sessions built from the labelled transcripts through SessionService
(masked transcript to S3, message to SQS, both on moto), then drains the queue
through the same `extract` handler the local front uses, and reports sessions/s
and per-session latency of the worker.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from agent_memory.domain.enums import Role
from agent_memory.domain.records import Principal
from agent_memory.services.sessions import CloseSessionRequest
from memory_bench import EXTRACTION_DATA


def run(data: str, *, rounds: int, data_dir: str | None) -> dict[str, Any]:
    from agent_memory.bootstrap import build_container, set_container
    from agent_memory.config import Settings
    from agent_memory.local.aws import start_local_aws
    from agent_memory.local.worker import QueuePoller

    aws = start_local_aws(region="us-east-1", max_receive_count=3)
    settings = Settings(
        data_dir=Path(data_dir or tempfile.mkdtemp(prefix="bench-sessions-")),
        aws_endpoint_url=aws.endpoint_url,
        extraction_queue_url=aws.queue_url,
        transcripts_bucket=aws.bucket,
    )
    container = build_container(settings)
    set_container(container)
    transcripts = [json.loads(line) for line in Path(data).read_text().splitlines() if line.strip()]
    agent = Principal(sub="bench", tenant_id="bench-sessions", roles=frozenset({Role.AGENT}))
    t0 = time.perf_counter()
    n = 0
    for r in range(rounds):
        for t in transcripts:
            container.sessions.close(
                agent,
                f"{t['id']}-r{r}",
                CloseSessionRequest.model_validate(
                    {
                        "subject_id": f"{t['domain']}-{t['id']}-r{r}",
                        "channel": t.get("channel"),
                        "occurred_at": "2026-10-02T15:00:00Z",
                        "turns": t["turns"],
                    }
                ),
            )
            n += 1
    close_s = time.perf_counter() - t0
    poller = QueuePoller(aws.queue_url, endpoint_url=aws.endpoint_url, region="us-east-1")
    batch_ms: list[float] = []
    t1 = time.perf_counter()
    while True:
        b0 = time.perf_counter()
        got = poller.poll_once()
        if got == 0:
            break
        batch_ms.append((time.perf_counter() - b0) * 1000 / got)
    worker_s = time.perf_counter() - t1
    outcome: dict[str, int] = {}
    with container.db.tenant_transaction("bench-sessions") as conn:
        for row in conn.execute("SELECT status, outcome FROM sessions").fetchall():
            outcome[row["status"]] = outcome.get(row["status"], 0) + 1
    container.close()
    aws.stop()
    return {
        "sessions": n,
        "close_per_s": round(n / close_s, 1),
        "worker_sessions_per_s": round(n / worker_s, 2),
        "worker_ms_per_session_p50": round(float(np.percentile(batch_ms, 50)), 1) if batch_ms else None,
        "worker_ms_per_session_p95": round(float(np.percentile(batch_ms, 95)), 1) if batch_ms else None,
        "session_status": outcome,
        "extractor": "rules",
        "note": "per-session latency is the batch time divided by the messages in the batch (batches of up to 10)",
    }


def main(argv: list[str]) -> dict[str, Any]:
    p = argparse.ArgumentParser(prog="memory bench sessions")
    p.add_argument("--data", default=str(EXTRACTION_DATA))
    p.add_argument("--rounds", type=int, default=3, help="how many times to close every transcript")
    p.add_argument("--data-dir")
    a = p.parse_args(argv)
    return run(a.data, rounds=a.rounds, data_dir=a.data_dir)
