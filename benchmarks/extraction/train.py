"""Train the learned extractor's head offline and export it as plain numpy weights.

    .venv/bin/python benchmarks/extraction/train.py             # -> the layer's extractor-head.npz
    .venv/bin/python benchmarks/extraction/train.py --out /tmp/head.npz

Statements of the labelled files (the labels' quotes, masked, with their speaker;
system turns and injected instructions stay with the rules) are embedded with
the service's MiniLM ONNX embedder (cached by text hash in the temporary
folder), a one-hidden-layer network is fitted with scikit-learn (a development
dependency only), its temperature is fitted on a held-back share of the
transcripts (negative log-likelihood over a grid), and the weights are written
as `.npz` (float32, no pickles). Training is deterministic for a seed. The
sha256 it prints is the pin `HEAD_SHA256` in `adapters/extractors/learned.py`;
the run time needs numpy only. The code is `memory_bench.extraction_splits`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from memory_bench.extraction_splits import LAYER_DATA, TRAINING_FILES, train_and_export


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data",
        nargs="+",
        default=[str(p) for p in TRAINING_FILES],
        help="labelled transcript files (default: the generated, hand-labelled and written sets)",
    )
    parser.add_argument("--out", default=str(LAYER_DATA / "extractor-head.npz"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    report = train_and_export(args.data, Path(args.out), seed=args.seed)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
