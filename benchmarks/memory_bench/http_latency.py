"""`memory bench http`: the retrieve route as a caller sees it, through `memory serve` over HTTP,
with the query embedding included.

One run starts `memory serve` in a process of its own (a temporary data folder, a free port),
loads a small corpus through the API, then times POST /v1/retrieve four ways side by side:

- sequential: the project's `MemoryClient` (httpx, one kept-alive connection), one request after
  the other: what an agent's loop waits for;
- fresh: a new TCP connection per request (http.client), one after the other;
- paced: a fixed rate (default 60 requests/s) spread over a few kept-alive connections;
- saturating: several client processes as fast as they can, for the throughput and its latency.

Each mode reports p50/p95/p99 of the whole request as the client timed it, and the same
percentiles per stage from the service's `Server-Timing` header (embed, db, rank, freshness,
render, audit, serialize, total), so the seed's budget (80 ms p95 in all, 45 ms database, 15 ms
serialization) can be read stage by stage. `--embedder openai` runs the OpenAI-compatible
embedder against a local fake embeddings server that answers after `--embed-delay-ms`.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import http.client
import json
import multiprocessing
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from memory_bench.common import machine_state, percentile

TENANT = "bench-http"
SUBJECTS = 8
QUERIES = [
    "How should we contact them about the renewal?",
    "Who signs off on the contract?",
    "What did we promise about the onboarding?",
    "Which region is their data hosted in?",
    "What was the last support problem and how was it fixed?",
    "Do they prefer email or phone?",
    "When is the renewal due?",
    "What integrations do they use?",
]
FACTS = [  # (type, category, slot, content)
    (
        "preference",
        None,
        "preference.contact_channel",
        "Prefers email over phone for anything about billing.",
    ),
    (
        "fact",
        "STAKEHOLDER",
        "stakeholder.decision_maker",
        "Contract sign-off sits with the head of procurement.",
    ),
    (
        "fact",
        "ACCOUNT_PROFILE",
        "profile.data_residency",
        "Their tenant must stay hosted in the Frankfurt region.",
    ),
    (
        "fact",
        "TECHNICAL_ENVIRONMENT",
        "environment.integrations",
        "They sync tickets from Zendesk and contacts from HubSpot.",
    ),
    (
        "episode",
        None,
        None,
        "Login failures after the SSO change were fixed by rotating the SAML certificate.",
    ),
    (
        "preference",
        None,
        "preference.meeting_time",
        "Meetings work best on Tuesday mornings, Central European time.",
    ),
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class _FakeEmbeddings(BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/embeddings that answers after a fixed delay with a deterministic
    unit vector per input (a hash of the text), so the OpenAI path is timed without a network."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    delay_s = 0.0
    dims = 1536

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        texts = body.get("input") or []
        texts = [texts] if isinstance(texts, str) else texts
        time.sleep(self.delay_s)
        data = [
            {"object": "embedding", "index": i, "embedding": _vector(t, self.dims)}
            for i, t in enumerate(texts)
        ]
        out = json.dumps(
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    def log_message(self, format: str, *args: Any) -> None:
        return


def _vector(text: str, dims: int) -> list[float]:
    seed = hashlib.sha256(str(text).encode()).digest()
    rng = random.Random(struct.unpack("<Q", seed[:8])[0])  # noqa: S311 (test vectors, not secrets)
    v = [rng.gauss(0.0, 1.0) for _ in range(dims)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


@contextlib.contextmanager
def fake_embeddings(delay_ms: float) -> Iterator[str]:
    handler = type("Handler", (_FakeEmbeddings,), {"delay_s": delay_ms / 1000})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()


@contextlib.contextmanager
def served(data_dir: Path, env_extra: dict[str, str]) -> Iterator[tuple[str, str]]:
    """`memory serve` in its own process; yields (base URL, the local signing secret)."""
    port = _free_port()
    env = {**os.environ, "MEMORY_DATA_DIR": str(data_dir), "PORT": str(port), **env_extra}
    env.pop("MEMORY_JWT_SECRET", None)
    memory = Path(sys.executable).with_name("memory")
    cmd = [str(memory), "serve"] if memory.exists() else [sys.executable, "-m", "agent_memory.cli", "serve"]
    log = (data_dir / "serve.log").open("wb")
    proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT)  # noqa: S603 (our own command)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"memory serve exited ({proc.returncode}); see {data_dir / 'serve.log'}")
            try:
                with urllib.request.urlopen(base + "/v1/health", timeout=2) as r:  # noqa: S310 (loopback)
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("memory serve did not answer /v1/health within 180 s")
            time.sleep(0.5)
        from agent_memory.api.identity import local_secret

        yield base, local_secret(data_dir, None)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def _token(secret: str, roles: list[str]) -> str:
    from agent_memory.api.identity import issue_token

    return issue_token(secret, tenant_id=TENANT, sub="bench-http", roles=roles, clearance="confidential")


def load_corpus(base: str, token: str, per_subject: int) -> int:
    from agent_memory_client import MemoryClient

    written = 0
    with MemoryClient(base, token, timeout=60) as client:
        for s in range(SUBJECTS):
            for i in range(per_subject):
                kind, category, slot, text = FACTS[i % len(FACTS)]
                body: dict[str, Any] = {
                    "subject_id": f"ACC-HTTP-{s:03d}",
                    "type": kind,
                    "content": f"{text} (note {i})" if slot is None else text,
                    "source": {"kind": "customer_confirmed"},
                }
                if slot is not None:
                    body["slot"] = slot
                if category is not None:
                    body["category"] = category
                client.write_memory(body)
                written += 1
    return written


# Each mode numbers its queries from its own offset, so no mode finds another's query embedded.
FRESH_OFFSET, PACED_OFFSET, SATURATING_OFFSET = 100_000, 200_000, 300_000


def _request(i: int) -> tuple[str, bytes]:
    # Each query is new text (a number appended), so every request pays its embedding: the
    # service's query-embedding cache would otherwise answer all but the first few.
    query = f"{QUERIES[i % len(QUERIES)]} ({i})"
    body = {"subject_id": f"ACC-HTTP-{i % SUBJECTS:03d}", "query": query}
    return "/v1/retrieve", json.dumps(body).encode()


def _stages(header: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in (header or "").split(","):
        name, _, rest = part.strip().partition(";dur=")
        if name and rest:
            with contextlib.suppress(ValueError):
                out[name] = float(rest)
    return out


class _Samples:
    def __init__(self) -> None:
        self.total_ms: list[float] = []
        self.stages: dict[str, list[float]] = {}
        self.failures = 0
        self.lock = threading.Lock()

    def add(self, ms: float, header: str | None, ok: bool) -> None:
        with self.lock:
            if not ok:
                self.failures += 1
                return
            self.total_ms.append(ms)
            for name, value in _stages(header).items():
                self.stages.setdefault(name, []).append(value)

    def report(self, elapsed_s: float | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {"requests": len(self.total_ms), "failures": self.failures}
        out.update(_pcts(self.total_ms))
        if elapsed_s:
            out["throughput_rps"] = round(len(self.total_ms) / elapsed_s, 1)
        out["stages_ms"] = {name: _pcts(v) for name, v in sorted(self.stages.items())}
        return out


def _pcts(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {f"p{q}_ms": round(percentile(values, q), 2) for q in (50, 95, 99)}


def sequential_client(base: str, token: str, n: int) -> dict[str, Any]:
    """The project's MemoryClient, one kept-alive connection, one request after another."""
    import httpx
    from agent_memory_client import MemoryClient

    samples = _Samples()
    seen: dict[str, str | None] = {}
    http = httpx.Client(
        timeout=30, event_hooks={"response": [lambda r: seen.update(t=r.headers.get("server-timing"))]}
    )
    with MemoryClient(base, token, http_client=http) as client:
        for i in range(n + 5):
            body = json.loads(_request(i)[1])
            t0 = time.perf_counter()
            client.retrieve(body["subject_id"], body["query"])
            ms = (time.perf_counter() - t0) * 1000
            if i >= 5:  # the first few warm the connection and the server's caches
                samples.add(ms, seen.get("t"), True)
    http.close()
    return samples.report()


