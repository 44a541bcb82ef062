"""Call the target for each question and judge each answer as soon as it arrives.

Two pools work at once: `target_workers` threads call the target, `judge_workers` threads score
the answers. A sample is judged the moment its answer is back, so a run takes about
max(target time, judge time) rather than their sum. Samples that already hold a target's answer
(a resumed run) skip the target. Every row is kept: a failed call gives a row whose
`target_error` names the failure and whose metrics are skipped with that reason.

Callbacks run on the calling thread: `on_answer(index, sample)` when an answer arrives (where a
run saves it, so a resume never calls the target again), then `on_result` and `on_progress` as in
`RAGEvaluator.evaluate_dataset`. Setting `stop` starts no more target calls; the calls in flight
finish and their answers are scored, so every answer that came back is a row of the report. A failing judge stops the run as in
`evaluate_dataset` (JudgeFailed, whose `report` holds the finished rows); answers already received
stay saved through `on_answer`.
"""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Sequence

from ..errors import JudgeFailed
from ..scoring.evaluation import RAGEvaluator
from ..model import EvalReport, EvalResult, EvalSample
from ..scoring.passes import Progress, ProgressCallback, ResultCallback, ScoringPass
from ..safetext import clean_sample
from .base import STOPPED, RetryPolicy, Target, ask
from .shapes import TargetResponse

AnswerCallback = Callable[[int, EvalSample], None]


def is_answered(sample: EvalSample) -> bool:
    """Whether a target already answered this sample (its latency or its failure is recorded)."""
    return sample.target_latency_ms is not None or sample.target_error is not None


def with_response(sample: EvalSample, response: TargetResponse, target: Any = None) -> EvalSample:
    """The sample carrying the target's answer, contexts, tool calls, latency and any error; their
    text made safe (safetext), with a note of what was replaced."""
    return clean_sample(replace(sample, answer=response.answer, contexts=list(response.contexts),
                   tool_calls=list(response.tool_calls), target_latency_ms=response.latency_ms,
                   target_error=response.error,
                   no_contexts_reason=getattr(target, "no_contexts_reason", None)))


class _Pipeline:
    """The two pools and the bookkeeping of one pipelined run."""

    def __init__(self, evaluator: RAGEvaluator, target: Target, policy: RetryPolicy,
                 stop: Optional[threading.Event]) -> None:
        self.evaluator, self.target, self.policy = evaluator, target, policy
        self.stop = stop or threading.Event()
        self.asking: Dict[Future, int] = {}
        self.judging: Dict[Future, int] = {}
        self.results: Dict[int, EvalResult] = {}

    def run(self, samples: List[EvalSample], target_workers: int, judge_workers: int,
            on_answer: Optional[AnswerCallback], progress: Progress) -> List[EvalResult]:
        queue = [(i, s) for i, s in enumerate(samples) if not is_answered(s)][::-1]
        with ThreadPoolExecutor(target_workers, thread_name_prefix="ragmeter-target") as asker, \
                ThreadPoolExecutor(judge_workers, thread_name_prefix="ragmeter-judge") as judge:
            self._judge_all([(i, s) for i, s in enumerate(samples) if is_answered(s)], judge)
            while True:
                while queue and len(self.asking) < target_workers and not self.evaluator.stopping(self.stop):
                    index, sample = queue.pop()
                    self.asking[asker.submit(ask, self.target, sample.question, self.policy, self.stop)] = index
                if not self.asking and not self.judging:
                    break
                finished, _ = wait([*self.asking, *self.judging], return_when=FIRST_COMPLETED)
                for future in finished:
                    self._finish(future, samples, judge, on_answer, progress)
        return [self.results[i] for i in sorted(self.results)]

    def _judge_all(self, items: Sequence, pool: ThreadPoolExecutor) -> None:
        for index, sample in items:
            self.judging[pool.submit(self.evaluator.evaluate, sample)] = index

    def _finish(self, future: Future, samples: List[EvalSample], pool: ThreadPoolExecutor,
                on_answer: Optional[AnswerCallback], progress: Progress) -> None:
        if future in self.asking:
            index = self.asking.pop(future)
            response = future.result()
            if response.error == STOPPED:  # abandoned on stop: left unanswered, so a resume asks again
                return
            sample = with_response(samples[index], response, self.target)
            if on_answer is not None:
                on_answer(index, sample)
            self._judge_all([(index, sample)], pool)
        else:
            index = self.judging.pop(future)
            try:
                self.results[index] = future.result()
            except JudgeFailed:
                return  # the judge is failing: this row stays unscored (its answer is saved) and no more are asked
            progress.update(index, self.results[index])


def evaluate_with_target(evaluator: RAGEvaluator, samples: Sequence[EvalSample], target: Target, *,
                         policy: RetryPolicy = RetryPolicy(), target_workers: int = 4, judge_workers: int = 1,
                         show_progress: bool = False, on_answer: Optional[AnswerCallback] = None,
                         on_progress: Optional[ProgressCallback] = None, on_result: Optional[ResultCallback] = None,
                         stop: Optional[threading.Event] = None) -> EvalReport:
    """Answer every sample with `target` and score each answer as it arrives; results in input order."""
    samples = list(samples)
    scoring = ScoringPass(evaluator, len(samples), show_progress, on_progress, on_result)  # as evaluate_dataset
    pipeline = _Pipeline(evaluator, target, policy, stop)
    return scoring.report(pipeline.run(samples, max(1, target_workers), max(1, judge_workers), on_answer,
                                       scoring.progress))
