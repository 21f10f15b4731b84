"""Where a running `memory serve` can be found: each server leaves a small record (its port, data
folder and where its signing secret comes from, never the secret) while it runs, so `memory token`
in another terminal or folder signs with the secret that server checks."""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class RunningServer:
    pid: int
    port: int
    data_dir: str
    secret_source: str  # "MEMORY_JWT_SECRET" or "data folder"


def registry_dir() -> Path:
    """Per user: $XDG_RUNTIME_DIR/agent-memory, else ~/.cache/agent-memory/servers."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "agent-memory"
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "agent-memory" / "servers"


def register(server: RunningServer) -> Path | None:
    """Leave the record; None when the folder cannot be written (discovery is a convenience)."""
    try:
        folder = registry_dir()
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        path = folder / f"{server.pid}.json"
        path.write_text(json.dumps(asdict(server)))
        return path
    except OSError:
        return None


def unregister(path: Path | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            path.unlink()


def running_servers() -> list[RunningServer]:
    """The servers whose process is still alive (records of ended ones are removed)."""
    found: list[RunningServer] = []
    try:
        paths = sorted(registry_dir().glob("*.json"))
    except OSError:
        return found
    for path in paths:
        try:
            server = RunningServer(**json.loads(path.read_text()))
        except (OSError, ValueError, TypeError):
            continue
        if _alive(server.pid):
            found.append(server)
        else:
            with contextlib.suppress(OSError):
                path.unlink()
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process with that id
        return True
    return True
