"""Sequential A/B: two pipelines answer the same questions in random order, until the difference is known.

Each step asks both targets one question, scores both answers on one metric and adds the paired
difference score(A) - score(B) to an anytime-valid confidence sequence (analysis/inference.py).
The test stops as soon as the sequence excludes 0 (a winner) or lies within ±tie (no practical
difference), else when the samples (or --max-samples) run out: "undecided". Because the sequence
is valid at every step at once, stopping early keeps the false-winner rate under alpha.

The questions are asked and scored by `Run` (runs/run.py, no history kept), `workers` samples at a
time: each window of the random order is one run per target, both at once, and the test reads the
window's pairs in order before the next window is asked. So at most workers - 1 samples are asked
past the one the test stops at.

A pair where either target failed or the metric was skipped is left out of the test and counted.
The same test reads two stored runs' paired rows in stored order (`ab_from_scores`).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple

from ..analysis.inference import UNDECIDED, ConfidenceSequence, decide
from ..errors import JudgeFailed
from ..judges.base import judge_usage
from ..model import EvalResult, EvalSample
from ..scoring.evaluation import RAGEvaluator
from ..targets import Target, TargetConfig
from .run import Run

DEFAULT_METRIC = "faithfulness"


@dataclass(frozen=True)
class ABSettings:
    """What the user chose: the metric compared, the error rate, the tie margin, the sample cap, the order's seed."""

    metric: str = DEFAULT_METRIC
    alpha: float = 0.05
    tie: float = 0.02
    max_samples: Optional[int] = None
    seed: int = 0

    def __post_init__(self) -> None:
        if not 0 < self.alpha < 1:
            raise ValueError(f"alpha must be between 0 and 1 (e.g. 0.05), not {self.alpha!r}")
        if not 0 <= self.tie < 1:
            raise ValueError(f"tie must be a score difference from 0 to 1 (e.g. 0.02), not {self.tie!r}")
        if self.max_samples is not None and self.max_samples < 1:
            raise ValueError(f"max_samples must be at least 1, not {self.max_samples!r}")


@dataclass
class ABResult:
    """How the test ended; `to_dict` is the --json file."""

    settings: ABSettings
    samples_total: int
    decision: str = UNDECIDED
    difference: float = 0.0  # mean of score(A) - score(B) over the pairs used
    interval: Tuple[float, float] = (-1.0, 1.0)
    samples_used: int = 0  # questions asked of both targets
    pairs: int = 0  # pairs in the test (samples used less those left out)
    left_out: List[str] = field(default_factory=list)  # why each left-out pair was left out
    judge_calls: int = 0
    means: Tuple[float, float] = (0.0, 0.0)  # mean score of A and of B over the pairs

    @property
    def samples_saved(self) -> int:
        return self.samples_total - self.samples_used

    @property
    def judge_calls_saved(self) -> int:
        """The judge calls the unused samples would have cost, at the rate the used ones did."""
        return round(self.judge_calls / self.samples_used * self.samples_saved) if self.samples_used else 0

    def to_dict(self) -> Dict[str, Any]:
        return {"decision": self.decision, "difference": self.difference, "interval": list(self.interval),
                "samples_used": self.samples_used, "samples_total": self.samples_total,
                "judge_calls": self.judge_calls, "samples_saved": self.samples_saved,
                "judge_calls_saved": self.judge_calls_saved, "pairs": self.pairs, "left_out": len(self.left_out),
                "mean_a": self.means[0], "mean_b": self.means[1], "metric": self.settings.metric,
                "alpha": self.settings.alpha, "tie": self.settings.tie}


class SequentialAB:
    """The running test: `add(score_a, score_b)` per pair, or `skip(reason)`; `result` at any time."""

    def __init__(self, settings: ABSettings, samples_total: int) -> None:
        self.result = ABResult(settings, samples_total)
        # the bets are tuned for the most pairs the test can see: tightest there, valid at every step
        horizon = min(samples_total, settings.max_samples or samples_total)
        self.sequence = ConfidenceSequence(alpha=settings.alpha, horizon=max(1, horizon))
        self._sums = [0.0, 0.0]

    @property
    def done(self) -> bool:
        cap = self.result.settings.max_samples
        return self.result.decision != UNDECIDED or (cap is not None and self.result.samples_used >= cap)

    def add(self, score_a: float, score_b: float) -> None:
        r = self.result
        r.samples_used += 1
        r.pairs += 1
        r.interval = self.sequence.add(score_a - score_b)
        r.difference = self.sequence.estimate
        self._sums = [self._sums[0] + score_a, self._sums[1] + score_b]
        r.means = (self._sums[0] / r.pairs, self._sums[1] / r.pairs)
        r.decision = decide(r.interval, r.settings.tie)

    def skip(self, reason: str) -> None:
        self.result.samples_used += 1
        self.result.left_out.append(reason)


def ab_from_scores(scores_a: Sequence[Optional[float]], scores_b: Sequence[Optional[float]],
                   settings: ABSettings = ABSettings()) -> ABResult:
    """The test over already scored pairs in the order given (two stored runs' rows); None is a missing score."""
    test = SequentialAB(settings, min(len(scores_a), len(scores_b)))
    for a, b in zip(scores_a, scores_b):
        if test.done:
            break
        if a is None or b is None:
            test.skip("no score on one side")
        else:
            test.add(a, b)
    return test.result


@dataclass(frozen=True)
class BuiltTarget(TargetConfig):
    """A TargetConfig whose target is built once for the whole test: every window's run asks this one
    (a fresh build would run a file target's module again and open new connections each window)."""

    target: Any = None

    def build(self) -> Target:
        return self.target


