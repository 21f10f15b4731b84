"""`memory serve` on a port something already listens on: one line saying so and what to do,
before anything (secret, database, moto) is created."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest


@pytest.mark.process  # starts `memory serve`
def test_a_port_in_use_is_one_line_before_anything_is_created(tmp_path):
    # Given something listening on a loopback port, and an empty folder for the server's data
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        data = tmp_path / "data"
        env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "MEMORY_JWT_SECRET")}
        env.update(MEMORY_DATA_DIR=str(data), MEMORY_HOST="127.0.0.1")
        # When `memory serve` is started on that port
        done = subprocess.run(
            [sys.executable, "-m", "agent_memory.cli", "serve", "--port", str(port)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    # Then it exits 2 with one line naming the port and --port, no traceback, and created nothing
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"memory serve: port {port} on 127.0.0.1 is in use")
    assert "--port N" in lines[0]
    assert not data.exists()


def test_a_host_that_does_not_resolve_is_named_as_such_not_as_a_port_in_use():
    from agent_memory.local.serve_command import cannot_listen

    # When the server's host does not resolve
    problem = cannot_listen("no-such-host.invalid", 8080)
    # Then the reason names the host and MEMORY_HOST, not a port in use
    assert problem is not None and problem.startswith(
        "host 'no-such-host.invalid' (MEMORY_HOST) does not resolve"
    )


def test_a_free_port_is_no_problem():
    from agent_memory.local.serve_command import cannot_listen

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert cannot_listen("127.0.0.1", port) is None
