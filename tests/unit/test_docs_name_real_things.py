"""The guides a new user reads first name only real things: every `memory ...` command (and each
of its options) is one the CLI accepts, and every `MEMORY_*` variable one the service's settings or
the client's MCP server reads."""

from __future__ import annotations

import argparse
import inspect
import re
from pathlib import Path

import pytest

from agent_memory import cli
from agent_memory.config import Settings

DOCS = Path(__file__).resolve().parents[2] / "docs"
GUIDES = ["index.md", "concepts.md", "tutorial.md", "integrations.md", "troubleshooting.md", "mcp.md"]


def code_of(text: str) -> list[str]:
    """The fenced blocks' lines and the inline code spans of a page."""
    fenced = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    rest = re.sub(r"```[a-z]*\n.*?```", "", text, flags=re.S)
    return [line for block in fenced for line in block.splitlines()] + re.findall(r"`([^`\n]+)`", rest)


def commands_in(text: str) -> list[tuple[str, list[str]]]:
    """Each `memory SUB ...` in code: the subcommand and the options given to it."""
    found = []
    for code in code_of(text):
        for match in re.finditer(r"(?:^|[\s/=(])memory ([a-z][a-z-]*)([^|;)]*)", code):
            found.append((match.group(1), re.findall(r"(--[a-z][a-z-]*)", match.group(2))))
    return found


def accepted_options() -> dict[str, set[str]]:
    """Each subcommand of `memory` and the options it accepts (mcp: the server's and --print-config's)."""
    parser = cli.build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    options = {name: set(sub._option_string_actions) for name, sub in subparsers.choices.items()}
    from agent_memory_client import mcp_server

    server = {o for a in mcp_server.parse_args([], prog="x").__dict__ for o in [f"--{a.replace('_', '-')}"]}
    options["mcp"] = server | set(cli.mcp_config_parser()._option_string_actions)
    return options


def readable_variables() -> set[str]:
    """MEMORY_* names the service's settings read, and those the client's MCP server reads."""
    from agent_memory_client import _core, mcp_server

    names = {f"MEMORY_{name.upper()}" for name in Settings.model_fields}
    source = inspect.getsource(mcp_server) + inspect.getsource(_core)
    return names | set(re.findall(r'"(MEMORY_[A-Z_]+)"', source))


@pytest.mark.parametrize("page", GUIDES)
def test_every_memory_command_in_the_guide_is_one_the_cli_accepts(page):
    # Given the commands the guide shows and the CLI's subcommands with their options
    commands = commands_in((DOCS / page).read_text())
    options = accepted_options()
    # Then each subcommand exists and each option it is given is one it accepts
    assert {sub for sub, _ in commands if sub not in options} == set()
    assert {(sub, o) for sub, given in commands for o in given if o not in options[sub]} == set()


@pytest.mark.parametrize("page", GUIDES)
def test_every_memory_variable_in_the_guide_is_one_the_code_reads(page):
    from agent_memory_client import agents_tools

    # Given the MEMORY_* names the guide mentions, apart from the client's Python names (MEMORY_TOOLS)
    named = set(re.findall(r"\b(MEMORY_[A-Z_]+[A-Z])\b", (DOCS / page).read_text())) - set(
        agents_tools.__all__
    )
    # Then each is a setting of the service or a variable of the client's MCP server
    assert named - readable_variables() == set()


def test_the_checks_see_the_commands_and_variables_of_the_guides():
    # Given the guides together
    text = "\n".join((DOCS / page).read_text() for page in GUIDES)
    # Then the checks above look at real material: the commands and variables a new user needs
    assert {"serve", "token", "mcp"} <= {sub for sub, _ in commands_in(text)}
    assert {"MEMORY_DATA_DIR", "MEMORY_TOKEN", "MEMORY_URL"} <= set(re.findall(r"MEMORY_[A-Z_]+", text))
    # and a made-up command or option would be caught
    assert commands_in("`memory frobnicate --now`") == [("frobnicate", ["--now"])]
    assert "frobnicate" not in accepted_options() and "--now" not in accepted_options()["token"]


@pytest.mark.parametrize("page", GUIDES)
def test_every_page_the_guide_links_to_exists(page):
    # Given the guide's relative links (an anchor after # aside)
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", (DOCS / page).read_text())
    # Then each names a file or folder of the repository
    assert links or page == "mcp.md"
    assert [link for link in links if not (DOCS / link).exists()] == []
