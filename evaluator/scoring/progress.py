"""The one progress reporter: counts a scoring pass's finished samples and draws the console line.

A scoring pass calls `update` per finished sample (the user's callbacks run there, and
`evaluate_dataset(show_progress=True)` redraws a line on stdout, as the seed did); the CLI and the
Ray engine call `show` with a run's counts and draw on stderr. A terminal gets a redrawn bar, a CI
log or pipe a plain line now and then. The library draws nothing unless asked.
"""
from __future__ import annotations

import time
from typing import Callable, Optional, TextIO

from ..model import EvalResult

PLAIN_EVERY_S = 10.0  # how often a non-terminal (CI log, pipe) gets a progress line

ProgressCallback = Callable[[int, int, EvalResult], None]
ResultCallback = Callable[[int, EvalResult], None]


class Progress:
    """done/total with elapsed time and ETA on `stream` (None: silent); `redraw` overwrites one line
    (default: when `stream` is a terminal). `update` also counts a pass and calls its callbacks."""

    def __init__(self, total: int = 0, stream: Optional[TextIO] = None, *, redraw: Optional[bool] = None,
                 callback: Optional[ProgressCallback] = None, on_result: Optional[ResultCallback] = None) -> None:
        self.total, self.stream, self.callback, self.on_result = total, stream, callback, on_result
        self.redraw = bool(getattr(stream, "isatty", lambda: False)()) if redraw is None else redraw
        self.done = 0
        self.start = time.perf_counter()
        self._last_plain: Optional[float] = None
        self._last_done: object = -1

    def update(self, index: int, result: EvalResult) -> None:
        """One more sample of the pass finished (the index is its place in the input)."""
        self.done += 1
        if self.on_result is not None:
            self.on_result(index, result)
        if self.callback is not None:
            self.callback(self.done, self.total, result)
        self.show(self.done, self.total)

    def close(self) -> None:
        if self.stream is not None and self.redraw:
            self.stream.write("\n")

    def show(self, done: int, total: int, final: bool = False, answered: Optional[int] = None) -> None:
        """`answered`: rows a target has answered so far (shown before the scored count)."""
        key = done if answered is None else (done, answered)
        if self.stream is None or total <= 0 or (key == self._last_done and not final):
            return
        now = time.perf_counter()
        if not self.redraw and not final and self._last_plain is not None and now - self._last_plain < PLAIN_EVERY_S:
            return
        self._last_done, self._last_plain = key, now
        text = self._line(done, total, answered, now - self.start)
        self.stream.write("\r" + text + ("\n" if final else "") if self.redraw else text + "\n")
        self.stream.flush()

    @staticmethod
    def _line(done: int, total: int, answered: Optional[int], elapsed: float) -> str:
        # No row finished yet: nothing to project from (a slow judge's first row can take minutes).
        eta = f"{elapsed / done * (total - done):.1f}s" if done else "unknown"
        bar = "#" * int(30 * done / total)
        asked = "" if answered is None else f"{answered}/{total} answered, "
        noun = "samples" if answered is None else "scored"
        return f"[{bar:<30}] {asked}{done}/{total} {noun}  {elapsed:.1f}s elapsed, ETA {eta}"
