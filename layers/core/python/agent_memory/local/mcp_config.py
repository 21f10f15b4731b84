"""`memory mcp --print-config claude|cursor|vscode`: the JSON an MCP desktop host reads to start
`memory mcp` over stdio, with absolute paths (hosts do not start in a checkout) and the service's
URL and an agent token bound to one customer in its environment."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

SERVER_NAME = "agent-memory"

# Where each host reads its configuration (said on stderr, next to the printed JSON).
HOSTS = {
    "claude": "Claude Desktop: claude_desktop_config.json (Settings > Developer > Edit Config)",
    "cursor": "Cursor: .cursor/mcp.json in the project, or ~/.cursor/mcp.json for every project",
    "vscode": "VS Code: .vscode/mcp.json in the workspace (or MCP: Open User Configuration)",
}


def server_command() -> tuple[str, list[str]]:
    """The absolute command that starts `memory mcp` with this Python environment: the
    environment's `memory` script, else its interpreter running the CLI module."""
    bin_dir = Path(sys.executable).absolute().parent
    script = bin_dir / ("memory.exe" if sys.platform == "win32" else "memory")
    if script.exists():
        return str(script), ["mcp"]
    return str(Path(sys.executable).absolute()), ["-m", "agent_memory.cli", "mcp"]


def host_config(host: str, command: str, args: list[str], env: dict[str, str]) -> dict[str, Any]:
    """Claude Desktop and Cursor: `mcpServers`; VS Code: `servers`, each entry typed `stdio`."""
    entry: dict[str, Any] = {"command": command, "args": args, "env": env}
    if host == "vscode":
        return {"servers": {SERVER_NAME: {"type": "stdio", **entry}}}
    if host in HOSTS:
        return {"mcpServers": {SERVER_NAME: entry}}
    raise ValueError(f"unknown host {host!r}: one of {', '.join(HOSTS)}")
