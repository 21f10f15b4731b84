"""`memory serve` as a developer and as an operator run it: the console's development sign-in
(`/console/dev/token`, which signs a token for any roles) answers only with the development
secret the server generated into its data folder, never with an operator's MEMORY_JWT_SECRET."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

MEMORY = Path(sys.executable).parent / "memory"


@contextmanager
def memory_serve(data_dir: Path, **env: str) -> Iterator[str]:
    """`memory serve` on a free loopback port with its own data folder; yields its base URL."""
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("MEMORY_") and k not in ("PORT", "DATABASE_URL")
    }
    base_env |= {"MEMORY_DATA_DIR": str(data_dir), "XDG_CACHE_HOME": str(data_dir / "cache"), **env}
    process = subprocess.Popen(
        [str(MEMORY), "serve", "--port", "0"],
        env=base_env,
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
            if "Agent Memory Service on" in line:
                started.set()

    for stream, into in ((process.stdout, lines), (process.stderr, errors)):
        threading.Thread(target=read, args=(stream, into), daemon=True).start()
    try:
        # A bound on start-up (the embedded PostgreSQL and the embedder load first), not a timing check
        if not started.wait(timeout=600) or process.poll() is not None:
            pytest.fail("memory serve did not start:\n" + "".join(lines) + "".join(errors[-20:]))
        port = re.search(r"http://127\.0\.0\.1:(\d+)/v1", "".join(lines)).group(1)  # type: ignore[union-attr]
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=60)


def dev_sign_in_status(base: str) -> int:
    try:
        with urllib.request.urlopen(f"{base}/console/dev/token", timeout=60) as response:
            return int(response.status)
    except urllib.error.HTTPError as err:
        return err.code


def test_the_development_sign_in_answers_only_with_the_generated_development_secret(tmp_path):
    # Given `memory serve` on loopback with the secret it generates, and one given the operator's
    # own MEMORY_JWT_SECRET
    with memory_serve(tmp_path / "dev") as developer:
        # When each is asked for the console's development sign-in, from this machine
        generated = dev_sign_in_status(developer)
    with memory_serve(tmp_path / "ops", MEMORY_JWT_SECRET="operator-secret-" + "o" * 32) as operator:
        configured = dev_sign_in_status(operator)
    # Then only the developer's server offers it; the operator's decides who gets tokens
    assert generated == 200
    assert configured == 404
