"""Runs scored on a background thread: live counters, Stop that keeps every row, resume.

The dashboard starts a `BackgroundRun` and only reads its counters to draw the progress, so the
user can stop the run, or leave the page, without losing a finished row:

    run = BackgroundRun(RAGEvaluator(judge), list(enumerate(samples)), dataset_name="faq.csv",
                        store=RunStore()).start()
    run.done, run.total, run.eta(), run.means()   # from any thread, while it runs
    run.stop()                                    # finish the samples in flight, start no more
    run.join(); run.status, run.report            # "finished" | "stopped" | "failed"

Each finished row is written to the run history (`RunStore.record_result`) as it completes, so
`BackgroundRun.resume` later scores only what is left. A history that cannot be written never
stops the run: it goes on unsaved and says why in `warning`.

`JudgeConfig` is what a user picks for a judge (offline or OpenAI-compatible), turned into the
judge itself and into the settings the history keeps (never the API key).
"""
from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from .judges.cache import default_cache_path
from .errors import HistoryError, JudgeFailed, RagmeterError
from .evaluation import OfflineJudge, RAGEvaluator
from .history import RunStore
from .model import EvalReport, EvalResult, EvalSample

log = logging.getLogger("ragmeter.runner")

Pending = Sequence[Tuple[int, EvalSample]]


def format_duration(seconds: Optional[float]) -> str:
    """A duration as people read it: '40 ms', '3.2 s', '4 min 05 s', '2 h 07 min'; '–' for None."""
    if seconds is None:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def describe(exc: BaseException) -> str:
    """The message a user sees for a failed run; ragmeter's own errors already say what to do."""
    return str(exc) if isinstance(exc, RagmeterError) else f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class JudgeConfig:
    """The judge a user picked. The key lives only here, in memory: never in `settings()`."""

    offline: bool = True
    language: str = "auto"
    model: str = ""
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    cache: bool = True
    max_workers: int = 4
    price_in: Optional[float] = None
    price_out: Optional[float] = None

    @property
    def workers(self) -> int:
        """Samples scored at once. The offline judge is pure Python: threads only add GIL overhead."""
        return 1 if self.offline else max(1, int(self.max_workers))

    def build(self, fallback_key: str = "") -> Any:
        """The judge; JudgeConfigError when it cannot start. `fallback_key` is used when no key was typed."""
        if self.offline:
            return OfflineJudge()
        from .judges.openai import OpenAIJudge  # the openai client is only needed with a real judge

        return OpenAIJudge(self.model, base_url=self.base_url or None, api_key=self.api_key or fallback_key or None,
                           cache=default_cache_path() if self.cache else None, max_concurrency=self.workers)

    def settings(self, judge: Any) -> Dict[str, Any]:
        """What the history keeps about a run (a judge's own settings() never include the key)."""
        settings: Dict[str, Any] = {"judge": "offline" if self.offline else "openai", "language": self.language,
                                    "max_workers": self.workers, "price_in": self.price_in,
                                    "price_out": self.price_out}
        settings.update(judge.settings() if hasattr(judge, "settings") else {})
        return settings

    @classmethod
    def from_settings(cls, settings: Dict[str, Any], api_key: str = "") -> "JudgeConfig":
        """The config a stored run used; the key must be given again (it was never stored)."""
        language = settings.get("language", "auto")
        if settings.get("judge") != "openai":
            return cls(True, language)
        return cls(False, language, settings.get("model", ""), settings.get("base_url", ""), api_key,
                   bool(settings.get("cache")), int(settings.get("max_workers") or 4),
                   settings.get("price_in"), settings.get("price_out"))


