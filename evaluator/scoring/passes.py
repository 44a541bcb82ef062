"""One pass of an evaluator over a list of samples: the bookkeeping every way of scoring shares.

`RAGEvaluator.evaluate_dataset` and `targets.pipeline.evaluate_with_target` differ in how they
schedule the samples, not in how a pass starts and ends: both watch the judge's health, count
progress, take the judge's usage for this pass alone, and raise `JudgeFailed` (holding every
finished row) when the judge was failing. That shared part lives here, once.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Callable, Dict, List, Optional, Protocol

from ..judges.base import judge_usage
from ..judges.health import STOPPED_KEY, UNUSABLE_KEY, JudgeHealth
from ..model import EvalReport, EvalResult

ProgressCallback = Callable[[int, int, EvalResult], None]
ResultCallback = Callable[[int, EvalResult], None]


def usage_delta(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """This pass's share of a judge's running totals (a judge may serve several runs)."""
    return {k: v - before.get(k, 0) if isinstance(v, (int, float)) else v for k, v in after.items()}


class Progress:
    """Counts finished samples, calls the user's callbacks and draws the optional console line."""

    def __init__(self, total: int, show: bool, callback: Optional[ProgressCallback],
                 on_result: Optional[ResultCallback]) -> None:
        self.total, self.show, self.callback, self.on_result = total, show, callback, on_result
        self.done = 0
        self.start = time.perf_counter()

    def update(self, index: int, result: EvalResult) -> None:
        self.done += 1
        if self.on_result is not None:
            self.on_result(index, result)
        if self.callback is not None:
            self.callback(self.done, self.total, result)
        if self.show:
            elapsed = time.perf_counter() - self.start
            eta = elapsed / self.done * (self.total - self.done)
            bar = "#" * int(30 * self.done / self.total)
            sys.stdout.write(f"\r[{bar:<30}] {self.done}/{self.total}  {elapsed:.1f}s elapsed, ETA {eta:.1f}s")
            sys.stdout.flush()

    def close(self) -> None:
        if self.show:
            sys.stdout.write("\n")


class Scorer(Protocol):
    """What a pass needs of its evaluator (RAGEvaluator is one): the judge, and a fresh health watch."""

    llm: Any
    health: Optional[JudgeHealth]

    def watch(self) -> None: ...


class ScoringPass:
    """Starts a pass (a fresh judge-health watch, the usage baseline, the progress) and ends it.

        scoring = ScoringPass(evaluator, len(samples), show, on_progress, on_result)
        ... scoring.progress.update(index, result) for each finished sample ...
        return scoring.report(results)    # raises JudgeFailed when the judge was failing
    """

    def __init__(self, evaluator: Scorer, total: int, show: bool = False,
                 on_progress: Optional[ProgressCallback] = None, on_result: Optional[ResultCallback] = None) -> None:
        self.evaluator = evaluator
        self.start = time.perf_counter()
        self.usage_before = judge_usage(evaluator.llm)
        evaluator.watch()
        self.progress = Progress(total, show, on_progress, on_result)

    def report(self, results: List[EvalResult]) -> EvalReport:
        """The pass's report; `JudgeFailed` (its `report` set) when the judge's health tripped."""
        self.progress.close()
        report = EvalReport(results=results, total_time=time.perf_counter() - self.start,
                            usage=usage_delta(self.usage_before, judge_usage(self.evaluator.llm)))
        health = self.evaluator.health
        if health is not None and health.unusable:
            report.usage[UNUSABLE_KEY] = health.unusable  # answered, but no score in the reply (judge_status)
        if health is not None and health.tripped:
            failure = health.failure()
            report.usage[STOPPED_KEY] = str(failure)  # kept with the run, so every surface can say why
            failure.report = report
            raise failure
        return report
