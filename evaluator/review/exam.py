"""The judge exam: is the judge a team configured fit to judge, before they trust a dashboard?

`take_exam(judge, items)` asks the judge every item's metric (review/exam_items.py: 64 built-in
items labelled by construction, or a team's own file of `human_<metric>` labels) and reports, per
metric: format compliance (the share of replies that held a score), balanced accuracy against the
labels with a 95% interval, calls, tokens and seconds per item, and a verdict with advice:

    fit       compliance >= 0.9, balanced accuracy >= 0.8 and its interval's low end >= 0.65
    unusable  compliance < 0.5, or balanced accuracy <= 0.6 (chance is 0.5)
    weak      anything between

A score of 0.5 or more predicts the good side. A reply with no score counts as a wrong answer (a
dashboard would have shown the heuristic instead). The judge's own score is read (`llm_score`), never
the 70/30 blend with the heuristic, so the exam measures the judge and not ragmeter's heuristics.

The exam's baselines (`ConstantJudge`, `RandomJudge`, the offline heuristics) are marked `baseline`
and are never called fit, however they score: a constant answer is right half the time, and the
heuristics read words, not meaning (they do well on a lexical exam and badly on paraphrase).
"""
from __future__ import annotations

import json
import math
import random
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence

from ..errors import JudgeFailed
from ..judges.base import is_offline, judge_usage
from ..judges.health import JudgeHealth, WatchedJudge
from ..metrics.registry import get_metric
from ..metrics.scoring import score_metric
from ..model import METHOD_BLEND, METHOD_FLAGGED, METHOD_LLM, METHOD_OFFLINE, EvalSample
from .exam_items import EXAM_METRICS, ExamItem, builtin_exam

FIT, WEAK, UNUSABLE, BASELINE = "fit", "weak", "unusable", "baseline"
FIT_ACCURACY, FIT_LOW, FIT_COMPLIANCE = 0.8, 0.65, 0.9
UNUSABLE_ACCURACY, UNUSABLE_COMPLIANCE = 0.6, 0.5
Z95 = 1.96
_ANSWERED = (METHOD_BLEND, METHOD_FLAGGED, METHOD_LLM)


class ConstantJudge:
    """A baseline: every reply says the same score (1.0: "everything is fine")."""

    name = "constant judge"

    def __init__(self, score: float = 1.0) -> None:
        self.score = score

    def generate(self, prompt: str) -> str:
        return json.dumps({"score": self.score, "reasoning": "constant"})


class RandomJudge:
    """A baseline: a uniformly random score (seeded, so two exams agree)."""

    name = "random judge"

    def __init__(self, seed: int = 41) -> None:
        self._random = random.Random(seed)

    def generate(self, prompt: str) -> str:
        return json.dumps({"score": round(self._random.random(), 3), "reasoning": "random"})


@dataclass
class MetricResult:
    """One metric's exam figures (module docstring)."""

    metric: str
    items: int
    positives: int
    answered: int
    correct_pos: int
    correct_neg: int
    calls: float
    tokens: float
    seconds: float
    verdict: str = ""
    advice: List[str] = field(default_factory=list)
    failures: Dict[str, int] = field(default_factory=dict)  # why replies held no score: count by reason

    @property
    def compliance(self) -> float:
        return self.answered / self.items if self.items else 0.0

    @property
    def balanced_accuracy(self) -> float:
        return (_share(self.correct_pos, self.positives) + _share(self.correct_neg, self.items - self.positives)) / 2

    @property
    def interval(self) -> tuple:
        """95% interval of the balanced accuracy (Agresti-Caffo: each class's rate with one success and one
        failure added, their variances summed), clamped to 0-1."""
        rates = [(self.correct_pos + 1) / (self.positives + 2),
                 (self.correct_neg + 1) / (self.items - self.positives + 2)]
        var = (rates[0] * (1 - rates[0]) / (self.positives + 2)
               + rates[1] * (1 - rates[1]) / (self.items - self.positives + 2)) / 4
        mid, half = sum(rates) / 2, Z95 * math.sqrt(var)
        return max(0.0, mid - half), min(1.0, mid + half)

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        low, high = self.interval
        data.update(compliance=round(self.compliance, 4), balanced_accuracy=round(self.balanced_accuracy, 4),
                    interval=[round(low, 4), round(high, 4)])
        return data


