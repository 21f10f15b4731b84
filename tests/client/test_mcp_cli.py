"""`memory mcp`: the service's CLI starts the client's MCP server (stdio), and says what to install
when the client's mcp extra is missing."""

from __future__ import annotations

import os
import sys

import anyio
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
    assert "pip install './clients/python[mcp]'" in err and "Traceback" not in err


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
