"""Progress bars for long local commands (`memory purge`, `memory migrate`, reindexing).

A bar shows what is done, the rate and the time left, on stderr, so a command's JSON on stdout stays
clean. It is drawn only when someone watches (stderr is a terminal) or when asked, and only where
tqdm is installed (the `local` extra): the Lambda layer has no tqdm, and there every caller gets
`None` and draws nothing. Services take an optional `ProgressFactory`; they never decide whether
to draw one.
"""

from __future__ import annotations

import sys
from typing import Protocol, TextIO


class ProgressBar(Protocol):
    def update(self, n: int = 1) -> object: ...
    def set_postfix_str(self, s: str = "", refresh: bool = True) -> None: ...
    def close(self) -> None: ...


class ProgressFactory(Protocol):
    def __call__(self, description: str, *, total: int | None, unit: str) -> ProgressBar: ...


def terminal_progress(wanted: bool | None = None, stream: TextIO | None = None) -> ProgressFactory | None:
    """A factory of progress bars on `stream` (stderr), or None when none should be drawn.

    `wanted` True draws even when the stream is not a terminal, False never draws, None draws
    only on a terminal. Without tqdm installed nothing is drawn, whatever was asked."""
    out = stream if stream is not None else sys.stderr
    if wanted is False or (wanted is None and not _is_terminal(out)):
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None

    def bar(description: str, *, total: int | None, unit: str) -> ProgressBar:
        return tqdm(total=total, desc=description, unit=unit, file=out, dynamic_ncols=True, leave=True)

    return bar


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream
        return False
