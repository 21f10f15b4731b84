"""The first five minutes, as a new user has them: `memory serve` from a state with no data folder,
then the README's Try-it block run as written (only its port changed to the test server's), in
another shell that knows nothing of the server's folder. The server's stdout holds its banner and
no CloudWatch metric lines; its stderr no runtime-dir warning; `memory token` says which secret
it signed with."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
MEMORY = Path(sys.executable).parent / "memory"


def try_it_block() -> str:
    readme = (REPO / "README.md").read_text()
    after = readme[readme.index("Try it") :]
    return after[after.index("```bash\n") + len("```bash\n") : after.index("\n```", after.index("```bash"))]


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A user's environment: no data folder, no secret, metrics and XDG_RUNTIME_DIR as a machine has them."""
    home = tmp_path_factory.mktemp("home")
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "POWERTOOLS_"))
        and k not in ("XDG_RUNTIME_DIR", "PORT", "DATABASE_URL")
    }
    return env | {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}


@pytest.fixture(scope="module")
def server(fresh: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    workdir = tmp_path_factory.mktemp("checkout")  # where the user typed `make serve`
    process = subprocess.Popen(
        [str(MEMORY), "serve", "--port", "0"],
        cwd=workdir,
        env=fresh,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout: list[str] = []
    stderr: list[str] = []
    banner = threading.Event()

    def read(stream: Any, into: list[str]) -> None:
        for line in stream:
            into.append(line)
            if "Agent Memory Service on" in line:
                banner.set()

    readers = [
        threading.Thread(target=read, args=(process.stdout, stdout), daemon=True),
        threading.Thread(target=read, args=(process.stderr, stderr), daemon=True),
    ]
    for reader in readers:
        reader.start()
    try:
        # A bound on start-up (the embedded PostgreSQL and the embedder load first), not a timing check
        if not banner.wait(timeout=600) or process.poll() is not None:
            pytest.fail("memory serve did not start:\n" + "".join(stderr[-30:]))
        port = re.search(r"http://127\.0\.0\.1:(\d+)/v1", "".join(stdout)).group(1)  # type: ignore[union-attr]
        yield {"port": port, "stdout": stdout, "stderr": stderr, "workdir": workdir}
    finally:
        process.terminate()
        process.wait(timeout=60)
        for reader in readers:
            reader.join(timeout=10)


def test_the_readme_try_it_works_as_written_against_a_fresh_server(server, fresh):
    # Given the server started in a folder of its own, and the README's Try-it block
    block = try_it_block().replace("localhost:8080", f"localhost:{server['port']}")
    # When a second shell runs it from the repository, which has no data folder of that server
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block],
        cwd=REPO,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=120,
    )
    # Then the write is admitted and the retrieval returns it
    assert result.returncode == 0, result.stderr
    assert '"decision":"admitted"' in result.stdout.replace(" ", ""), result.stdout
    assert "Please send renewal paperwork by email" in result.stdout.split('"decision"')[-1]
    # And `memory token` said it used the running server's folder
    assert f"{server['workdir']}" in result.stderr and "the server on port" in result.stderr


def test_the_local_server_prints_no_metric_lines_and_no_runtime_dir_warning(server, fresh):
    # Given the server has answered a retrieval (which emits metrics in Lambda)
    token = subprocess.run(
        [str(MEMORY), "token", "--tenant", "acme", "--sub", "me", "--roles", "agent"],
        env=fresh,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    request = urllib.request.Request(
        f"http://127.0.0.1:{server['port']}/v1/retrieve",
        data=json.dumps({"subject_id": "ACC-1", "query": "renewal"}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
    # Then stdout holds its banner only, and stderr no warning about XDG_RUNTIME_DIR or metrics
    out = "".join(server["stdout"])
    err = "".join(server["stderr"])
    assert '"_aws"' not in out and "CloudWatchMetrics" not in out
    assert "XDG_RUNTIME_DIR" not in err and "No application metrics" not in err
    assert "Agent Memory Service on" in out
    # and it says where the review console is, which answers there
    console = next(line.split()[1] for line in out.splitlines() if line.strip().startswith("console:"))
    with urllib.request.urlopen(console, timeout=60) as page:
        assert page.status == 200 and page.headers.get_content_type() == "text/html"


def test_the_tutorial_runs_as_written_against_a_fresh_server(server, fresh):
    # Given the tutorial's shell blocks, in order (only the port changed to the test server's)
    tutorial = (REPO / "docs" / "tutorial.md").read_text()
    blocks = re.findall(r"```bash\n(.*?)```", tutorial, flags=re.S)
    script = "\n".join(blocks).replace("localhost:8080", f"localhost:{server['port']}")
    # When a second shell runs them from the repository
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=REPO,
        env=fresh,
        capture_output=True,
        text=True,
        timeout=180,
    )
    # Then each step shows what the tutorial says: two writes admitted, the discount held, recalled
    # without it, listed beside its family, approved with evidence, then recalled
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("admitted\nadmitted\npending_approval ['commercial_term_requires_approval']\n"), out
    first, second = out.split("[('contract.discount', ['contract.seat_price'])]\n")
    assert "Seat price is $42 per month." in first and "20% off" not in first
    assert second.startswith("active human_verified\n")
    assert "promised 20% off" in second and "Seat price is $42 per month." in second