@dataclass
class ExamResult:
    """A judge's exam: who was examined, on what, and each metric's figures."""

    judge: str
    exam: str
    baseline: bool
    metrics: List[MetricResult]
    seconds: float
    stopped: str = ""  # why the exam stopped early (the judge failing), "" when it ran to the end
    settings: Dict[str, Any] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        """The worst metric's verdict (a baseline's is always "baseline")."""
        if self.baseline:
            return BASELINE
        order = (UNUSABLE, WEAK, FIT)
        found = [m.verdict for m in self.metrics] or [UNUSABLE]
        return next(v for v in order if v in found)

    def to_dict(self) -> Dict[str, Any]:
        return {"judge": self.judge, "exam": self.exam, "baseline": self.baseline, "verdict": self.verdict,
                "seconds": round(self.seconds, 2), "stopped": self.stopped, "settings": dict(self.settings),
                "metrics": [m.to_dict() for m in self.metrics]}


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def verdict_of(result: MetricResult, baseline: bool) -> str:
    if baseline:
        return BASELINE
    low, _ = result.interval
    if result.compliance < UNUSABLE_COMPLIANCE or result.balanced_accuracy <= UNUSABLE_ACCURACY:
        return UNUSABLE
    if (result.compliance >= FIT_COMPLIANCE and result.balanced_accuracy >= FIT_ACCURACY
            and low >= FIT_LOW):
        return FIT
    return WEAK


def advice_for(result: MetricResult, cap: Optional[int]) -> List[str]:
    """What to try for a judge that is not fit on this metric."""
    if result.verdict in (FIT, BASELINE):
        return []
    out = []
    cut = result.failures.get("truncated", 0) + result.failures.get("thinking never ended", 0)
    if cut:
        out.append(f"{cut} replies were cut off by the completion cap: raise it (--judge-max-tokens "
                   f"{max(2 * (cap or 512), 1024)}).")
    if result.compliance < FIT_COMPLIANCE and not cut:
        out.append("replies often held no score: use a server with structured output (llama.cpp, vLLM, Ollama, "
                   "LM Studio) or a model that follows a JSON format.")
    if result.balanced_accuracy < FIT_ACCURACY:
        out.append("its scores disagree with the labels: use a larger model (7-8B or more), or try "
                   "--judge-mode combined (one call per sample) and check again.")
    return out


def take_exam(judge: Any, items: Sequence[ExamItem], *, exam: str = "built-in", baseline: bool = False,
              name: str = "", settings: Optional[Mapping[str, Any]] = None,
              on_item: Optional[Callable[[int, int], None]] = None) -> ExamResult:
    """Ask `judge` every item; the figures per metric (module docstring). A judge that keeps failing
    (nothing listening, a rejected key, timeouts) stops the exam with the reason (`stopped`)."""
    offline = is_offline(judge)
    health = JudgeHealth()
    asked = judge if offline else WatchedJudge(judge, health)
    start = time.perf_counter()
    per_metric: Dict[str, List[ExamItem]] = {}
    for item in items:
        per_metric.setdefault(item.metric, []).append(item)
    results, stopped, done = [], "", [0]

    def tick() -> None:
        done[0] += 1
        if on_item is not None:
            on_item(done[0], len(items))

    for metric, group in per_metric.items():
        result, stopped = _metric_exam(asked, metric, group, offline, health, stopped, tick)
        result.verdict = verdict_of(result, baseline or offline)
        result.advice = advice_for(result, (settings or {}).get("max_tokens"))
        results.append(result)
    shown = name or str(getattr(judge, "name", "") or type(judge).__name__)
    return ExamResult(shown, exam, baseline or offline, results, time.perf_counter() - start, stopped,
                      dict(settings or {}))


def _metric_exam(judge: Any, metric_name: str, group: List[ExamItem], offline: bool, health: JudgeHealth,
                 stopped: str, tick: Callable[[], None]) -> tuple:
    metric = get_metric(metric_name)
    before, start = judge_usage(judge), time.perf_counter()
    answered = pos = neg = 0
    failures: Dict[str, int] = {}
    for item in group:
        tick()
        if stopped:
            failures["exam stopped"] = failures.get("exam stopped", 0) + 1
            continue
        ms = score_metric(metric, item.sample, judge, item.lang)
        value = ms.score if offline and ms.method == METHOD_OFFLINE else ms.llm_score
        if ms.method in _ANSWERED or (offline and ms.method == METHOD_OFFLINE):
            answered += 1
        else:
            reason = _reason(ms.error or ms.reasoning)
            failures[reason] = failures.get(reason, 0) + 1
        if value is not None and (value >= 0.5) == bool(item.label):
            pos += item.label
            neg += 1 - item.label
        if health.tripped:
            stopped = str(health.failure())
    after, n = judge_usage(judge), len(group) or 1
    calls = (after.get("calls", 0) + after.get("failures", 0)) - (before.get("calls", 0) + before.get("failures", 0))
    if not after and not offline:  # a judge that counts nothing (a baseline): one call per item asked
        calls = len(group) - failures.get("exam stopped", 0)
    tokens = sum(after.get(k, 0) - before.get(k, 0) for k in ("prompt_tokens", "completion_tokens"))
    result = MetricResult(metric_name, len(group), sum(i.label for i in group), answered, pos, neg,
                          round(calls / n, 2), round(tokens / n, 1), round((time.perf_counter() - start) / n, 3),
                          failures=failures)
    return result, stopped


