"""`memory bench longmemeval --ingest-only`: the haystack's user turns go through the write path,
the ingest rate and a progress bar over the memories written, and no question is asked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memory_bench.longmemeval import run

pytestmark = pytest.mark.integration

QUESTION = {
    "question_id": "q-ingest-1",
    "question_type": "single-session-user",
    "question": "Which city did I move to last spring?",
    "question_date": "2023/06/01 (Thu) 10:00",
    "answer": "Lisbon",
    "answer_session_ids": ["s2"],
    "haystack_session_ids": ["s1", "s2"],
    "haystack_dates": ["2023/01/10 (Tue) 09:00", "2023/04/02 (Sun) 18:30"],
    "haystack_sessions": [
        [
            {
                "role": "user",
                "content": "Can you suggest a good sourdough starter routine for a cold kitchen?",
            },
            {"role": "assistant", "content": "Feed it twice a day and keep it near the oven."},
            {"role": "user", "content": "   "},
        ],
        [
            {
                "role": "user",
                "content": "I just moved to Lisbon this spring. Where do locals buy fresh fish?",
                "has_answer": True,
            },
            {"role": "assistant", "content": "Try the market in Campo de Ourique."},
            {"role": "user", "content": "Thanks! I also need a bike shop near the river."},
        ],
    ],
}


class Bars:
    def __init__(self) -> None:
        self.updates: list[int] = []
        self.closed = 0

    def __call__(self, description: str, *, total: int | None, unit: str) -> Bars:
        assert unit == "memory"
        return self

    def update(self, n: int = 1) -> None:
        self.updates.append(n)

    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        self.closed += 1


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "lme.jsonl"
    path.write_text(json.dumps(QUESTION) + "\n")
    return path


def test_given_a_haystack_when_ingested_only_then_its_user_turns_are_written_with_a_rate_and_none_asked(
    container: Any, data: Path
):
    # Given a haystack of three non-empty user turns (assistant turns and a blank one are not memories)
    bars = Bars()
    # When only ingested
    report = run(str(data), container=container, ingest_only=True, progress=bars)
    # Then three memories were written, the bar counted them and was closed, and nothing was asked
    assert (report["haystacks"], report["ingested_memories"], report["questions"]) == (1, 3, 0)
    assert report["ingest_memories_per_s"] > 0
    assert sum(bars.updates) == 3 and bars.closed == 1
    assert "turn_recall_all_at_5" not in report


def test_given_an_ingested_haystack_when_asked_with_reuse_then_the_evidence_turn_is_found(
    container: Any, data: Path
):
    # Given the haystack already in the store (the test above, or ingested here)
    run(str(data), container=container, ingest_only=True)
    # When asked over what is stored
    report = run(str(data), container=container, reuse=True)
    # Then nothing was ingested again and the evidence turn and session are in the first five
    assert report["ingested_memories"] == 0 and report["questions_reused_from_data_dir"] == 1
    assert report["turn_recall_all_at_5"] == 1.0 and report["session_recall_all_at_5"] == 1.0
    # And recall_any is reported beside recall_all, overall and per question type
    by_type = report["by_type"]["single-session-user"]
    assert by_type["turn_recall_any_at_10"] == 1.0 and by_type["session_recall_any_at_5"] == 1.0
