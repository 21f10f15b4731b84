"""The TypeScript client (`clients/typescript`) against a real `memory serve`: its own tests, run
by Node's test runner on the compiled JavaScript, with the server's URL and tokens minted here.

Node and npm are required, as they are in CI: without them this test fails, saying so, rather than
skipping (a skipped client would look like a tested one)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from serve_process import memory_serve

pytestmark = pytest.mark.e2e

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "clients" / "typescript"
SECRET = "typescript-client-tests-" + "s" * 40
TENANT = "ts-client-tests"
SUBJECT, OTHER_SUBJECT, ERASED_SUBJECT = "TS-ACC-4812", "TS-ACC-9001", "TS-ACC-ERASE-1"


def node_tools() -> tuple[str, str]:
    """The node and npm executables, or a failure naming what to install."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.fail(
            "the TypeScript client's tests need Node.js 18 or later and npm on PATH "
            f"(node: {node or 'missing'}, npm: {npm or 'missing'}); on Debian: apt-get install nodejs npm"
        )
    version = subprocess.run([node, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 18:
        pytest.fail(f"the TypeScript client needs Node.js 18 or later; this is {version}")
    return node, npm


def failure(cmd: list[str], returncode: int, stdout: str, stderr: str) -> str:
    return f"`{' '.join(cmd[1:])}` failed ({returncode}):\n{stdout[-6000:]}\n{stderr[-3000:]}"


@pytest.fixture(scope="module")
def package_env() -> dict[str, str]:
    """The environment npm and node run in (none of this process's MEMORY_* settings), once the
    package's dependencies are installed from its lock file (when node_modules is absent)."""
    _, npm = node_tools()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    if not (PACKAGE / "node_modules").is_dir():
        cmd = [npm, "ci", "--no-audit", "--no-fund"]
        done = subprocess.run(cmd, cwd=PACKAGE, env=env, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            pytest.fail(failure(cmd, done.returncode, done.stdout, done.stderr))
    return env


def tokens(base: str) -> dict[str, str]:
    """The server's URL, the tests' customers and a token of each role (tenant `ts-client-tests`)."""
    from agent_memory.api.identity import issue_token

    def token(sub: str, roles: list[str], subjects: list[str] | None = None) -> str:
        return issue_token(
            SECRET, tenant_id=TENANT, sub=sub, roles=roles, clearance="confidential", subjects=subjects
        )

    return {
        "MEMORY_TEST_URL": base,
        "MEMORY_TEST_SUBJECT": SUBJECT,
        "MEMORY_TEST_OTHER_SUBJECT": OTHER_SUBJECT,
        "MEMORY_TEST_ERASED_SUBJECT": ERASED_SUBJECT,
        "MEMORY_TEST_AGENT_TOKEN": token("ts-agent", ["agent"], [SUBJECT]),
        "MEMORY_TEST_UNBOUND_AGENT_TOKEN": token("ts-agent-unbound", ["agent"]),
        "MEMORY_TEST_REVIEWER_TOKEN": token("ts-reviewer", ["reviewer"]),
        "MEMORY_TEST_PRIVACY_TOKEN": token("ts-privacy", ["privacy_officer"]),
        "MEMORY_TEST_AUDITOR_TOKEN": token("ts-auditor", ["auditor"]),
    }


def test_the_typescript_client_passes_its_tests_against_memory_serve(package_env, tmp_path):
    # Given the package and its tests compiled by tsc (while the server starts: both take a while)
    node, npm = node_tools()
    build_cmd = [npm, "run", "build:test"]
    build = subprocess.Popen(
        build_cmd, cwd=PACKAGE, env=package_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        # And `memory serve` as its own process, with a token of each role
        with memory_serve(tmp_path / "data", MEMORY_JWT_SECRET=SECRET) as served:
            out, err = build.communicate(timeout=600)
            if build.returncode != 0:
                pytest.fail(failure(build_cmd, build.returncode, out, err))
            tests = sorted(
                str(p.relative_to(PACKAGE)) for p in (PACKAGE / "build-test" / "test").glob("*.test.js")
            )
            # When Node's test runner runs the client's tests against it
            done = subprocess.run(
                [node, "--test", "--test-reporter=tap", *tests],
                cwd=PACKAGE,
                env=package_env | tokens(served.base),
                capture_output=True,
                text=True,
                timeout=600,
            )
    finally:
        if build.poll() is None:
            build.kill()
            build.wait()
    # Then every test passed, and there were tests to pass
    report = done.stdout + done.stderr
    counts = {
        k: int(v) for k, v in re.findall(r"^# (pass|fail|cancelled|tests) (\d+)$", report, re.MULTILINE)
    }
    failed = [line for line in report.splitlines() if line.lstrip().startswith("not ok")]
    assert done.returncode == 0 and counts.get("fail") == 0 and counts.get("cancelled") == 0, (
        "node tests failed:\n" + "\n".join(failed) + "\n" + report[-8000:]
    )
    assert counts.get("pass", 0) >= 20, f"too few node tests ran: {counts}"


def test_the_package_tarball_holds_compiled_javascript_and_declarations_only(package_env, tmp_path):
    # Given the package (npm pack compiles it first: its prepack script)
    _, npm = node_tools()
    cmd = [npm, "pack", "--json", "--pack-destination", str(tmp_path)]
    # When it is packed
    done = subprocess.run(cmd, cwd=PACKAGE, env=package_env, capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.fail(failure(cmd, done.returncode, done.stdout, done.stderr))
    packed = json.loads(done.stdout[done.stdout.index("[") :])[0]
    files = sorted(f["path"] for f in packed["files"])
    # Then it holds the compiled entry points and their declarations, the README and the manifest:
    # no TypeScript source, tests or lock file, and no runtime dependency
    assert {"dist/index.js", "dist/index.d.ts", "dist/ai-sdk.js", "dist/ai-sdk.d.ts"} <= set(files)
    assert all(
        f in ("package.json", "README.md") or (f.startswith("dist/") and f.endswith((".js", ".d.ts")))
        for f in files
    ), files
    manifest = json.loads((PACKAGE / "package.json").read_text())
    assert "dependencies" not in manifest
    assert (tmp_path / packed["filename"]).is_file()
