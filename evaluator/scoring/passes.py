"""The one per-row loop: what happens to each row, whatever engine scores it.

An engine decides only *where* a row is scored (the local pool, a target pipeline's lanes, the Batch
API's replay, Ray workers); every row it finishes goes through one `ScoringPass`, which owns the rest:

- whether to start another row (`going`: no Stop asked, and the judge is not known to be dead);
- what a row the judge's failure dropped becomes (`add`: nothing; it stays pending and resumable,
  never a row of heuristic fallbacks);
- progress and the caller's callbacks, the rows kept in input order, the pass's judge usage;
- the end (`report`): `JudgeFailed`, holding every finished row and saying why, when the judge's
  health tripped (judges/health.py decides that, once).

    scoring = ScoringPass.watching(evaluator, len(samples), on_progress=..., stop=stop)
    ... while scoring.going(): scoring.add(index, lambda: evaluator.evaluate(sample)) ...
    return scoring.report()    # raises JudgeFailed when the judge was failing

Ray's driver builds its pass on a `JudgeHealth` of its own, which adopts a worker's verdict (engines/ray.py).
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Any, Callable, Dict, Optional, Protocol

from ..errors import JudgeFailed
from ..judges.base import judge_usage
from ..judges.health import STOPPED_KEY, UNUSABLE_KEY, JudgeHealth
from ..model import EvalReport, EvalResult
from .progress import Progress, ProgressCallback, ResultCallback

Usage = Callable[[], Dict[str, Any]]


def usage_delta(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """This pass's share of a judge's running totals (a judge may serve several runs)."""
    return {k: v - before.get(k, 0) if isinstance(v, (int, float)) else v for k, v in after.items()}


def _no_usage() -> Dict[str, Any]:
    return {}


class Scorer(Protocol):
    """What a watched pass needs of its evaluator (RAGEvaluator is one): the judge, and a fresh health watch."""

    llm: Any
    health: Optional[JudgeHealth]

    def watch(self) -> None: ...


class ScoringPass:
    """One pass over `total` rows (module docstring). `health` None: nothing stops it but `stop`."""

    def __init__(self, total: int, *, health: Optional[JudgeHealth] = None, usage: Usage = _no_usage,
                 show: bool = False, on_progress: Optional[ProgressCallback] = None,
                 on_result: Optional[ResultCallback] = None, stop: Optional[threading.Event] = None,
                 keep: bool = True) -> None:
        self.health, self.usage, self.stop, self.keep = health, usage, stop, keep
        self.start = time.perf_counter()
        self.results: Dict[int, EvalResult] = {}
        # The seed's console line: redrawn on stdout, terminal or not.
        self.progress = Progress(total, sys.stdout if show else None, redraw=True, callback=on_progress,
                                 on_result=on_result)

    @classmethod
    def watching(cls, evaluator: Scorer, total: int, **options: Any) -> "ScoringPass":
        """A pass of `evaluator`'s own judge: a fresh health watch, and the judge's usage from now on."""
        before = judge_usage(evaluator.llm)
        evaluator.watch()
        return cls(total, health=evaluator.health, usage=lambda: usage_delta(before, judge_usage(evaluator.llm)),
                   **options)

    @property
    def judge_dead(self) -> bool:
        return self.health is not None and self.health.tripped

    def going(self) -> bool:
        """Whether another row may start: no Stop was asked, and the judge is not known to be dead."""
        return not (self.stop is not None and self.stop.is_set()) and not self.judge_dead

    def add(self, index: int, outcome: Callable[[], EvalResult]) -> None:
        """A finished row (`outcome()` gives it) counted and handed to the callbacks. A row the judge's failure
        dropped (JudgeFailed) is not a row: it stays pending, and `report` says why the run stopped."""
        try:
            result = outcome()
        except JudgeFailed:
            return
        if self.keep:
            self.results[index] = result
        self.progress.update(index, result)

    def report(self) -> EvalReport:
        """The pass's report, rows in input order; `JudgeFailed` (its `report` set) when the judge's health tripped."""
        self.progress.close()
        report = EvalReport(results=[self.results[i] for i in sorted(self.results)],
                            total_time=time.perf_counter() - self.start, usage=self.usage())
        health = self.health
        if health is not None and health.unusable:
            report.usage[UNUSABLE_KEY] = health.unusable  # answered, but no score in the reply (judge_status)
        if health is not None and health.tripped:
            failure = health.failure()
            report.usage[STOPPED_KEY] = str(failure)  # kept with the run, so every surface can say why
            failure.report = report
            raise failure
        return report