def _post(conn: http.client.HTTPConnection, token: str, i: int) -> tuple[bool, str | None]:
    path, body = _request(i)
    conn.request("POST", path, body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    response = conn.getresponse()
    response.read()
    return response.status == 200, response.getheader("Server-Timing")


def fresh_connections(base: str, token: str, n: int) -> dict[str, Any]:
    host, port = base.removeprefix("http://").split(":")
    samples = _Samples()
    for i in range(n):
        t0 = time.perf_counter()
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            ok, header = _post(conn, token, FRESH_OFFSET + i)
        except OSError:
            ok, header = False, None
        finally:
            conn.close()
        samples.add((time.perf_counter() - t0) * 1000, header, ok)
    return samples.report()


def paced(base: str, token: str, rate: float, seconds: float, connections: int) -> dict[str, Any]:
    """`rate` requests a second for `seconds`, each connection taking every n-th slot; a request is
    timed from its scheduled start, so a late one counts its wait (no coordinated omission)."""
    host, port = base.removeprefix("http://").split(":")
    samples = _Samples()
    total = int(rate * seconds)
    start = time.perf_counter() + 0.2

    def worker(k: int) -> None:
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        for i in range(k, total, connections):
            due = start + i / rate
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            try:
                ok, header = _post(conn, token, PACED_OFFSET + i)
            except OSError:
                ok, header = False, None
                conn.close()
                conn = http.client.HTTPConnection(host, int(port), timeout=30)
            samples.add((time.perf_counter() - due) * 1000, header, ok)
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(connections)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    report = samples.report()
    report["rate_rps"] = rate
    return report


def _saturate_worker(args: tuple[str, str, float, int]) -> tuple[list[float], list[str | None], int]:
    base, token, seconds, seed = args
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    times: list[float] = []
    headers: list[str | None] = []
    failures = 0
    end = time.perf_counter() + seconds
    i = SATURATING_OFFSET + seed
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        try:
            ok, header = _post(conn, token, i)
        except OSError:
            ok, header = False, None
            conn.close()
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
        if ok:
            times.append((time.perf_counter() - t0) * 1000)
            headers.append(header)
        else:
            failures += 1
        i += 97
    conn.close()
    return times, headers, failures


def saturating(base: str, token: str, clients: int, seconds: float) -> dict[str, Any]:
    samples = _Samples()
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(clients) as pool:
        t0 = time.perf_counter()
        results = pool.map(_saturate_worker, [(base, token, seconds, k) for k in range(clients)])
        elapsed = time.perf_counter() - t0
    for times, headers, failures in results:
        samples.failures += failures
        for ms, header in zip(times, headers, strict=True):
            samples.add(ms, header, True)
    report = samples.report(elapsed_s=min(elapsed, seconds + 1))
    report["clients"] = clients
    return report


def table(report: dict[str, Any]) -> str:
    stages = ["embed", "db", "rank", "freshness", "render", "audit", "serialize", "total"]
    head = "| mode | requests | p50 ms | p95 ms | p99 ms | " + " | ".join(f"{s} p95" for s in stages) + " |"
    lines = [head, "|" + "---|" * (5 + len(stages))]
    for mode, r in report["modes"].items():
        st = r.get("stages_ms", {})
        cells = [f"{st.get(s, {}).get('p95_ms', '-')}" for s in stages]
        lines.append(
            f"| {mode} | {r['requests']} | {r.get('p50_ms', '-')} | {r.get('p95_ms', '-')} | {r.get('p99_ms', '-')} | "
            + " | ".join(cells)
            + " |"
        )
    ratio = report.get("sequential_over_paced_p50")
    if ratio is not None:
        lines.append(f"\nsequential keep-alive p50 / paced p50: {ratio}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="memory-bench-http-"))
    env: dict[str, str] = {}
    with contextlib.ExitStack() as stack:
        if args.embedder == "openai":
            url = stack.enter_context(fake_embeddings(args.embed_delay_ms))
            env.update(
                {
                    "MEMORY_EMBEDDER": "openai",
                    "MEMORY_OPENAI_BASE_URL": url,
                    "MEMORY_OPENAI_API_KEY": "fake-key",
                }
            )
        try:
            base, secret = stack.enter_context(served(root, env))
            writer = _token(secret, ["integration", "agent"])
            agent = _token(secret, ["agent"])
            loaded = load_corpus(base, writer, args.per_subject)
            modes: dict[str, Any] = {}
            modes["sequential"] = sequential_client(base, agent, args.requests)
            modes["fresh"] = fresh_connections(base, agent, args.requests)
            modes["paced"] = paced(base, agent, args.rate, args.paced_seconds, args.connections)
            if args.saturate_clients > 0:
                modes["saturating"] = saturating(base, agent, args.saturate_clients, args.saturate_seconds)
        finally:
            if not args.keep:
                shutil.rmtree(root, ignore_errors=True)
    seq, pac = modes["sequential"].get("p50_ms"), modes["paced"].get("p50_ms")
    return {
        "bench": "http",
        "embedder": args.embedder,
        "embed_delay_ms": args.embed_delay_ms if args.embedder == "openai" else None,
        "memories": loaded,
        "modes": modes,
        "sequential_over_paced_p50": round(seq / pac, 2) if seq and pac else None,
        "machine": machine_state(),
    }


def main(argv: list[str]) -> tuple[dict[str, Any], str | None]:
    p = argparse.ArgumentParser(prog="memory bench http", description=__doc__.split("\n\n")[0])
    p.add_argument("--requests", type=int, default=200, help="requests in the sequential and fresh modes")
    p.add_argument("--rate", type=float, default=60.0, help="the paced mode's requests per second")
    p.add_argument("--paced-seconds", type=float, default=10.0)
    p.add_argument("--connections", type=int, default=4, help="kept-alive connections of the paced mode")
    p.add_argument("--saturate-clients", type=int, default=4, help="client processes (0: skip the mode)")
    p.add_argument("--saturate-seconds", type=float, default=10.0)
    p.add_argument("--per-subject", type=int, default=12, help="memories written per subject first")
    p.add_argument("--embedder", choices=["local", "openai"], default="local")
    p.add_argument("--embed-delay-ms", type=float, default=20.0, help="the fake OpenAI server's delay")
    p.add_argument("--keep", action="store_true", help="keep the temporary data folder")
    p.add_argument("--json")
    a = p.parse_args(argv)
    report = run(a)
    print(table(report), file=sys.stderr)
    return report, a.json