class BackgroundRun:
    """Scores `pending` ((index, sample) pairs) on a daemon thread, saving each row as it finishes.

    `store` is a RunStore or the path of one (opened by `start`). A new run (`run_id` None) is
    created in it first, with the pending samples; a resumed run keeps its id and `prior` counts
    the rows it already has. `close_judge` closes the judge at the end,
    for callers that built a judge for this run alone.
    """

    def __init__(self, evaluator: RAGEvaluator, pending: Pending, *, dataset_name: str,
                 settings: Optional[Dict[str, Any]] = None, store: Union[RunStore, str, os.PathLike, None] = None,
                 run_id: Optional[str] = None, prior: int = 0, max_workers: int = 1,
                 close_judge: bool = False) -> None:
        self.evaluator, self.pending = evaluator, list(pending)
        self.dataset_name, self.settings = dataset_name, dict(settings or {})
        self.store, self.run_id, self.prior = store, run_id, prior
        self.total = prior + len(self.pending)
        self.done = prior  # rows finished in the whole run, earlier sessions' included
        self.status = "ready"  # then running, and finally finished, stopped or failed
        self.report: Optional[EvalReport] = None  # set when the run has ended
        self.error: Optional[str] = None
        self.warning: Optional[str] = None
        self._workers, self._close_judge = max_workers, close_judge
        self._results: Dict[int, EvalResult] = {}
        self._sums: Dict[str, List[float]] = {}  # metric -> [sum, count] of this session's scores
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._started: Optional[float] = None
        self._ended: Optional[float] = None

    @classmethod
    def resume(cls, store: RunStore, run_id: str, evaluator: RAGEvaluator, *, max_workers: int = 1,
               close_judge: bool = False) -> "BackgroundRun":
        """A run that scores only the samples `run_id` has no stored result for (HistoryError if unknown)."""
        info = store.get_run(run_id)
        return cls(evaluator, store.pending_samples(run_id), dataset_name=info.dataset_name, settings=info.settings,
                   store=store, run_id=run_id, prior=info.n_done, max_workers=max_workers, close_judge=close_judge)

    # -- control ----------------------------------------------------------------------------------
    def start(self) -> "BackgroundRun":
        """Create the run in the history (unless resumed) and start scoring; returns self."""
        if self._thread is not None:
            raise RuntimeError("This run has already been started; create a new BackgroundRun.")
        self._open_history()
        self.status, self._started = "running", time.perf_counter()
        self._thread = threading.Thread(target=self._run, name="ragmeter-run", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Finish the samples in flight and start no more; every finished row is kept."""
        self._stop.set()

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait for the run to end (at most `timeout` seconds); True when it has ended."""
        if self._thread is not None:
            self._thread.join(timeout)
        return not self.running

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    @property
    def stopping(self) -> bool:
        """Stop was asked for (the run may still be finishing the samples in flight)."""
        return self._stop.is_set()

    # -- live figures -----------------------------------------------------------------------------
    def elapsed(self) -> float:
        """Seconds since start, frozen when the run ends."""
        if self._started is None:
            return 0.0
        return (self._ended or time.perf_counter()) - self._started

    def eta(self) -> Optional[float]:
        """Seconds left at this session's pace; None before its first row, 0 once every row is done."""
        new = self.done - self.prior
        return self.elapsed() / new * (self.total - self.done) if new else None

    def means(self) -> Dict[str, float]:
        """Running mean of each metric over this session's scored (not skipped) rows."""
        with self._lock:
            return {name: total / n for name, (total, n) in self._sums.items()}

    # -- the thread -------------------------------------------------------------------------------
    def _open_history(self) -> None:
        if self.store is None:
            return
        try:
            if not isinstance(self.store, RunStore):
                self.store = RunStore(self.store)
            if self.run_id is None:
                samples = [s for _, s in self.pending]
                self.run_id = self.store.create_run(dataset_name=self.dataset_name, samples=samples,
                                                    settings=self.settings)
                self.pending = list(enumerate(samples))  # the new run's rows are numbered from 0
        except HistoryError as exc:
            self.warning, self.store = f"This run is not saved to the history: {exc}", None

    def _run(self) -> None:
        try:
            report = self.evaluator.evaluate_dataset(
                [s for _, s in self.pending], max_workers=self._workers, on_progress=self._tally,
                on_result=self._keep, stop=self._stop)
            self.status = "finished" if len(self._results) == len(self.pending) else "stopped"
            self.report = self._close(report)
        except JudgeFailed as exc:  # the judge is failing: stopped early, every finished row saved, resumable
            self.status, self.error = "stopped", describe(exc)
            self.report = self._close(exc.report)
        except BaseException as exc:  # a thread has no caller to raise to: the run must end "failed"
            log.exception("run %s failed", self.run_id)
            self.status, self.error = "failed", describe(exc)
            self._mark(None, None)
            self.report = self._partial_report()
        finally:
            self._ended = time.perf_counter()
            self._release()

    def _tally(self, done: int, total: int, result: EvalResult) -> None:
        with self._lock:
            for name, ms in result.metric_scores().items():
                if not ms.skipped:
                    cell = self._sums.setdefault(name, [0.0, 0])
                    cell[0] += ms.score
                    cell[1] += 1
            self.done = self.prior + done

    def _keep(self, j: int, result: EvalResult) -> None:
        """on_result: keep the row, and save it now so a crash or Stop loses nothing finished."""
        index = self.pending[j][0]
        self._results[index] = result
        if isinstance(self.store, RunStore) and self.run_id:
            try:
                self.store.record_result(self.run_id, index, result)
            except Exception as exc:  # a history failure must not lose the run itself
                self.warning = self.warning or f"Some rows could not be saved to the history: {describe(exc)}"
                log.warning("history write failed", exc_info=True)

    def _close(self, report: EvalReport) -> EvalReport:
        """Record the run's end; a resumed run's report is the whole run, read back from the history."""
        if not self.prior or not isinstance(self.store, RunStore) or not self.run_id:
            self._mark(report.total_time, report.usage or None)
            return report
        full = self.store.load_report(self.run_id)  # its total_time and usage are the earlier sessions'
        full.total_time += report.total_time
        full.usage = _add_usage(full.usage or {}, report.usage or {})
        self._mark(full.total_time, full.usage or None)
        return full

    def _mark(self, total_time: Optional[float], usage: Optional[Dict[str, Any]]) -> None:
        if not isinstance(self.store, RunStore) or not self.run_id:
            return
        try:
            self.store.finish_run(self.run_id, status=self.status, total_time=total_time, usage=usage)
        except Exception:
            self.warning = self.warning or "The run's final status could not be saved to the history."
            log.warning("finish_run failed", exc_info=True)

    def _partial_report(self) -> EvalReport:
        """What a failed run keeps: its saved rows (earlier sessions' too), else the rows in memory."""
        if isinstance(self.store, RunStore) and self.run_id:
            try:
                return self.store.load_report(self.run_id)
            except Exception:
                log.warning("could not read back the failed run %s", self.run_id, exc_info=True)
        return EvalReport([self._results[i] for i in sorted(self._results)], total_time=self.elapsed())

    def _release(self) -> None:
        if isinstance(self.store, RunStore):
            self.store.close()  # this thread's connection
        close = getattr(self.evaluator.llm, "close", None)
        if self._close_judge and callable(close):
            close()


def _add_usage(before: Dict[str, Any], now: Dict[str, Any]) -> Dict[str, Any]:
    """Two sessions' judge usage added up (counts add; other values take the latest)."""
    total = dict(before)
    for key, value in now.items():
        old = total.get(key)
        both_numbers = isinstance(value, (int, float)) and isinstance(old, (int, float))
        total[key] = old + value if both_numbers and not isinstance(value, bool) else value
    return total
