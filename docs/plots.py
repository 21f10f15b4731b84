"""Draw the plots of docs/benchmarks.md from docs/benchmark-figures.json into docs/img/.

    python docs/plots.py [--data docs/benchmark-figures.json] [--out docs/img]

The JSON holds the figures the page quotes (each measured with the command the page names), so the
plots and the text cannot disagree; after a new run, update both and run this again. Needs only
matplotlib (a development dependency); it draws off screen (the Agg backend), with no database.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = Path(__file__).resolve().parent
TARGET_STYLE: dict[str, Any] = {"color": "#c0392b", "linestyle": "--", "linewidth": 1.2}
BAR = "#4a78a8"
BAR_LIGHT = "#9dbbd8"


def _save(fig: Any, out: Path, name: str) -> Path:
    path = out / name
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})  # no version stamp: reruns change nothing
    plt.close(fig)
    return path


def _wrapped(names: list[str]) -> list[str]:
    return [textwrap.fill(n, 16) for n in names]


def retrieve_latency(data: dict[str, Any], out: Path) -> Path:
    r = data["retrieve_1m"]
    names, p50, p95 = _wrapped(r["workloads"]), r["p50_ms"], r["p95_ms"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], p50, 0.4, label="p50", color=BAR_LIGHT)
    ax.bar([i + 0.2 for i in x], p95, 0.4, label="p95", color=BAR)
    ax.axhline(r["targets"]["broker_p95_ms"], label="broker p95 target", **TARGET_STYLE)
    ax.set_xticks(list(x), names)
    ax.set_ylabel("ms per retrieval, one client")
    ax.set_title("Retrieval latency at 1M memories, beside the least a retrieval can cost")
    ax.legend(frameon=False)
    return _save(fig, out, "retrieve-latency.png")


def retrieve_throughput(data: dict[str, Any], out: Path) -> Path:
    r = data["retrieve_1m"]
    names = _wrapped(r["workloads"])
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    left.bar(names, r["qps_16"], color=BAR)
    left.axhline(r["targets"]["qps_16"], label="target", **TARGET_STYLE)
    left.set_ylabel("retrievals per second, 16 clients")
    left.set_title("Throughput")
    left.legend(frameon=False)
    right.bar(names, r["cpu_ms_client_16"], color=BAR_LIGHT, label="client")
    right.bar(names, r["cpu_ms_server_16"], bottom=r["cpu_ms_client_16"], color=BAR, label="PostgreSQL")
    right.axhline(
        r["targets"]["cpu_ms_per_op_at_1000_qps"], label="budget at 1,000/s on 2 cores", **TARGET_STYLE
    )
    right.set_ylabel("CPU ms per retrieval")
    right.set_title("Where the CPU goes")
    right.legend(frameon=False)
    return _save(fig, out, "retrieve-throughput.png")


def retrieve_scale(data: dict[str, Any], out: Path) -> Path:
    s = data["retrieve_scale"]
    ratios = [b / a for a, b in zip(s["at_1m"], s["at_6m"], strict=True)]
    fig, ax = plt.subplots(figsize=(7, 3.2))
    ax.bar(s["figures"], ratios, color=BAR)
    ax.axhline(1.0, color="black", linewidth=0.8)
    for i, v in enumerate(ratios):
        ax.text(i, v + 0.02, f"{v:.2f}x", ha="center")
    ax.set_ylabel("6M memories / 1M memories")
    ax.set_ylim(0, max(ratios) * 1.2)
    ax.set_title("Growth from 1M to 6M memories (same command, same day)")
    return _save(fig, out, "retrieve-scale.png")


def longmemeval(data: dict[str, Any], out: Path) -> Path:
    q = data["longmemeval"]
    systems = list(q["systems"].items())
    metrics = q["metrics"]
    width = 0.8 / len(systems)
    fig, ax = plt.subplots(figsize=(8, 3.8))
    colours = [BAR, BAR_LIGHT, "#bbbbbb"]
    for n, (name, values) in enumerate(systems):
        xs = [i - 0.4 + width * (n + 0.5) for i in range(len(metrics))]
        ax.bar(xs, values, width, label=name, color=colours[n % len(colours)])
    for i, target in enumerate(q["targets"]):
        ax.hlines(target, i - 0.45, i + 0.45, **TARGET_STYLE, label="target" if i == 0 else "_nolegend_")
    ax.set_xticks(range(len(metrics)), metrics)
    ax.set_ylim(0, 1.1)
    ax.set_title("LongMemEval-S, 239 questions")
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return _save(fig, out, "longmemeval.png")


def similarity_floor(data: dict[str, Any], out: Path) -> Path:
    f = data["similarity_floor"]
    fig, ax = plt.subplots(figsize=(6, 3.4))
    ax.plot(f["floors"], f["best_evidence_kept"], marker="o", label="best evidence turn per question")
    ax.plot(f["floors"], f["evidence_kept"], marker="o", label="evidence turns")
    ax.plot(f["floors"], f["other_kept"], marker="o", label="other turns")
    ax.axvline(f["chosen"], color="black", linewidth=0.8, linestyle=":", label="chosen floor")
    ax.set_xlabel("cosine floor (all-MiniLM-L6-v2)")
    ax.set_ylabel("share kept")
    ax.set_ylim(0, 1.05)
    ax.set_title("What the similarity floor keeps")
    ax.legend(frameon=False, fontsize=8)
    return _save(fig, out, "similarity-floor.png")


def screening(data: dict[str, Any], out: Path) -> Path:
    s = data["screening"]
    names = s["categories"]
    fig, ax = plt.subplots(figsize=(8, 3.6))
    x = range(len(names))
    ax.bar([i - 0.2 for i in x], s["recall_dev"], 0.4, label="dev (tuned on)", color=BAR_LIGHT)
    ax.bar([i + 0.2 for i in x], s["recall_heldout"], 0.4, label="held-out (scored once)", color=BAR)
    ax.set_xticks(list(x), names, rotation=15)
    ax.set_ylim(0, 1.1)
    ax.set_ylabel("recall")
    ax.set_title("Injection screening recall by category")
    ax.legend(frameon=False, loc="lower left")
    return _save(fig, out, "screening.png")


def write_variants(data: dict[str, Any], out: Path) -> Path:
    w = data["write_hnsw_ab"]
    base = w["records_per_s"][0]
    fig, ax = plt.subplots(figsize=(8, 3.4))
    ax.barh(w["variants"], [v / base for v in w["records_per_s"]], color=BAR)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("write throughput, x the index as it was (same run, interleaved blocks)")
    ax.set_title("What bounded writes: the HNSW index on every insert")
    return _save(fig, out, "write-variants.png")


def peer(data: dict[str, Any], out: Path) -> Path:
    """This service against mem0 (its default schema and with a per-user index), as ratios from one run,
    a row per corpus size (each size its own run)."""
    d = data["peer"]
    figures = d["ratio_figures"]
    sizes = list(d["sizes"].items())
    fig, axes = plt.subplots(
        len(sizes), 2, figsize=(11, 3.6 * len(sizes)), gridspec_kw={"width_ratios": [3, 2]}, squeeze=False
    )
    top = max(v for _, run in sizes for r in run["ratios"].values() for v in (r[f] for f in figures))
    for (size, run), (left, right) in zip(sizes, axes, strict=True):
        variants = list(run["ratios"].items())
        width = 0.8 / len(variants)
        colours = [BAR_LIGHT, BAR]
        for n, (name, ratios) in enumerate(variants):
            xs = [i - 0.4 + width * (n + 0.5) for i in range(len(figures))]
            values = [ratios[f] for f in figures]
            left.bar(xs, values, width, label=f"/ {name}", color=colours[n % len(colours)])
            for x, v in zip(xs, values, strict=True):
                left.text(x, v + 0.05, f"{v:.2f}", ha="center", fontsize=7)
        left.axhline(1.0, color="black", linewidth=0.8)
        left.hlines(d["goals"]["qps_16"], 1.55, 2.45, **TARGET_STYLE, label="target, 16 clients")
        left.set_xticks(range(len(figures)), [d["ratio_labels"][f] for f in figures])
        left.set_ylim(0, max(top, d["goals"]["qps_16"]) * 1.15)
        left.set_ylabel("this service / mem0, same run")
        left.set_title(f"Against mem0 at {size} memories ({run['queries']:,} questions)")
        left.legend(frameon=False, fontsize=8, loc="upper left")
        systems = list(run["recall"].items())
        metrics = ["recall@1\n(first listed)", "recall@1\n(highest score)", "recall@5"]
        width = 0.8 / len(systems)
        for n, (name, values) in enumerate(systems):
            xs = [i - 0.4 + width * (n + 0.5) for i in range(len(metrics))]
            right.bar(xs, values, width, label=name, color=[BAR, BAR_LIGHT, "#bbbbbb"][n % 3])
        right.set_xticks(range(len(metrics)), metrics)
        right.set_ylim(0, 1.3)
        right.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        right.set_title(f"Finding the memory a question is about, {size}")
        right.legend(frameon=False, fontsize=7, loc="upper center", ncol=3)
    return _save(fig, out, "peer.png")


PLOTS = (
    retrieve_latency,
    retrieve_throughput,
    retrieve_scale,
    longmemeval,
    similarity_floor,
    screening,
    write_variants,
    peer,
)


def draw_all(data_path: Path, out: Path) -> list[Path]:
    """Draw every plot; returns the files written."""
    data = json.loads(data_path.read_text())
    out.mkdir(parents=True, exist_ok=True)
    return [plot(data, out) for plot in PLOTS]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=HERE / "benchmark-figures.json")
    parser.add_argument("--out", type=Path, default=HERE / "img")
    args = parser.parse_args(argv)
    for path in draw_all(args.data, args.out):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
