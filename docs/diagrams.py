"""Draw the diagrams of docs/architecture.md into docs/img/.

    python docs/diagrams.py [--out docs/img]

Boxes and arrows drawn with matplotlib (the Agg backend, off screen): no graphviz or other tool
to install. The erasure state machine is drawn from `domain/erasure_steps.ERASURE_STEPS`, the list
Step Functions and the local runner both run, so the picture follows the code.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "layers" / "core" / "python"))

FILL = {"edge": "#dbe7f3", "compute": "#e8f1e0", "data": "#fbefd5", "ext": "#eeeeee", "step": "#e8f1e0"}
Box = tuple[float, float, float, float]  # x, y (lower left), width, height


def _canvas(width: float, height: float, title: str) -> tuple[Any, Any]:
    fig, ax = plt.subplots(figsize=(width, height))
    ax.set_xlim(0, width * 10)
    ax.set_ylim(0, height * 10)
    ax.axis("off")
    ax.set_title(title, fontsize=12)
    return fig, ax


def _box(ax: Any, box: Box, text: str, kind: str = "compute") -> Box:
    x, y, w, h = box
    ax.add_patch(
        FancyBboxPatch(
            (x, y), w, h, boxstyle="round,pad=0.3,rounding_size=0.8", fc=FILL[kind], ec="#555555", lw=1
        )
    )
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=8, wrap=True)
    return box


def _anchor(box: Box, side: str) -> tuple[float, float]:
    x, y, w, h = box
    return {
        "left": (x, y + h / 2),
        "right": (x + w, y + h / 2),
        "top": (x + w / 2, y + h),
        "bottom": (x + w / 2, y),
    }[side]


def _arrow(ax: Any, a: Box, b: Box, label: str = "", sides: tuple[str, str] = ("right", "left")) -> None:
    start, end = _anchor(a, sides[0]), _anchor(b, sides[1])
    ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=12, color="#333333", lw=1))
    if label:
        ax.text(
            (start[0] + end[0]) / 2,
            (start[1] + end[1]) / 2 + 0.8,
            label,
            ha="center",
            va="bottom",
            fontsize=7,
            color="#333333",
        )


def _save(fig: Any, out: Path, name: str) -> Path:
    path = out / name
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def components_aws(out: Path) -> Path:
    fig, ax = _canvas(11, 6, "Components in AWS (one stack, infra/)")
    agent = _box(ax, (2, 26, 12, 7), "agent / integration\n(JWT)", "ext")
    api = _box(ax, (20, 26, 13, 7), "API Gateway\n+ authorizer Lambda", "edge")
    fns = _box(
        ax,
        (39, 22, 18, 15),
        "Lambda functions\n(one layer: agent_memory)\nmemories, retrieve, review,\nsession_close, working,\npolicy, audit, health",
    )
    proxy = _box(ax, (64, 26, 12, 7), "RDS Proxy", "data")
    db = _box(ax, (82, 24, 16, 11), "Aurora PostgreSQL\nServerless v2\n+ pgvector, RLS", "data")
    s3 = _box(ax, (39, 44, 18, 7), "S3: masked transcripts\n(short TTL)", "data")
    sqs = _box(ax, (64, 44, 12, 7), "SQS + DLQ", "data")
    extract = _box(ax, (82, 44, 16, 7), "extract worker\nLambda", "compute")
    sched = _box(ax, (20, 5, 16, 9), "EventBridge schedules\npurge (nightly),\noutbox_relay (1 min)", "edge")
    sfn = _box(ax, (42, 5, 18, 9), "Step Functions:\nerasure (erasure_step\nLambda per step)", "compute")
    _box(ax, (66, 5, 16, 9), "CloudWatch alarms,\nSecrets Manager,\nVPC", "ext")
    _arrow(ax, agent, api, "HTTPS")
    _arrow(ax, api, fns)
    _arrow(ax, fns, proxy, "SQL")
    _arrow(ax, proxy, db)
    _arrow(ax, fns, s3, "close", ("top", "bottom"))
    _arrow(ax, s3, sqs, "outbox")
    _arrow(ax, sqs, extract)
    _arrow(ax, extract, db, "write gateway", ("bottom", "top"))
    _arrow(ax, sched, fns, "", ("top", "bottom"))
    _arrow(ax, fns, sfn, "erase", ("bottom", "top"))
    _arrow(ax, sfn, db, "steps", ("right", "bottom"))
    return _save(fig, out, "components-aws.png")


def components_local(out: Path) -> Path:
    fig, ax = _canvas(11, 5, "Components locally (memory serve, one process)")
    client = _box(ax, (2, 22, 12, 7), "curl / tests /\nagent (JWT)", "ext")
    server = _box(
        ax, (20, 20, 18, 11), "local HTTP server\n(the function table's\nroutes, same handlers)", "edge"
    )
    handlers = _box(ax, (44, 20, 16, 11), "handlers + services\n(the same layer code)")
    pg = _box(ax, (68, 28, 20, 9), "embedded PostgreSQL 18\n+ pgvector (data folder)", "data")
    moto = _box(ax, (68, 12, 20, 9), "moto in-process:\nSQS, DLQ, S3", "data")
    poller = _box(ax, (44, 4, 16, 9), "queue poller →\nextract handler")
    upkeep = _box(
        ax, (20, 4, 18, 9), "threads: outbox relay (5 s),\naccess-log sealing,\nreindex, local erasure runner"
    )
    _arrow(ax, client, server, "HTTP")
    _arrow(ax, server, handlers)
    _arrow(ax, handlers, pg, "SQL")
    _arrow(ax, handlers, moto, "boto3")
    _arrow(ax, moto, poller, "", ("left", "right"))
    _arrow(ax, poller, handlers, "", ("top", "bottom"))
    _arrow(ax, upkeep, handlers, "", ("top", "bottom"))
    return _save(fig, out, "components-local.png")


def _chain(ax: Any, steps: Sequence[tuple[str, str]], y: float, width: float, gap: float) -> list[Box]:
    boxes: list[Box] = []
    x = 2.0
    for text, kind in steps:
        boxes.append(_box(ax, (x, y, width, 9), text, kind))
        x += width + gap
    for a, b in itertools.pairwise(boxes):
        _arrow(ax, a, b)
    return boxes


def write_path(out: Path) -> Path:
    fig, ax = _canvas(12, 3.6, "Write path: POST /v1/memories or the extraction worker → WriteGateway")
    _chain(
        ax,
        [
            ("request or\nextracted\ncandidate", "ext"),
            ("prepare (pure):\nsanitize, mask,\nscreen, classify", "compute"),
            ("embed\n(outside the\ntransaction)", "compute"),
            ("tenant transaction:\nidempotency, subject\n+ slot locks, admission", "data"),
            ("near duplicate,\nresolve_conflict", "compute"),
            ("supersede + insert\n+ hash-chained\naudit events", "data"),
            ("commit →\ndecision", "ext"),
        ],
        y=12,
        width=14.5,
        gap=2.5,
    )
    return _save(fig, out, "write-path.png")


def read_path(out: Path) -> Path:
    fig, ax = _canvas(12, 3.6, "Read path: POST /v1/retrieve → RetrievalBroker")
    _chain(
        ax,
        [
            ("question", "ext"),
            ("embed the\nquestion", "compute"),
            ("memory_retrieval_\nscoped_rows: subject's\nrange, cosine, best\nsentence, lexemes", "data"),
            ("BM25 + dense fusion\nx trust x confidence\nx recency", "compute"),
            ("freshness gate\n(system of record,\nonly when needed)", "ext"),
            ("sections, token\nbudget, render\n(escaped)", "compute"),
            ("memory_log_retrieval:\ndurable access\nevent → answer", "data"),
        ],
        y=12,
        width=14.5,
        gap=2.5,
    )
    return _save(fig, out, "read-path.png")


def erasure_state_machine(out: Path) -> Path:
    from agent_memory.domain.erasure_steps import ERASURE_DEADLINE_HOURS, ERASURE_STEPS, OUTAGE_ERROR

    steps = list(ERASURE_STEPS)
    fig, ax = _canvas(12, 5.2, f"Erasure state machine (ERASURE_STEPS; deadline {ERASURE_DEADLINE_HOURS} h)")
    width, gap, y = 9.0, 2.6, 30.0
    boxes = _chain(
        ax, [("requested", "ext")] + [(s.name.replace("_", "_\n"), "step") for s in steps], y, width, gap
    )
    for box, step in zip(boxes[1:], steps, strict=True):
        x, by, w, _ = box
        retry = step.retry
        ax.text(
            x + w / 2,
            by - 1.5,
            f"retry {retry.max_attempts}x\n{retry.interval_seconds} s x{retry.backoff_rate:g}",
            ha="center",
            va="top",
            fontsize=6,
            color="#555555",
        )
    verified = _box(ax, (boxes[-1][0], 8, width, 7), "verified\n(receipt)", "ext")
    failed = _box(ax, (boxes[len(boxes) // 2][0], 8, width + 4, 7), "failed\n(retries exhausted)", "ext")
    _arrow(ax, boxes[-1], verified, "", ("bottom", "top"))
    _arrow(ax, boxes[len(boxes) // 2], failed, "any step", ("bottom", "top"))
    outage = steps[0].outage_retry
    ax.text(
        2,
        4,
        f"A database or dependency outage ({OUTAGE_ERROR}) is retried "
        f"{outage.max_attempts}x from {outage.interval_seconds} s (x{outage.backoff_rate:g}) before a step fails; "
        "the receipt step runs only after verification found every layer empty.",
        fontsize=7,
        color="#333333",
    )
    return _save(fig, out, "erasure-state-machine.png")


DIAGRAMS = (components_aws, components_local, write_path, read_path, erasure_state_machine)


def draw_all(out: Path) -> list[Path]:
    """Draw every diagram; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    return [diagram(out) for diagram in DIAGRAMS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "img")
    args = parser.parse_args(argv)
    for path in draw_all(args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
