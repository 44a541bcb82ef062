"""Finished rows written to the history in batches, off the scoring thread, retried when a write fails.

One transaction per row made a 5,000-row CLI run 5x slower with a history than without (issue 28):
`RowWriter` gathers the rows a run finishes and writes them with one `record_results` (an
executemany in one transaction) every `every` seconds or `batch` rows, and at the end. A write that
fails is tried again after a short, bounded wait (`waits`); rows that still cannot be written are
counted in `lost`, and the run then says "N rows were not saved to the history", never "ok".

A killed process loses at most the rows of the last `every` seconds; a resumed run scores them again.
Each batch carries the run's judge usage as it stands when the batch is written (`usage`), in the same
transaction: the stored rows never count fewer calls than they cost, wherever a kill falls (two
writes, rows then usage, once left a killed run's last batch uncounted).

At most `backlog` rows wait: a run that scores faster than the history takes its rows (offline scoring
outran SQLite's writes, and 56,000 waiting rows held ~300 MB) waits in `add` for the writer, so memory
stays a few batches whatever the run's size. Once writes fail, nothing waits: the run goes on unsaved.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ..errors import RagmeterError
from ..model import EvalResult, plural
from ..store.history import RunStore

log = logging.getLogger("ragmeter.runs")

Pair = Tuple[int, EvalResult, bool]  # (index, result, whether its sample is the one the run stored)
WAITS = (0.5, 1.5)  # seconds before the second and third tries: a database restart or a lock passes
BACKLOG = 2_000  # rows that may wait for the writer before `add` waits for it


class RowWriter:
    """Writes run `run_id`'s finished rows to `store` in batches from a thread of its own.

    `usage` gives the run's judge usage so far (None: nothing to store); each batch stores it with its rows.
    """

    def __init__(self, store: RunStore, run_id: str, *, every: float = 0.5, batch: int = 100,
                 waits: Sequence[float] = WAITS, usage: Optional[Callable[[], Optional[Dict[str, Any]]]] = None,
                 backlog: int = BACKLOG) -> None:
        self.store, self.run_id, self.backlog = store, run_id, backlog
        self.every, self.batch, self.waits = every, batch, tuple(waits)
        self.usage = usage
        self.lost = 0  # rows that could not be written, every try failed
        self.unsaved: List[Tuple[int, EvalResult]] = []  # those rows: a run that keeps no rows still has them
        self.saved = 0
        self.error: Optional[str] = None  # the last write failure, as the user reads it
        self._rows: List[Pair] = []
        self._cond = threading.Condition()
        self._closing = False
        self._write_lock = threading.Lock()  # one batch at a time, in order
        self._thread = threading.Thread(target=self._loop, name="ragmeter-rows", daemon=True)

    def start(self) -> "RowWriter":
        self._thread.start()
        return self

    def add(self, index: int, result: EvalResult, stored: bool = False) -> None:
        """Queue a finished row; `stored`: its sample is the one already stored with the run."""
        with self._cond:
            while len(self._rows) >= self.backlog and not self.lost and not self._closing and self._thread.is_alive():
                self._cond.notify()
                self._cond.wait(0.1)  # the writer takes the waiting rows and notifies
            self._rows.append((index, result, stored))
            if len(self._rows) >= self.batch:
                self._cond.notify()

    def flush(self) -> None:
        """Write what is waiting now, from the calling thread."""
        with self._cond:
            rows, self._rows = self._rows, []
        self._write(rows)

    def close(self) -> None:
        """Write every row left and stop the thread; `lost` and `error` are final afterwards."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join()
        self.flush()

    @property
    def message(self) -> Optional[str]:
        """What the run's verdict says when rows were lost."""
        if not self.lost:
            return None
        return (f"{plural(self.lost, 'row')} {'was' if self.lost == 1 else 'were'} not saved to the history "
                f"({self.error}); this run's printed report and files have them; resume the run to score them "
                "again into the history")

    def _loop(self) -> None:
        try:
            while True:
                with self._cond:
                    if not self._closing and len(self._rows) < self.batch:
                        self._cond.wait(self.every)
                    rows, self._rows, closing = self._rows, [], self._closing
                    self._cond.notify_all()  # a run waiting in `add` for room goes on
                self._write(rows)
                if closing:
                    return
        finally:
            self.store.close()  # this thread's connection

    def _write(self, rows: List[Pair]) -> None:
        if not rows:
            return
        with self._write_lock:
            for attempt in range(len(self.waits) + 1):
                try:
                    self.store.record_results(self.run_id, [(i, r) for i, r, _ in rows],
                                              stored={i for i, _, own in rows if own}, usage=self._usage())
                    self.saved += len(rows)
                    break
                except Exception as exc:  # a failed write must never end the run
                    self.error = str(exc) if isinstance(exc, RagmeterError) else f"{type(exc).__name__}: {exc}"
                    log.warning("history write failed (try %d)", attempt + 1, exc_info=True)
                    if attempt == len(self.waits):
                        self.lost += len(rows)
                        self.unsaved += [(i, r) for i, r, _ in rows]
                        return
                    time.sleep(self.waits[attempt])

    def _usage(self) -> Optional[Dict[str, Any]]:
        """The usage to store with a batch, read after its rows finished; a failure costs the usage, not the rows."""
        try:
            return None if self.usage is None else self.usage()
        except Exception:
            log.warning("could not read the run's usage", exc_info=True)
            return None
