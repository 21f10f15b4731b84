"""`make eval`: each quality figure against its threshold, and a figure past it fails the gate."""

from __future__ import annotations

import pytest

from memory_bench import eval_gate


@pytest.mark.parametrize(
    ("value", "rule", "ok"),
    [
        (0.97, ("min", 0.97), True),
        (0.9699, ("min", 0.97), False),
        (0.02, ("max", 0.02), True),
        (0.0201, ("max", 0.02), False),
        (None, ("min", 0.0), False),
    ],
)
def test_given_a_figure_when_checked_then_it_passes_only_on_the_right_side_of_its_threshold(
    value: float | None, rule: tuple[str, float], ok: bool
) -> None:
    # When the figure is checked against its rule / Then it passes only on the right side
    assert eval_gate._check("figure", value, rule)["ok"] is ok


def test_given_a_threshold_above_what_the_rules_reach_when_the_gate_runs_then_it_exits_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given one extraction check the rules cannot pass (recall above 1) and one they pass
    monkeypatch.setattr(
        eval_gate,
        "EXTRACTION_THRESHOLDS",
        {"rules": {"hand_labelled": {"recall": ("min", 1.01), "commercial_held": ("min", 1.0)}}},
    )
    # When the extraction gate runs
    code = eval_gate.main(["--only", "extraction"])
    # Then it fails, names the failing check, and counts both
    out = capsys.readouterr().out
    assert code == 1
    assert "FAIL  extraction rules hand_labelled recall" in out
    assert "ok    extraction rules hand_labelled commercial_held" in out
    assert out.rstrip().endswith("eval: 1 passed, 1 failed")


def test_given_the_shipped_thresholds_then_every_commercial_hold_that_is_complete_keeps_no_margin() -> None:
    # Given the thresholds on the hand-labelled set, where every commercial statement is held
    for splits in eval_gate.EXTRACTION_THRESHOLDS.values():
        # Then the hold must stay complete
        assert splits["hand_labelled"]["commercial_held"] == ("min", 1.0)
