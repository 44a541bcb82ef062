"""One pass of an evaluator over a list of samples: the bookkeeping every way of scoring shares.

`RAGEvaluator.evaluate_dataset` and `targets.pipeline.evaluate_with_target` differ in how they
schedule the samples, not in how a pass starts and ends: both watch the judge's health, count
progress, take the judge's usage for this pass alone, and raise `JudgeFailed` (holding every
finished row) when the judge was failing. That shared part lives here, once.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Dict, List, Optional, Protocol

from ..judges.base import judge_usage
from ..judges.health import STOPPED_KEY, UNUSABLE_KEY, JudgeHealth
from ..model import EvalReport, EvalResult
from .progress import Progress, ProgressCallback, ResultCallback


def usage_delta(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """This pass's share of a judge's running totals (a judge may serve several runs)."""
    return {k: v - before.get(k, 0) if isinstance(v, (int, float)) else v for k, v in after.items()}


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
        # The seed's console line: redrawn on stdout, terminal or not.
        self.progress = Progress(total, sys.stdout if show else None, redraw=True, callback=on_progress,
                                 on_result=on_result)

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
