"""RAGEvaluator: scores rows (single-turn or conversations) with a judge, one at a time or concurrently, keeping order."""
from __future__ import annotations

import copy
import logging
import threading
import time
from functools import partial
from typing import Iterable, List, Literal, Optional

from ..engines.pool import Pool, Task
from ..judges.base import Judge, is_offline
from ..judges.health import HealthPolicy, JudgeHealth, WatchedJudge
from ..metrics.combined import AUTO, JUDGE_MODES
from ..metrics.heuristic_sets import DEFAULT_HEURISTICS, HEURISTIC_SETS
from ..metrics.registry import Metric, MetricChoice, resolve_metrics
from ..metrics.scoring import score_sample
from ..model import EvalReport, EvalResult, EvalSample
from .conversations import score_conversation
from ..metrics.languages import noted
from .passes import ScoringPass
from .progress import ProgressCallback, ResultCallback
from ..text import resolve_language

log = logging.getLogger("ragmeter")

Language = Literal["ar", "en", "auto"]  # auto: decided per sample from its text



class RAGEvaluator:
    """Scores RAG samples with any judge that has `.generate(prompt) -> str`.

    `metrics` chooses what is scored: registered names and/or Metric objects (a RubricMetric,
    say), in display order. The default is the five judged metrics plus the rule-based ones
    for samples that carry keywords / expected documents. Each judged metric costs `repeats`
    judge calls per sample (its score is their mean; MetricScore.llm_scores keeps each one);
    rule-based ones cost none.

    `judge_health` decides when `evaluate_dataset` stops early because the judge is failing
    (see judges/health.py); None scores every row whatever the judge does.

    `judge_mode` (metrics/combined.py): "auto" (the default) asks one call per metric, the calls sharing one
    prompt prefix, on a server that reuses a cached prefix (llama.cpp, vLLM, Ollama, LM Studio), and on any
    other server asks the metrics that read the contexts in one call, so the contexts are billed once
    ("grouped"); "separate", "grouped" and "combined" (one call per sample) choose one layout.
    """

    def __init__(self, llm: Judge, language: Language = "auto", batch_delay: float = 0.0,
                 *, heuristics: str = DEFAULT_HEURISTICS,
                 metrics: Optional[Iterable[MetricChoice]] = None, repeats: int = 1,
                 judge_health: Optional[HealthPolicy] = HealthPolicy(), judge_mode: str = AUTO) -> None:
        if llm is None:
            raise ValueError("RAGEvaluator requires an LLM instance.")
        if language not in ("ar", "en", "auto"):
            raise ValueError(f"language must be 'ar', 'en' or 'auto', not {language!r}")
        if judge_mode not in JUDGE_MODES:
            raise ValueError(f"judge_mode must be one of {', '.join(JUDGE_MODES)}, not {judge_mode!r}")
        if heuristics not in HEURISTIC_SETS:
            raise ValueError(f"unknown heuristic set {heuristics!r}; choose one of {sorted(HEURISTIC_SETS)}")
        self.llm = llm
        self.language = language
        self.batch_delay = batch_delay
        if not isinstance(repeats, int) or isinstance(repeats, bool) or repeats < 1:
            raise ValueError(f"repeats must be a whole number >= 1, not {repeats!r}")
        self.heuristics = heuristics
        self.metrics = resolve_metrics(metrics)
        self.repeats = repeats
        self.judge_health = judge_health
        self.judge_mode = judge_mode
        self.health: Optional[JudgeHealth] = None  # the current evaluate_dataset's, when watched
        self._judge = llm

    @property
    def metric_names(self) -> List[str]:
        return [m.name for m in self.metrics]

    def with_judge(self, judge: Judge) -> "RAGEvaluator":
        """A copy that scores exactly as this one does (language, heuristics…) but asks `judge`,
        unwatched: how a Batch API run collects its prompts and replays the batch's replies."""
        twin = copy.copy(self)
        twin.llm, twin._judge, twin.health = judge, judge, None
        return twin

    def evaluate(self, sample: EvalSample, *, parallel_calls: bool = False) -> EvalResult:
        """Score one sample on every chosen metric (skipped ones say why); a conversation's row turn by
        turn, then as a whole (scoring/conversations.py).

        The sample's first judge call goes alone; with `parallel_calls` the others then go
        together (evaluate_dataset asks for that when it runs several workers)."""
        sample = noted(sample, self.language)  # a German row says it was scored with English prompts
        if sample.conversation is not None:
            return score_conversation(self, sample, parallel_calls=parallel_calls)
        return self.score(sample, self.metrics, parallel_calls=parallel_calls)

    def score(self, sample: EvalSample, metrics: List[Metric], *, parallel_calls: bool = False) -> EvalResult:
        """Score one exchange on `metrics` (one of the evaluator's own choice, or a conversation's share of it)."""
        start = time.perf_counter()
        lang = resolve_language(self.language, sample.question, sample.answer, *sample.contexts)
        # After each metric: a judge known to fail drops this sample (it stays pending).
        check = self.health.check if self.health is not None else None
        scores = score_sample(metrics, sample, self._judge, lang, self.heuristics, self.repeats, check,
                              parallel_calls=parallel_calls, judge_mode=self.judge_mode)
        return EvalResult(sample.sample_id, elapsed_sec=time.perf_counter() - start, sample=sample, scores=scores)

    @classmethod
    def quick_eval(cls, llm: Judge, question: str, answer: str, contexts: List[str],
                   ground_truth: Optional[str] = None) -> EvalResult:
        return cls(llm).evaluate(EvalSample(question, answer, list(contexts), ground_truth))

    def evaluate_dataset(self, samples: Iterable[EvalSample], show_progress: bool = False, *,
                         max_workers: int = 1, on_progress: Optional[ProgressCallback] = None,
                         on_result: Optional[ResultCallback] = None,
                         stop: Optional[threading.Event] = None, keep_results: bool = True) -> EvalReport:
        """Score every sample and return the report, results in input order.

        `keep_results=False` returns a report with no rows: each went to `on_result`, and whoever stores
        or counts them there need not hold the whole run in memory twice (runs/run.py, in a worker).

        `on_progress(done, total, result)` runs after each sample; `on_result(index, result)`
        too, with the sample's input position (how the run history persists each row as it
        finishes). Setting `stop` finishes the samples in flight, starts no more, and returns a
        report of every finished sample. Callbacks run on the calling thread.

        When the judge fails (see `judge_health`) the run stops early and raises `JudgeFailed`,
        whose `report` holds every finished sample; the samples in flight are dropped, not
        scored on heuristics.
        """
        samples = list(samples)
        if not samples:
            log.warning("evaluate_dataset called with no samples; returning an empty report.")
            return EvalReport()
        scoring = ScoringPass.watching(self, len(samples), show=show_progress, on_progress=on_progress,
                                       on_result=on_result, stop=stop, keep=keep_results)
        self.score_rows(samples, max_workers, scoring)
        return scoring.report()

    def watch(self) -> None:
        """A fresh JudgeHealth for this run (none for an offline judge, which is never called)."""
        if self.judge_health is None or is_offline(self.llm):
            self.health, self._judge = None, self.llm
            return
        self.health = JudgeHealth(self.judge_health)
        self._judge = WatchedJudge(self.llm, self.health)

    def score_rows(self, samples: List[EvalSample], workers: int, scoring: ScoringPass) -> None:
        """The local engine: up to `workers` rows at once on the one pool, each handed to `scoring` as it
        finishes; no row starts once `scoring` says stop (so Stop wastes at most the rows in flight)."""
        queue = iter(enumerate(samples))
        together = workers > 1  # with several rows at once, a row's own judge calls go together too

        def next_task() -> Optional[Task]:
            item = next(queue, None)
            if item is None:
                return None
            if self.batch_delay > 0 and item[0]:
                time.sleep(self.batch_delay)
            return item[0], partial(self.evaluate, item[1], parallel_calls=together)

        with Pool(workers, "ragmeter") as pool:
            for index, future in pool.completed(next_task, stop=lambda: not scoring.going()):
                scoring.add(index, future.result)
