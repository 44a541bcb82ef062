"""Call the target for each row and judge each answer as soon as it arrives.

Two pools work at once: `target_workers` threads call the target, `judge_workers` threads score
the answers. A row is judged the moment its answer is back, so a run takes about
max(target time, judge time) rather than their sum. A conversation's row is replayed, its user
turns asked one by one (replay.py); a single-turn row is the one-exchange case, its question asked
once. Rows that already hold a target's answer (a resumed run) skip the target. Every row is kept:
a failed call gives a row whose `target_error` names the failure and whose metrics are skipped with
that reason (a conversation keeps the turns before it, scored).

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
from ..scoring.passes import ScoringPass
from ..scoring.progress import Progress, ProgressCallback, ResultCallback
from ..safetext import clean_sample
from .base import STOPPED, RetryPolicy, Target, ask
from .replay import replay
from ..io.shapes import TargetResponse

AnswerCallback = Callable[[int, EvalSample], None]


def with_response(sample: EvalSample, response: TargetResponse, target: Any = None) -> EvalSample:
    """The sample carrying the target's answer, contexts, tool calls, latency and any error; their
    text made safe (safetext), with a note of what was replaced."""
    return clean_sample(replace(sample, answer=response.answer, contexts=list(response.contexts),
                   tool_calls=list(response.tool_calls), target_latency_ms=response.latency_ms,
                   target_error=response.error, retrieval_ids=response.retrieval_ids, no_answer_reason=None,
                   no_contexts_reason=getattr(target, "no_contexts_reason", None)))


def answer(target: Target, sample: EvalSample, spec: str, policy: RetryPolicy = RetryPolicy(),
           stop: Optional[threading.Event] = None) -> Optional[EvalSample]:
    """The row with the target's answer: a conversation replayed turn by turn, a single-turn row's one
    exchange asked; None when stop abandoned it (left unanswered, so a resume asks again)."""
    if sample.conversation is None:
        response = ask(target, sample.question, policy, stop)
        return None if response.error == STOPPED else with_response(sample, response, target)
    done = replay(sample.conversation, target, spec, policy, stop)
    return None if any(t.error == STOPPED for t in done.turns) else EvalSample.from_conversation(done)


class _Pipeline:
    """The two pools and the bookkeeping of one pipelined run."""

    def __init__(self, evaluator: RAGEvaluator, target: Target, spec: str, policy: RetryPolicy,
                 stop: Optional[threading.Event]) -> None:
        self.evaluator, self.target, self.spec, self.policy = evaluator, target, spec, policy
        self.stop = stop or threading.Event()
        self.asking: Dict[Future, int] = {}
        self.judging: Dict[Future, int] = {}
        self.results: Dict[int, EvalResult] = {}

    def run(self, samples: List[EvalSample], target_workers: int, judge_workers: int,
            on_answer: Optional[AnswerCallback], progress: Progress) -> List[EvalResult]:
        queue = [(i, s) for i, s in enumerate(samples) if not s.answered][::-1]
        with ThreadPoolExecutor(target_workers, thread_name_prefix="ragmeter-target") as asker, \
                ThreadPoolExecutor(judge_workers, thread_name_prefix="ragmeter-judge") as judge:
            self._judge_all([(i, s) for i, s in enumerate(samples) if s.answered], judge)
            while True:
                while queue and len(self.asking) < target_workers and not self.evaluator.stopping(self.stop):
                    index, sample = queue.pop()
                    self.asking[asker.submit(answer, self.target, sample, self.spec, self.policy, self.stop)] = index
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
            sample = future.result()
            if sample is None:  # abandoned on stop: left unanswered, so a resume asks again
                return
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
                         spec: str = "",
                         show_progress: bool = False, on_answer: Optional[AnswerCallback] = None,
                         on_progress: Optional[ProgressCallback] = None, on_result: Optional[ResultCallback] = None,
                         stop: Optional[threading.Event] = None) -> EvalReport:
    """Answer every row with `target` and score each answer as it arrives; results in input order.

    `spec` names the target in a replayed conversation (`recorded_by`), so a resume knows its replies."""
    samples = list(samples)
    scoring = ScoringPass(evaluator, len(samples), show_progress, on_progress, on_result)  # as evaluate_dataset
    pipeline = _Pipeline(evaluator, target, spec, policy, stop)
    return scoring.report(pipeline.run(samples, max(1, target_workers), max(1, judge_workers), on_answer,
                                       scoring.progress))
