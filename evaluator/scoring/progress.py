"""The CLI's progress display: a redrawn bar on a terminal, a plain line now and then otherwise.

Console code, kept out of the library's scoring modules; only the CLI draws with it.
"""
from __future__ import annotations

import time
from typing import Optional, TextIO

PLAIN_EVERY_S = 10.0  # how often a non-terminal (CI log, pipe) gets a progress line


class ProgressLine:
    """Shows done/total with elapsed time and ETA on `stream`; silent when `quiet`."""

    def __init__(self, stream: TextIO, quiet: bool = False) -> None:
        self.stream, self.quiet = stream, quiet
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.start = time.perf_counter()
        self._last_plain: Optional[float] = None
        self._last_done: object = -1

    def show(self, done: int, total: int, final: bool = False, answered: Optional[int] = None) -> None:
        """`answered`: rows a target has answered so far (shown before the scored count)."""
        key = done if answered is None else (done, answered)
        if self.quiet or total <= 0 or (key == self._last_done and not final):
            return
        now = time.perf_counter()
        if not self.tty and not final and self._last_plain is not None and now - self._last_plain < PLAIN_EVERY_S:
            return
        self._last_done, self._last_plain = key, now
        elapsed = now - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        bar = "#" * int(30 * done / total)
        asked = "" if answered is None else f"{answered}/{total} answered, "
        text = f"[{bar:<30}] {asked}{done}/{total} {'samples' if answered is None else 'scored'}  {elapsed:.1f}s elapsed, ETA {eta:.1f}s"
        if self.tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
