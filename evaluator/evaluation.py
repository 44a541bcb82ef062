"""RAGEvaluator: scores samples with a judge, one at a time or concurrently, keeping order."""
from __future__ import annotations

import logging
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Dict, Iterable, List, Optional

from .judges.base import Judge, judge_usage
from .metrics.heuristics import DEFAULT_HEURISTICS, HEURISTIC_SETS
from .metrics.scoring import rule_scores, score_metric
from .model import METRICS, EvalReport, EvalResult, EvalSample
from .text import resolve_language

log = logging.getLogger("ragmeter")

ProgressCallback = Callable[[int, int, EvalResult], None]
ResultCallback = Callable[[int, EvalResult], None]


class RAGEvaluator:
    """Scores RAG samples on the five metrics with any judge that has `.generate(prompt) -> str`."""

    def __init__(self, llm: Judge, language: str = "auto", batch_delay: float = 0.0,
                 *, heuristics: str = DEFAULT_HEURISTICS) -> None:
        if llm is None:
            raise ValueError("RAGEvaluator requires an LLM instance.")
        if language not in ("ar", "en", "auto"):
            raise ValueError(f"language must be 'ar', 'en' or 'auto', not {language!r}")
        if heuristics not in HEURISTIC_SETS:
            raise ValueError(f"unknown heuristic set {heuristics!r}; choose one of {sorted(HEURISTIC_SETS)}")
        self.llm = llm
        self.language = language
        self.batch_delay = batch_delay
        self.heuristics = heuristics

    def evaluate(self, sample: EvalSample) -> EvalResult:
        """Score one sample: five metrics (two skipped without a reference) plus rule-based extras."""
        start = time.perf_counter()
        lang = resolve_language(self.language, sample.question, sample.answer, *sample.contexts)
        scores = {m: score_metric(m, sample, self.llm, lang, self.heuristics) for m in METRICS}
        return EvalResult(sample_id=sample.sample_id, **scores,
                          elapsed_sec=time.perf_counter() - start,
                          extra=rule_scores(sample), sample=sample)

    @classmethod
    def quick_eval(cls, llm: Judge, question: str, answer: str, contexts: List[str],
                   ground_truth: Optional[str] = None) -> EvalResult:
        return cls(llm).evaluate(EvalSample(question, answer, list(contexts), ground_truth))

    def evaluate_dataset(self, samples: Iterable[EvalSample], show_progress: bool = False, *,
                         max_workers: int = 1, on_progress: Optional[ProgressCallback] = None,
                         on_result: Optional[ResultCallback] = None,
                         stop: Optional[threading.Event] = None) -> EvalReport:
        """Score every sample and return the report, results in input order.

        `on_progress(done, total, result)` runs after each sample; `on_result(index, result)`
        too, with the sample's input position (how the run history persists each row as it
        finishes). Setting `stop` finishes the samples in flight, starts no more, and returns a
        report of every finished sample. Callbacks run on the calling thread.
        """
        samples = list(samples)
        if not samples:
            log.warning("evaluate_dataset called with no samples; returning an empty report.")
            return EvalReport()
        start = time.perf_counter()
        usage_before = judge_usage(self.llm)
        progress = _Progress(len(samples), show_progress, on_progress, on_result)
        if max_workers <= 1:
            results = self._run_sequential(samples, progress, stop)
        else:
            results = self._run_concurrent(samples, max_workers, progress, stop)
        progress.close()
        return EvalReport(results=results, total_time=time.perf_counter() - start,
                          usage=_usage_delta(usage_before, judge_usage(self.llm)))

    def _run_sequential(self, samples: List[EvalSample], progress: "_Progress",
                        stop: Optional[threading.Event]) -> List[EvalResult]:
        results = []
        for i, sample in enumerate(samples):
            if stop is not None and stop.is_set():
                break
            if i and self.batch_delay > 0:
                time.sleep(self.batch_delay)
            results.append(self.evaluate(sample))
            progress.update(i, results[-1])
        return results

    def _run_concurrent(self, samples: List[EvalSample], workers: int, progress: "_Progress",
                        stop: Optional[threading.Event]) -> List[EvalResult]:
        done: Dict[int, EvalResult] = {}
        pending: Dict[Future, int] = {}
        queue = iter(enumerate(samples))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ragmeter") as pool:
            while True:
                # Keep at most `workers` samples in flight so Stop wastes little work.
                while len(pending) < workers and not (stop is not None and stop.is_set()):
                    item = next(queue, None)
                    if item is None:
                        break
                    if self.batch_delay > 0 and (pending or done):
                        time.sleep(self.batch_delay)
                    pending[pool.submit(self.evaluate, item[1])] = item[0]
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    index = pending.pop(fut)
                    done[index] = fut.result()
                    progress.update(index, done[index])
        return [done[i] for i in sorted(done)]


def _usage_delta(before: Dict[str, Any], after: Dict[str, Any]) -> Dict[str, Any]:
    """This run's share of a judge's running totals (a judge may serve several runs)."""
    return {k: v - before.get(k, 0) if isinstance(v, (int, float)) else v for k, v in after.items()}


class _Progress:
    """Counts finished samples, calls the user's callback and draws the optional console line."""

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