def built(config: TargetConfig) -> BuiltTarget:
    """`config` with its target built now (TargetConfigError when it cannot be used)."""
    return BuiltTarget(**{f.name: getattr(config, f.name) for f in fields(TargetConfig)}, target=config.build())


def _unasked(sample: EvalSample) -> EvalSample:
    """The row as a question for both targets, whatever answer or replay the file already records."""
    if sample.conversation is not None:
        return replace(sample, conversation=replace(sample.conversation, recorded_by=None))
    return replace(sample, target_latency_ms=None, target_error=None)


def _scores(run: Run, spec: str, metric: str) -> List[Tuple[Optional[float], str]]:
    """Each row's (score on `metric`, "") or (None, why not), in the window's order."""
    if run.status == "failed" and run.exception is not None:
        raise run.exception
    if run.status != "finished" or run.report is None:  # the judge is failing: no score can be trusted
        raise JudgeFailed(run.error or f"the run asking {spec} stopped early", kind="stopped")
    out: List[Tuple[Optional[float], str]] = []
    for result in run.report.results:
        ms, error = result.scores.get(metric), result.sample.target_error if result.sample else None
        if error:
            out.append((None, f"target {spec} failed: {error}"))
        elif ms is None or ms.skipped:
            out.append((None, f"{metric} not scored: {ms.reasoning if ms is not None else 'no score'}"))
        else:
            out.append((ms.score, ""))
    return out


def _ask_both(evaluators: Sequence[RAGEvaluator], targets: Sequence[TargetConfig], window: List[EvalSample],
              metric: str, workers: int) -> List[Tuple[Tuple[Optional[float], str], ...]]:
    """Both targets' (score, why not) for each sample of `window`: one run per target, both at once."""
    runs = [Run(evaluator, list(enumerate(window)), dataset_name="ab", max_workers=workers, target=target).start()
            for evaluator, target in zip(evaluators, targets)]
    try:
        for run in runs:
            run.join()
    finally:
        for run in runs:  # interrupted: start no more
            run.stop()
    return list(zip(*(_scores(run, target.spec, metric) for run, target in zip(runs, targets))))


def _windows(order: List[int], step: int, test: SequentialAB) -> Iterator[List[int]]:
    """The random order `step` samples at a time (fewer where max_samples ends), until the test is done."""
    cap, start = test.result.settings.max_samples, 0
    while start < len(order) and not test.done:
        size = step if cap is None else min(step, cap - test.result.samples_used)
        yield order[start:start + size]
        start += size


Step = Callable[[ABResult], None]


def run_ab(samples: Sequence[EvalSample], targets: Tuple[TargetConfig, TargetConfig], evaluator: RAGEvaluator,
           settings: ABSettings = ABSettings(), *, on_step: Optional[Step] = None, workers: int = 1) -> ABResult:
    """Ask both targets each sample's question in a seeded random order, score both answers on
    `settings.metric` and stop as soon as the test decides (module docstring).

    `workers` samples are asked at a time (of A and B together, each target's retries as its config
    says); the test reads them in the random order, so at most workers - 1 samples are asked past the
    one it stops at (their judge calls are counted). A judge failing stops the test (JudgeFailed)."""
    if settings.metric not in evaluator.metric_names:
        raise ValueError(f"metric {settings.metric!r} is not scored by this evaluator ({', '.join(evaluator.metric_names)})")
    step = max(1, workers)
    order = list(range(len(samples)))
    random.Random(settings.seed).shuffle(order)
    test = SequentialAB(settings, len(samples))
    pair = [replace(t if isinstance(t, BuiltTarget) else built(t), workers=step) for t in targets]
    evaluators = [evaluator.with_judge(evaluator.llm) for _ in pair]  # each run watches its own judge health
    calls_before = int(judge_usage(evaluator.llm).get("calls", 0))
    for window in _windows(order, step, test):
        scored = _ask_both(evaluators, pair, [_unasked(samples[i]) for i in window], settings.metric, step)
        for index, ((a, why_a), (b, why_b)) in zip(window, scored):
            if test.done:
                break
            if a is None or b is None:
                test.skip(f"sample {samples[index].sample_id}: {why_a or why_b}")
            else:
                test.add(a, b)
            test.result.judge_calls = int(judge_usage(evaluator.llm).get("calls", 0)) - calls_before
            if on_step is not None:
                on_step(test.result)
    test.result.judge_calls = int(judge_usage(evaluator.llm).get("calls", 0)) - calls_before
    return test.result


def ab_from_runs(store: Any, run_a: str, run_b: str, settings: ABSettings = ABSettings()) -> Dict[str, ABResult]:
    """Metric -> the sequential test over two stored runs of the same dataset: rows paired by sample_id,
    read in run A's stored order (a run's rows are in the dataset's order, not a random one: the
    test then assumes the dataset's order is unrelated to the difference)."""
    rows_a, rows_b = store.indexed_results(run_a), store.indexed_results(run_b)
    by_id = {r.sample_id: r for _, r in rows_b}
    pairs = [(a, by_id[a.sample_id]) for _, a in rows_a if a.sample_id in by_id]
    metrics = list(dict.fromkeys(m for a, _ in pairs for m in a.scores))
    out: Dict[str, ABResult] = {}
    for metric in metrics:
        def score(r: EvalResult) -> Optional[float]:
            ms = r.scores.get(metric)
            return None if ms is None or ms.skipped else ms.score

        out[metric] = ab_from_scores([score(a) for a, _ in pairs], [score(b) for _, b in pairs],
                                     ABSettings(metric, settings.alpha, settings.tie, settings.max_samples))
    return out
