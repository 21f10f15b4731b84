"""`memory sor set`, end to end in a subprocess against the test database."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.e2e


def sor_set(database_url, tmp_path, *pairs):
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "MEMORY_JWT_SECRET": "x" * 40,
        "MEMORY_DATA_DIR": str(tmp_path),
    }
    env.pop("MEMORY_SOR_URL", None)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_memory.cli",
            "sor",
            "set",
            "--tenant",
            "sor-cli",
            "--subject",
            "S",
            *pairs,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize(
    "pair", ["plan_tier=null", "plan_tier=", "=orphan", "plan-tier=Enterprise", 'seats={"a": 1}']
)
def test_a_value_no_system_of_record_would_hold_is_refused_and_nothing_is_stored(
    container, database_url, tmp_path, pair
):
    from agent_memory.adapters.sor.local import LocalSystemOfRecord

    p = sor_set(database_url, tmp_path, "seats=40", pair)
    assert p.returncode != 0 and p.stderr.strip()
    assert LocalSystemOfRecord(container.db).account_values("sor-cli", "S") == {}


def test_values_are_stored_as_json_scalars(container, database_url, tmp_path):
    from agent_memory.adapters.sor.local import LocalSystemOfRecord

    p = sor_set(database_url, tmp_path, "seats=1e3", "plan_tier=Enterprise")
    assert p.returncode == 0, p.stderr
    got = LocalSystemOfRecord(container.db).account_values("sor-cli", "S")
    assert {k: v.value for k, v in got.items()} == {"seats": 1000.0, "plan_tier": "Enterprise"}
