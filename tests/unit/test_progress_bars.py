"""Progress bars for long local commands: drawn on stderr only when someone watches or asks, and
never where tqdm is missing (the Lambda layer)."""

import io
import sys

import pytest

from agent_memory.cli import build_parser
from agent_memory.progress import terminal_progress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_given_a_stream_that_is_not_a_terminal_when_nothing_was_asked_then_no_bar_is_drawn() -> None:
    assert terminal_progress(None, stream=io.StringIO()) is None


def test_given_a_terminal_when_progress_is_refused_then_no_bar_is_drawn() -> None:
    assert terminal_progress(False, stream=Terminal()) is None


def test_given_a_terminal_when_nothing_was_asked_then_a_bar_shows_the_count_and_the_time_left() -> None:
    # Given a terminal / When a bar of four records moves by two
    out = Terminal()
    factory = terminal_progress(None, stream=out)
    assert factory is not None
    bar = factory("purge acme: expire", total=4, unit="record")
    bar.update(2)
    bar.close()
    # Then it was written to that stream with its count out of the total and an estimate of the time left
    text = out.getvalue()
    assert "purge acme: expire" in text and "2/4" in text and "<" in text


def test_given_progress_asked_for_when_tqdm_is_missing_then_nothing_is_drawn(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given no tqdm (as in the Lambda layer) / When progress is asked for / Then there is none
    monkeypatch.setitem(sys.modules, "tqdm", None)
    assert terminal_progress(True, stream=Terminal()) is None


@pytest.mark.parametrize("command", ["purge", "migrate"])
def test_given_a_long_command_when_parsed_then_progress_follows_the_terminal_unless_told(
    command: str,
) -> None:
    parser = build_parser()
    assert parser.parse_args([command]).progress is None
    assert parser.parse_args([command, "--progress"]).progress is True
    assert parser.parse_args([command, "--no-progress"]).progress is False
