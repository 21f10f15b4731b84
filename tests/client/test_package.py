"""The client is a package of its own: its wheel builds offline, depends on httpx and pydantic
only, and imports from wherever it is installed."""

from __future__ import annotations

import email.parser
import importlib.util
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import agent_memory_client
import pytest

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "clients" / "python"


def build_wheel(out: Path) -> Path:
    """The wheel, built by hatchling in this interpreter when it has it, else by uv from its
    cache without the network; skipped when neither can build offline."""
    if importlib.util.find_spec("hatchling") is not None:
        code = "import sys, hatchling.build as b; print(b.build_wheel(sys.argv[1]))"
        cmd = [sys.executable, "-c", code, str(out)]
    elif shutil.which("uv"):
        cmd = ["uv", "build", "--wheel", "--offline", "--out-dir", str(out), str(PACKAGE)]
    else:
        pytest.skip("no offline wheel builder: hatchling is not installed here and uv is not on the PATH")
    done = subprocess.run(cmd, cwd=PACKAGE, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 and cmd[0] == "uv" and "offline" in (done.stderr or "").lower():
        pytest.skip(f"uv cannot build offline (hatchling not in its cache): {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    wheels = sorted(out.glob("agent_memory_client-*.whl"))
    assert len(wheels) == 1, list(out.iterdir())
    return wheels[0]


@pytest.mark.process  # builds the wheel and imports it in a fresh interpreter
def test_the_wheel_builds_depends_on_httpx_and_pydantic_only_and_imports(tmp_path):
    # When the package's wheel is built
    wheel = build_wheel(tmp_path / "dist")
    # Then it holds the package (typed) and metadata naming only httpx and pydantic
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(z.read(metadata_name).decode())
        z.extractall(tmp_path / "site")
    assert "agent_memory_client/__init__.py" in names and "agent_memory_client/py.typed" in names
    assert not [n for n in names if n.startswith(("agent_memory/", "tests/"))]
    every = metadata.get_all("Requires-Dist")
    requires = sorted(
        r.split(">")[0].split("=")[0].split("<")[0].strip() for r in every if "extra ==" not in r
    )
    assert requires == ["httpx", "pydantic"]  # the framework adapters are extras, never required
    assert sorted(metadata.get_all("Provides-Extra")) == ["agents", "langgraph", "mcp"]
    assert (
        metadata["Name"] == "agent-memory-client" and metadata["Version"] == agent_memory_client.__version__
    )
    # and the unpacked wheel (what an install puts in site-packages) imports on its own
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    code = "import agent_memory_client as c; print(c.__file__); print(c.MemoryClient.__name__)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, cwd=tmp_path
    )
    where, name = done.stdout.split()
    assert Path(where).is_relative_to(tmp_path / "site") and name == "MemoryClient"
