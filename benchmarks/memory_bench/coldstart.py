"""`memory bench coldstart`: each handler's cold import, in fresh processes, beside the floor.

For every function of the function table, a fresh interpreter imports `functions/<name>/handler.py`
(its folder first on `sys.path`, as Lambda puts the code asset) under `-X importtime`, several
times; the report gives the median import seconds, its ratio to the floor, and the five modules
with the largest cumulative import time in the median run. The floor is a bare Powertools handler
(Logger, Metrics, the REST resolver; Tracer imported), pydantic and psycopg, timed the same way in
the same run, so the ratios hold on a shared, noisy machine where the seconds do not.

Where a handler can answer without a database, the first invocation is timed too (the health
route answers 503 when its database refuses the connection). For the functions that embed on
every call, the embedding model's load (and the extractor's, for `extract`) is timed apart.

One discarded run per handler first compiles its bytecode. `--no-bytecode` measures instead what
the Lambda layer ships today: the standard library's bytecode only (the layer holds none, and
Lambda's /opt is read-only, so nothing is written back).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any

from agent_memory.functions_spec import FUNCTIONS, functions_dir

FLOOR = "floor"
# The handler a fresh process imports, then (when an event is named) invokes once.
_CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.perf_counter()
import handler
imported = time.perf_counter() - t0
first = model = None
if sys.argv[2]:
    from agent_memory.local.lambda_context import LocalLambdaContext
    event = json.loads(open(sys.argv[2]).read())
    t1 = time.perf_counter()
    response = handler.lambda_handler(event, LocalLambdaContext(function_name="coldstart"))
    first = time.perf_counter() - t1
if sys.argv[3]:
    from agent_memory.bootstrap import build_embedder, build_extractor
    from agent_memory.config import Settings
    t2 = time.perf_counter()
    settings = Settings()
    embedder = build_embedder(settings)
    embedder.embed(["warm up"])
    if sys.argv[3] == "extractor":
        build_extractor(settings, embedder)
    model = time.perf_counter() - t2
print(json.dumps({"import_s": imported, "first_invocation_s": first, "model_init_s": model}))
"""
_FLOOR_HANDLER = """
import psycopg
import pydantic
from aws_lambda_powertools import Logger, Metrics, Tracer  # noqa: F401  (Tracer: imported, as every handler does)
from aws_lambda_powertools.event_handler import APIGatewayRestResolver

logger = Logger(service="floor")
metrics = Metrics(namespace="Floor", service="floor")
app = APIGatewayRestResolver()


class Pong(pydantic.BaseModel):
    ok: bool = True


@app.get("/ping")
def ping() -> dict:
    return Pong().model_dump()


def lambda_handler(event, context):
    return app.resolve(event, context)
"""
# Handlers whose first invocation needs no database or secret: the sample event to send.
FIRST_INVOCATION_EVENTS = {"health": "health/health.json"}
# The functions that embed on every call, and what their first call loads beside the import: the
# embedder (built and run once) and, for the extraction worker, the extractor over it.
MODEL_LOADING = {"memories": "embedder", "retrieve": "embedder", "extract": "extractor"}
# The database a handler reaches when invoked here: a port nothing listens on (refused at once).
_NO_DATABASE = "postgresql://coldstart@127.0.0.1:9/coldstart"


def _events_dir() -> Path:
    return functions_dir().parent / "events"


def _child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "AWS_LAMBDA_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # the discarded first run writes the bytecode
    env.update(
        {
            "DATABASE_URL": _NO_DATABASE,
            "MEMORY_DATABASE_POOL_TIMEOUT_S": "1",
            "POWERTOOLS_TRACE_DISABLED": "true",
        }
    )
    return env


def parse_importtime(stderr: str) -> list[tuple[str, int]]:
    """(module, cumulative microseconds) of every line `-X importtime` wrote."""
    rows: list[tuple[str, int]] = []
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|", 2)
        rows.append((name.strip(), int(cumulative)))
    return rows


def top_modules(rows: list[tuple[str, int]], n: int = 5) -> list[dict[str, Any]]:
    """The n modules with the largest cumulative time, the handler itself left out."""
    ranked = sorted((r for r in rows if r[0] != "handler"), key=lambda r: r[1], reverse=True)
    return [{"module": name, "cumulative_s": round(us / 1e6, 3)} for name, us in ranked[:n]]


def _run_once(
    folder: Path, event: Path | None, model: str | None, env: dict[str, str]
) -> tuple[dict[str, Any], str]:
    argv = [sys.executable, "-X", "importtime", "-c", _CHILD, str(folder), str(event or ""), model or ""]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=folder, timeout=120)  # noqa: S603  (this interpreter, our script)
    if done.returncode != 0:
        raise RuntimeError(f"{folder.name}: the import failed\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def measure(
    folder: Path, runs: int, env: dict[str, str], event: Path | None = None, model: str | None = None
) -> dict[str, Any]:
    _run_once(folder, event, model, env)  # compiles the bytecode; not counted
    samples = [_run_once(folder, event, model, env) for _ in range(runs)]
    imports = [s["import_s"] for s, _ in samples]
    median = statistics.median(imports)
    # The run nearest the median names the modules.
    _, stderr = min(samples, key=lambda s: abs(s[0]["import_s"] - median))
    firsts = [s["first_invocation_s"] for s, _ in samples if s["first_invocation_s"] is not None]
    models = [s["model_init_s"] for s, _ in samples if s["model_init_s"] is not None]
    return {
        "import_s": round(median, 3),
        "import_runs_s": [round(x, 3) for x in imports],
        "first_invocation_s": round(statistics.median(firsts), 3) if firsts else None,
        # Reported apart from the import: the model the embedding functions load on first use.
        "model_init_s": round(statistics.median(models), 3) if models else None,
        "top_modules": top_modules(parse_importtime(stderr)),
    }


