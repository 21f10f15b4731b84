"""The repeatable SQL files (sql/): the current definitions of functions, written with CREATE OR
REPLACE and applied by every migrate after the numbered migrations (which they may rely on). A
function edited there is redefined without a new migration, and a database always runs the
definitions its code was released with. Dropping one, or changing its arguments or result
columns, still takes a numbered migration."""

from __future__ import annotations

from importlib import resources
from typing import Any

import psycopg


def repeatable_files() -> list[tuple[str, str]]:
    """(name, SQL) of each file of sql/, in name order."""
    root = resources.files("agent_memory.adapters.postgres") / "sql"
    return sorted((p.name, p.read_text()) for p in root.iterdir() if p.name.endswith(".sql"))


def apply_repeatable_sql(conn: psycopg.Connection[Any]) -> list[str]:
    """Every file of sql/ again, each in one transaction, on the migrator's connection; their names
    (the migrator logs them in its one line)."""
    files = repeatable_files()
    for _, sql in files:
        with conn.transaction():
            conn.execute(sql)
    return [name for name, _ in files]
