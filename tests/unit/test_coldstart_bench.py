"""`memory bench coldstart`: the report's shape (no timing is asserted: the machine is shared)."""

from __future__ import annotations

import json

import pytest

from memory_bench.cli import main
from memory_bench.coldstart import parse_importtime, top_modules


@pytest.mark.process  # a fresh interpreter per handler
def test_given_two_handlers_when_coldstart_runs_once_then_each_is_reported_beside_the_floor(tmp_path, capsys):
    # When the benchmark runs one counted process for the health and retrieve handlers
    out = tmp_path / "coldstart.json"
    code = main(["coldstart", "--runs", "1", "--only", "health", "retrieve", "--json", str(out)])
    # Then it succeeds, prints its table, and writes the floor and both handlers with their figures
    assert code == 0
    assert "floor" in capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["runs"] == 1
    assert report["floor"]["import_s"] > 0
    assert set(report["handlers"]) == {"health", "retrieve"}
    for result in report["handlers"].values():
        assert result["import_s"] > 0
        assert result["ratio_to_floor"] > 0
        assert len(result["import_runs_s"]) == 1
        assert 1 <= len(result["top_modules"]) <= 5
        assert all(m["module"] != "handler" for m in result["top_modules"])
    # And the health route, which answers without a database, has its first invocation timed
    health, retrieve = report["handlers"]["health"], report["handlers"]["retrieve"]
    assert health["first_invocation_s"] > 0 and retrieve["first_invocation_s"] is None
    # And the retrieval function's model load is reported apart from its import
    assert retrieve["model_init_s"] > 0 and health["model_init_s"] is None


def test_given_importtime_output_when_parsed_then_the_largest_cumulative_modules_come_first():
    # Given the lines `python -X importtime` writes
    stderr = (
        "import time: self [us] | cumulative | imported package\n"
        "import time:       100 |        100 |     small\n"
        "import time:       200 |       5000 |   big\n"
        "import time:        50 |       9000 | handler\n"
        "some other line\n"
    )
    # When they are parsed and ranked
    rows = parse_importtime(stderr)
    # Then every module line is read, and the handler itself is left out of the ranking
    assert rows == [("small", 100), ("big", 5000), ("handler", 9000)]
    assert top_modules(rows) == [
        {"module": "big", "cumulative_s": 0.005},
        {"module": "small", "cumulative_s": 0.0},
    ]
