"""`memory mcp`: the service's CLI starts the client's MCP server (stdio), and says what to install
when the client's mcp extra is missing."""

from __future__ import annotations

import json
import os
import re
import sys

import anyio
import jwt
import pytest
from mcp import Client, StdioServerParameters

from agent_memory import cli


@pytest.mark.e2e
def test_memory_mcp_serves_the_tools_over_stdio(api):
    # Given an agent's token bound to one customer in MEMORY_TOKEN and the front's URL in MEMORY_URL
    token = api.token("mcp-cli", "agent-1", ["agent"], clearance="confidential", subjects=["ACC-1"])
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "agent_memory.cli", "mcp"],
        env={**os.environ, "MEMORY_URL": api.base, "MEMORY_TOKEN": token},
    )

    async def main():
        async with Client(params, read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            recalled = await client.call_tool("recall", {"query": "anything"})
            return names, recalled

    # When an MCP client starts `memory mcp` and calls recall
    names, recalled = anyio.run(main)
    # Then it is the client's server, answering from the service (stdout carried only MCP)
    assert {"recall", "remember", "close_session", "forget"} <= names
    assert recalled.is_error is False
    assert recalled.content[0].text.startswith('<retrieved_memory subject="ACC-1">')


def test_memory_mcp_without_the_client_extra_says_what_to_install(monkeypatch, capsys):
    # Given a Python where the client's MCP server cannot be imported
    monkeypatch.setitem(sys.modules, "agent_memory_client.mcp_server", None)
    # When `memory mcp` runs
    code = cli.main(["mcp", "--http"])
    # Then it exits 2 with the install command, and no traceback
    assert code == 2
    err = capsys.readouterr().err
    assert "`make serve` (or `uv sync --extra local`)" in err and "Traceback" not in err


def test_the_runtime_install_brings_the_mcp_server():
    import tomllib
    from pathlib import Path

    # Given what `make serve` installs: the extras of the Makefile's install-runtime target
    root = Path(__file__).resolve().parents[2]
    makefile = (root / "Makefile").read_text()
    runtime = makefile[makefile.index("install-runtime: uv") :].split("\n\n")[0]
    extras = re.findall(r"--extra (\S+)", runtime)
    # When the project's optional dependencies and the lock are read
    optional = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    lock = tomllib.loads((root / "uv.lock").read_text())
    project = next(p for p in lock["package"] if p["name"] == "agent-memory")
    locked = [d for extra in extras for d in project["optional-dependencies"].get(extra, [])]
    # Then one of those extras names the client with its mcp extra, in the project and in the lock
    assert "agent-memory-client[mcp]" in {d.split(" ")[0] for extra in extras for d in optional[extra]}
    assert {"name": "agent-memory-client", "extra": ["mcp"]} in locked


@pytest.mark.e2e
@pytest.mark.parametrize("host", ["claude", "cursor", "vscode"])
def test_the_printed_desktop_configuration_starts_a_working_server(api, host, monkeypatch, capsys):
    # Given the service's signing secret in this shell and no MCP settings of its own
    monkeypatch.setenv("MEMORY_JWT_SECRET", api.secret)
    for name in ("MEMORY_URL", "MEMORY_TOKEN", "MEMORY_SUBJECT"):
        monkeypatch.delenv(name, raising=False)
    # When `memory mcp --print-config HOST` prints the host's configuration
    code = cli.main(
        ["mcp", "--print-config", host, "--tenant", "mcp-cli", "--subject", "ACC-9", "--url", api.base]
    )
    out, err = capsys.readouterr()
    config = json.loads(out)
    servers = config["servers"] if host == "vscode" else config["mcpServers"]
    entry = servers["agent-memory"]

    # and a host starts the server exactly as configured (absolute command, its args and env)
    async def main():
        params = StdioServerParameters(
            command=entry["command"], args=entry["args"], env={**os.environ, **entry["env"]}
        )
        async with Client(params, read_timeout_seconds=60) as client:
            names = {t.name for t in (await client.list_tools()).tools}
            return names, await client.call_tool("recall", {"query": "anything"})

    names, recalled = anyio.run(main)
    # Then the server lists its tools and recalls for the one customer the agent token is bound to
    assert code == 0
    assert os.path.isabs(entry["command"]) and entry.get("type", "stdio") == "stdio"
    assert {"recall", "remember", "close_session", "forget"} <= names
    assert recalled.is_error is False
    assert recalled.content[0].text.startswith('<retrieved_memory subject="ACC-9">')
    claims = jwt.decode(entry["env"]["MEMORY_TOKEN"], options={"verify_signature": False})
    assert (claims["roles"], claims["subjects"]) == (["agent"], ["ACC-9"])
    # and stderr states the lifetime, as comment lines apart from the JSON
    assert "# role agent, customer ACC-9 only; the token expires in 12 h" in err


def test_print_config_needs_the_customer_the_token_is_bound_to(capsys):
    # When `memory mcp --print-config` is asked for without --subject
    with pytest.raises(SystemExit) as exited:
        cli.main(["mcp", "--print-config", "claude", "--tenant", "acme"])
    # Then it refuses, naming --subject, and prints no configuration
    out, err = capsys.readouterr()
    assert exited.value.code == 2
    assert "--subject" in err and out == ""


def test_memory_mcp_without_a_token_says_how_to_give_one(monkeypatch, capsys):
    monkeypatch.delenv("MEMORY_TOKEN", raising=False)
    # When `memory mcp` (stdio) starts without a token
    code = cli.main(["mcp"])
    # Then it refuses to start, naming MEMORY_TOKEN and --token
    assert code == 2
    assert "memory mcp: no token: set MEMORY_TOKEN or pass --token" in capsys.readouterr().err


def test_every_setting_the_mcp_guide_names_is_one_the_server_reads(capsys):
    import inspect
    import re
    from pathlib import Path

    from agent_memory_client import _core, mcp_server

    # Given the guide's table of settings
    guide = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text()
    table = guide[guide.index("| setting |") : guide.index("\n\n", guide.index("| setting |"))]
    flags = set(re.findall(r"`(--[a-z-]+)`", table))
    variables = set(re.findall(r"`(MEMORY_[A-Z_]+)`", table))
    # When the server's help is printed
    with pytest.raises(SystemExit):
        mcp_server.parse_args(["--help"])
    help_text = capsys.readouterr().out
    # Then every flag is one it accepts and every variable one its code reads
    assert flags and variables
    assert {f for f in flags if f not in help_text} == set()
    source = inspect.getsource(mcp_server) + inspect.getsource(_core)
    assert {v for v in variables if f'"{v}"' not in source} == set()