_REASONS = ("truncated", "thinking never ended", "empty reply", "no json score", "timed out", "timeout",
            "http ", "could not reach", "too large", "stopping")


def _reason(message: Optional[str]) -> str:
    """A failed reply's reason in a few words, for counting."""
    low = (message or "").lower()
    for word in _REASONS:
        if word in low:
            return {"empty reply": "empty", "no json score": "no score", "timeout": "timed out",
                    "http ": "HTTP error", "could not reach": "unreachable", "stopping": "exam stopped"}.get(word, word)
    return "failed"


# -- a team's own labelled file -------------------------------------------------------------------
def items_from_samples(samples: Sequence[EvalSample], source: str = "the exam file") -> List[ExamItem]:
    """Exam items from a dataset's `human_<metric>` labels (0/1, 0-1 or 1-5): one item per labelled metric
    of a row, labelled 1 when the human score is in the upper half of its scale. ValueError when none."""
    out = []
    for s in samples:
        labels = (s.metadata or {}).get("human_labels") or {}
        for metric, value in labels.items():
            if metric not in EXAM_METRICS and metric not in ("context_recall",):
                continue
            scaled = (float(value) - 1) / 4 if float(value) > 1 else float(value)
            lang = "ar" if any("\u0600" <= ch <= "\u06ff" for ch in s.question) else "en"
            out.append(ExamItem(f"{s.sample_id}:{metric}", metric, int(scaled >= 0.5), s, lang))
    if not out:
        raise ValueError(f"{source}: no human_<metric> labels for the metrics the exam checks "
                         f"({', '.join(EXAM_METRICS)}, context_recall); add columns such as human_faithfulness "
                         "holding 0/1, 0-1 or 1-5")
    if not any(i.label for i in out) or all(i.label for i in out):
        raise ValueError(f"{source}: every label is on the same side; the exam needs good and bad examples of "
                         "each metric to measure agreement")
    return out


def default_items() -> List[ExamItem]:
    return builtin_exam()


def limit_items(items: Sequence[ExamItem], per_metric: int) -> List[ExamItem]:
    """The first `per_metric` items of each metric (all of them for 0), in their order."""
    if not per_metric:
        return list(items)
    kept: Dict[str, int] = {}
    out = []
    for item in items:
        if kept.get(item.metric, 0) < per_metric:
            kept[item.metric] = kept.get(item.metric, 0) + 1
            out.append(item)
    return out


def baselines(items: Sequence[ExamItem]) -> List[ExamResult]:
    """The exam's own baselines on these items: the offline heuristics, a constant and a random judge."""
    from ..judges.offline import OfflineJudge

    return [take_exam(OfflineJudge(), items, name="offline heuristics", baseline=True),
            take_exam(ConstantJudge(), items, name="constant judge (always 1.0)", baseline=True),
            take_exam(RandomJudge(), items, name="random judge (seeded)", baseline=True)]


# -- the report every surface prints ---------------------------------------------------------------
HEADER = ("judge", "metric", "format", "bal.acc", "95% interval", "calls/item", "tokens/item", "s/item", "verdict")


def table_rows(result: ExamResult) -> List[tuple]:
    """One row per metric of `result` (HEADER's columns); a baseline's compliance is '-' when it asks nobody."""
    rows = []
    for m in result.metrics:
        low, high = m.interval
        rows.append((result.judge, m.metric, f"{m.compliance:.2f}", f"{m.balanced_accuracy:.3f}",
                     f"{low:.2f}-{high:.2f}", f"{m.calls:g}", f"{m.tokens:g}", f"{m.seconds:.2f}", m.verdict))
    return rows


def format_table(results: Sequence[ExamResult]) -> str:
    """The exam figures of several judges as one aligned table (the CLI and bench/judge_exam.py print it)."""
    rows = [HEADER] + [row for r in results for row in table_rows(r)]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(HEADER))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def summary_lines(result: ExamResult) -> List[str]:
    """The verdict in words, what failed, and what to try."""
    lines = [f"verdict: {result.verdict} ({result.judge}, {result.exam} exam, {sum(m.items for m in result.metrics)} "
             f"items in {result.seconds:.1f}s)"]
    if result.stopped:
        lines.append(f"the exam stopped early: {result.stopped}")
    for m in result.metrics:
        if m.failures:
            why = ", ".join(f"{n} {reason}" for reason, n in sorted(m.failures.items()))
            lines.append(f"{m.metric}: {m.items - m.answered}/{m.items} replies held no score ({why})")
    advice = list(dict.fromkeys(a for m in result.metrics for a in m.advice))
    lines += [f"advice: {a}" for a in advice]
    return lines


__all__ = ["BASELINE", "FIT", "UNUSABLE", "WEAK", "ConstantJudge", "ExamResult", "JudgeFailed", "MetricResult",
           "RandomJudge", "baselines", "default_items", "format_table", "items_from_samples", "limit_items", "summary_lines",
           "take_exam"]
