"""`memory serve` as its own process, the way a developer or an operator starts it (shared by the
tests that need a real start-up: an operator's secret, an identity provider, the banner)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

MEMORY = Path(sys.executable).parent / "memory"


@dataclass
class ServedProcess:
    base: str  # http://127.0.0.1:<port>
    env: dict[str, str]
    lines: list[str] = field(default_factory=list)  # what it printed on stdout so far

    @property
    def banner(self) -> str:
        return "".join(self.lines)


@contextmanager
def memory_serve(
    data_dir: Path, ready: str = "Agent Memory Service on", **env: str
) -> Iterator[ServedProcess]:
    """`memory serve` on a free loopback port with its own data folder and none of this process's
    MEMORY_* settings; yields once a stdout line holds `ready` (a bound on start-up, not a timing
    check: the embedded PostgreSQL and the embedder load first)."""
    full_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMORY_") and k not in ("PORT", "DATABASE_URL")
    }
    full_env |= {"MEMORY_DATA_DIR": str(data_dir), "XDG_CACHE_HOME": str(data_dir / "cache"), **env}
    full_env.pop("XDG_RUNTIME_DIR", None)
    process = subprocess.Popen(
        [str(MEMORY), "serve", "--port", "0"],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    errors: list[str] = []
    started = threading.Event()

    def read(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line)
            if ready in line:
                started.set()

    for stream, into in ((process.stdout, lines), (process.stderr, errors)):
        threading.Thread(target=read, args=(stream, into), daemon=True).start()
    try:
        if not started.wait(timeout=600) or process.poll() is not None:
            pytest.fail("memory serve did not start:\n" + "".join(lines) + "".join(errors[-20:]))
        port = re.search(r"http://127\.0\.0\.1:(\d+)/v1", "".join(lines)).group(1)  # type: ignore[union-attr]
        yield ServedProcess(f"http://127.0.0.1:{port}", full_env, lines)
    finally:
        process.terminate()
        process.wait(timeout=60)