def _stdlib_bytecode(prefix: Path, env: dict[str, str]) -> None:
    """The standard library's bytecode under `prefix`: a Lambda runtime ships it, the layer does not."""
    stdlib = sysconfig.get_paths()["stdlib"]
    subprocess.run(  # noqa: S603 (this interpreter, the standard library)
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            "-j",
            "0",
            "-x",
            r"[/\\](test|tests|idlelib|lib2to3)[/\\]",
            stdlib,
        ],
        env={**env, "PYTHONPYCACHEPREFIX": str(prefix)},
        capture_output=True,
        check=False,  # a file or two of the standard library may not compile (templates): not ours
        timeout=600,
    )


def run(runs: int = 5, names: list[str] | None = None, *, bytecode: bool = True) -> dict[str, Any]:
    with contextlib.ExitStack() as stack:
        env = _child_env()
        if not bytecode:
            # As the layer ships today: no bytecode for the packages or the service, so each cold
            # start compiles them (Lambda's /opt is read-only: nothing is written back).
            prefix = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="coldstart-pyc-")))
            _stdlib_bytecode(prefix, env)
            env.update({"PYTHONPYCACHEPREFIX": str(prefix), "PYTHONDONTWRITEBYTECODE": "1"})
        report = _run(runs, names, env)
    report["bytecode"] = "cached" if bytecode else "standard library only"
    return report


def _run(runs: int, names: list[str] | None, env: dict[str, str]) -> dict[str, Any]:
    selected = [spec.name for spec in FUNCTIONS if names is None or spec.name in names]
    unknown = set(names or ()) - set(selected)
    if unknown:
        raise ValueError(f"no such function: {', '.join(sorted(unknown))}")
    with tempfile.TemporaryDirectory(prefix="coldstart-floor-") as tmp:
        floor_dir = Path(tmp)
        (floor_dir / "handler.py").write_text(_FLOOR_HANDLER)
        floor = measure(floor_dir, runs, env)
    handlers: dict[str, Any] = {}
    for name in selected:
        event = FIRST_INVOCATION_EVENTS.get(name)
        result = measure(
            functions_dir() / name,
            runs,
            env,
            event=_events_dir() / event if event else None,
            model=MODEL_LOADING.get(name),
        )
        result["ratio_to_floor"] = round(result["import_s"] / floor["import_s"], 2)
        handlers[name] = result
    return {
        "runs": runs,
        "python": sys.version.split()[0],
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "floor": floor,
        "handlers": handlers,
    }


def table(report: dict[str, Any]) -> str:
    lines = [
        f"{'handler':<14} {'import s':>9} {'x floor':>8} {'1st call s':>10} {'model s':>8}  "
        "top modules (cumulative s)",
    ]

    def row(name: str, r: dict[str, Any], ratio: str) -> str:
        first = "" if r["first_invocation_s"] is None else f"{r['first_invocation_s']:.3f}"
        model = "" if r.get("model_init_s") is None else f"{r['model_init_s']:.3f}"
        top = ", ".join(f"{m['module']} {m['cumulative_s']:.2f}" for m in r["top_modules"][:3])
        return f"{name:<14} {r['import_s']:>9.3f} {ratio:>8} {first:>10} {model:>8}  {top}"

    lines.append(row(FLOOR, report["floor"], "1.00"))
    for name, r in report["handlers"].items():
        lines.append(row(name, r, f"{r['ratio_to_floor']:.2f}"))
    lines.append(f"median of {report['runs']} fresh processes each; load average {report['load_average']}")
    return "\n".join(lines)


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(
        prog="memory bench coldstart",
        description="Each handler's import (and, without a database, first invocation) in fresh "
        "processes, beside a bare Powertools + pydantic + psycopg handler in the same run.",
    )
    p.add_argument("--runs", type=int, default=5, help="counted fresh processes per handler (median)")
    p.add_argument("--only", nargs="+", metavar="NAME", help="these functions only")
    p.add_argument(
        "--no-bytecode",
        action="store_true",
        help="as the Lambda layer ships today: only the standard library has bytecode, every package "
        "and the service are compiled at each import",
    )
    p.add_argument("--json", help="write the full report here")
    a = p.parse_args(argv)
    if a.runs < 1:
        p.error("--runs must be 1 or more")
    return run(a.runs, a.only, bytecode=not a.no_bytecode), a.json
