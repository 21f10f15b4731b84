"""`memory backup PATH` and `memory restore PATH`: the local database to a pg_dump archive and back,
with the embedded PostgreSQL's own pg_dump and pg_restore (the server's version).

The deletion registry (a file beside the PostgreSQL folder) is not in the archive and a restore
leaves it alone: the restore replays it at its end, so what was erased or deleted after the backup
was taken stays gone.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import TextIO

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from agent_memory.config import Settings
from agent_memory.local.discovery import running_servers
from agent_memory.local.embedded import embedded_bin_dir, start_embedded_postgres


class RestoreRefused(Exception):
    """The restore would not be safe (a server is using the data, the archive is not one)."""


def database_url(settings: Settings) -> str:
    """DATABASE_URL when set, else the embedded server of the data folder (started or joined)."""
    return settings.database_url or start_embedded_postgres(settings.resolved_data_dir)


def backup(settings: Settings, archive: Path, *, err: TextIO = sys.stderr) -> int:
    """Dump the database into `archive` (pg_dump custom format), progress on `err`. Returns its size.
    Written beside it first, then renamed: an interrupted backup leaves no partial archive at PATH."""
    url = database_url(settings)
    archive = archive.expanduser().resolve()
    partial = archive.with_name(archive.name + ".partial")
    started = time.monotonic()
    print(f"backing up the database to {archive}", file=err, flush=True)
    _run(
        [str(embedded_bin_dir() / "pg_dump"), "--format=custom", "--verbose", f"--file={partial}", url],
        err,
    )
    os.replace(partial, archive)
    size = archive.stat().st_size
    print(f"backup done: {size} bytes in {time.monotonic() - started:.1f} s", file=err, flush=True)
    return size


def serving_same_data(settings: Settings) -> list[int]:
    """Process ids of `memory serve` running against this data folder."""
    folder = settings.resolved_data_dir
    return [s.pid for s in running_servers() if Path(s.data_dir) == folder]


def restore(settings: Settings, archive: Path, *, err: TextIO = sys.stderr) -> None:
    """Replace the database with the archive's content. Refuses while `memory serve` runs against
    the same data folder, and before dropping anything when the archive is not a pg_dump archive.
    The caller replays the deletion registry next (before anything answers)."""
    busy = serving_same_data(settings)
    if busy:
        raise RestoreRefused(
            f"memory serve (pid {', '.join(map(str, busy))}) is running against {settings.resolved_data_dir}: "
            "stop it first"
        )
    archive = archive.expanduser().resolve()
    if not archive.is_file():
        raise RestoreRefused(f"{archive}: no such file")
    pg_restore = str(embedded_bin_dir() / "pg_restore")
    listed = subprocess.run(  # noqa: S603 - the embedded PostgreSQL's own program, no shell
        [pg_restore, "--list", str(archive)], capture_output=True, text=True
    )
    if listed.returncode != 0:
        raise RestoreRefused(f"{archive} is not a pg_dump archive: {listed.stderr.strip()[:200]}")
    url = database_url(settings)
    started = time.monotonic()
    print(f"restoring the database from {archive}", file=err, flush=True)
    _recreate_database(url, err)
    _run(
        [pg_restore, "--verbose", "--exit-on-error", "--single-transaction", f"--dbname={url}", str(archive)],
        err,
    )
    print(f"restore done in {time.monotonic() - started:.1f} s", file=err, flush=True)


def _recreate_database(url: str, err: TextIO) -> None:
    """An empty database of the same name, with the roles the archive's grants name."""
    params = conninfo_to_dict(url)
    name = str(params.get("dbname") or "postgres")
    maintenance = make_conninfo(url, dbname="template1" if name == "postgres" else "postgres")
    with psycopg.connect(maintenance, autocommit=True) as conn:
        print(f"dropping and creating database {name}", file=err, flush=True)
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
        # Roles live in the cluster, not in the archive: a fresh data folder lacks the app role.
        conn.execute(
            """DO $$ BEGIN
                 IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'memory_app') THEN
                   CREATE ROLE memory_app NOLOGIN;
                 END IF;
               END $$"""
        )


def _run(command: list[str], err: TextIO) -> None:
    """Run a PostgreSQL program, its own progress lines (--verbose) passed on to `err`."""
    with subprocess.Popen(  # noqa: S603 - the embedded PostgreSQL's own program, no shell
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.write(line)
            err.flush()
    if proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, command[0])
