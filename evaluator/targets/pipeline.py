"""Call the target for each row and judge each answer as soon as it arrives.

Two lanes of one pool (engines/pool.py) work at once: up to `target_workers` calls to the target,
up to `judge_workers` answers being scored. A row is judged the moment its answer is back, so a
run takes about max(target time, judge time) rather than their sum. A conversation's row is
replayed, its user turns asked one by one (replay.py); a single-turn row is the one-exchange case,
its question asked once. Rows that already hold a target's answer (a resumed run) skip the target. Every row is kept:
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
from collections import deque
from concurrent.futures import Future
from dataclasses import replace
from functools import partial
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

from ..engines.pool import Pool, Task
from ..scoring.evaluation import RAGEvaluator
from ..model import EvalReport, EvalSample
from ..scoring.passes import ScoringPass
from ..scoring.progress import ProgressCallback, ResultCallback
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


Row = Tuple[int, EvalSample]
ASK, JUDGE = "ask", "judge"  # the two lanes: a call to the target, the scoring of its answer


class _Pipeline:
    """The lanes of one pipelined run; each scored row goes to the run's one `ScoringPass`."""

    def __init__(self, evaluator: RAGEvaluator, target: Target, spec: str, policy: RetryPolicy,
                 scoring: ScoringPass, target_workers: int, judge_workers: int) -> None:
        self.evaluator, self.target, self.spec, self.policy = evaluator, target, spec, policy
        self.scoring = scoring
        self.stop = scoring.stop or threading.Event()
        self.limits = {ASK: target_workers, JUDGE: judge_workers}
        self.busy = {ASK: 0, JUDGE: 0}
        self.waiting: Dict[str, Deque[Row]] = {ASK: deque(), JUDGE: deque()}

    def run(self, samples: List[EvalSample], on_answer: Optional[AnswerCallback]) -> None:
        for row in enumerate(samples):
            self.waiting[JUDGE if row[1].answered else ASK].append(row)
        with Pool(sum(self.limits.values()), "ragmeter-pipeline") as pool:
            for (lane, index), future in pool.completed(self._next):
                self.busy[lane] -= 1
                self._finish(lane, index, future, on_answer)

    def _next(self) -> Optional[Task]:
        """An answer to score while a judge slot is free (after Stop too: every answer that came back is
        scored), else a question to ask while a target slot is free and the run goes on."""
        if self.waiting[JUDGE] and self.busy[JUDGE] < self.limits[JUDGE]:
            index, sample = self.waiting[JUDGE].popleft()
            return self._start(JUDGE, index, partial(self.evaluator.evaluate, sample))
        if self.waiting[ASK] and self.busy[ASK] < self.limits[ASK] and self.scoring.going():
            index, sample = self.waiting[ASK].popleft()
            return self._start(ASK, index, partial(answer, self.target, sample, self.spec, self.policy, self.stop))
        return None

    def _start(self, lane: str, index: int, call: Callable[[], Any]) -> Task:
        self.busy[lane] += 1
        return (lane, index), call

    def _finish(self, lane: str, index: int, future: Future, on_answer: Optional[AnswerCallback]) -> None:
        if lane == JUDGE:  # a row the failing judge dropped stays unscored; its answer is saved
            self.scoring.add(index, future.result)
            return
        sample = future.result()
        if sample is None:  # abandoned on stop: left unanswered, so a resume asks again
            return
        if on_answer is not None:
            on_answer(index, sample)
        self.waiting[JUDGE].append((index, sample))


def evaluate_with_target(evaluator: RAGEvaluator, samples: Sequence[EvalSample], target: Target, *,
                         policy: RetryPolicy = RetryPolicy(), target_workers: int = 4, judge_workers: int = 1,
                         spec: str = "",
                         show_progress: bool = False, on_answer: Optional[AnswerCallback] = None,
                         on_progress: Optional[ProgressCallback] = None, on_result: Optional[ResultCallback] = None,
                         stop: Optional[threading.Event] = None) -> EvalReport:
    """Answer every row with `target` and score each answer as it arrives; results in input order.

    `spec` names the target in a replayed conversation (`recorded_by`), so a resume knows its replies."""
    samples = list(samples)
    scoring = ScoringPass.watching(evaluator, len(samples), show=show_progress, on_progress=on_progress,
                                   on_result=on_result, stop=stop)
    _Pipeline(evaluator, target, spec, policy, scoring, max(1, target_workers), max(1, judge_workers)).run(
        samples, on_answer)
    return scoring.report()
