"""The command line's progress display: a tqdm bar on a terminal, plain periodic lines otherwise.

A `\\r`-redrawn bar in a CI log or a file is one unreadable line of control characters, so when
stderr is not a terminal the progress is a short line every PLAIN_EVERY_S seconds (and at the end).
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Callable, Iterator, Optional, TextIO

PLAIN_EVERY_S = 10.0

Callback = Callable[[int, int, Any], None]


@contextmanager
def progress_bar(total: int, quiet: bool = False, stream: Optional[TextIO] = None,
                 every: float = PLAIN_EVERY_S) -> Iterator[Optional[Callback]]:
    """An `on_progress(done, total, result)` callback drawing the progress (None when quiet)."""
    stream = stream or sys.stderr
    if quiet or total <= 0:
        yield None
    elif stream.isatty():
        from tqdm import tqdm

        with tqdm(total=total, file=stream, unit="sample", dynamic_ncols=True) as bar:
            yield lambda done, _total, _result: bar.update(done - bar.n)
    else:
        lines = _PlainLines(total, stream, every)
        yield lines.update
        lines.close()


class _PlainLines:
    def __init__(self, total: int, stream: TextIO, every: float) -> None:
        self.total, self.stream, self.every = total, stream, every
        self.start = self.last = time.perf_counter()
        self.done = 0

    def update(self, done: int, _total: int, _result: Any) -> None:
        self.done = done
        now = time.perf_counter()
        if now - self.last >= self.every:
            self.last = now
            self._line(now)

    def close(self) -> None:
        self._line(time.perf_counter())

    def _line(self, now: float) -> None:
        elapsed = now - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        self.stream.write(f"samples scored: {self.done}/{self.total} ({self.done / self.total:.0%}), "
                          f"{elapsed:.0f} s elapsed, about {eta:.0f} s left\n")
        self.stream.flush()
