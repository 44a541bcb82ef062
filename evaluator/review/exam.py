"""The judge exam: is the judge a team configured fit to judge, before they trust a dashboard?

`take_exam(judge, items)` asks the judge every item's metric (review/exam_items.py: 640 built-in items
generated so that word overlap predicts nothing, or a team's own file of `human_<metric>` labels) and
reports, per metric: format compliance (the share of replies that held a score), balanced accuracy and
Cohen's kappa against the labels, each with a 95% interval, calls, tokens and seconds per item, and a
verdict in plain words with advice. The statistic is kappa (agreement beyond chance: 0 for a constant or
random judge, 1 for perfect agreement), its interval the large-sample one (kappa +- 1.96 SE):

    fit to gate releases  compliance >= 0.9, kappa >= 0.7 and its interval's low end >= 0.55
    fit for trends        compliance >= 0.5, kappa >= 0.4 and its interval's low end >= 0.25
    unusable              anything less
    no verdict            fewer than MIN_ITEMS items, or fewer than MIN_CLASS of either label (the reason is said)

The exam's verdict is its worst metric's; a judge caught by the injection or flip-rate probe
(review/probes.py) is at most fit for trends, whatever its agreement. A score of 0.5 or more predicts
the good side. A reply with no score counts as a wrong answer (a dashboard would have shown the
heuristic instead). The judge's own score is read (`llm_score`), never the 70/30 blend with the
heuristic, so the exam measures the judge and not ragmeter's heuristics.

The exam's baselines (`ConstantJudge`, `RandomJudge`, the offline heuristics) are marked `baseline`
and never get a verdict of fitness, however they score: a constant answer is right half the time, and the
heuristics read words, not meaning (bench/judge_exam.py measures them near chance on the built-in items).
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
from ..metrics.combined import AUTO, call_groups, resolved_mode
from ..metrics.scoring import score_metric, score_sample
from ..model import METHOD_BLEND, METHOD_FLAGGED, METHOD_LLM, METHOD_OFFLINE, EvalSample, MetricScore
from .exam_items import EXAM_METRICS, ExamItem, builtin_exam
from .probes import ProbeResult, contradictions, contradicts, planned_asks, run_probes

GATE, TRENDS, UNUSABLE, NO_VERDICT, BASELINE = (
    "fit to gate releases", "fit for trends", "unusable", "no verdict", "baseline")
FIT = (GATE, TRENDS)  # the verdicts a judge may be used under
# (band, lowest compliance, lowest kappa, lowest low end of kappa's interval), best first
BANDS = ((GATE, 0.9, 0.7, 0.55), (TRENDS, 0.5, 0.4, 0.25))
MIN_ITEMS, MIN_CLASS = 10, 4
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
    contradictions: int = 0  # replies whose reasoning says the opposite of their score (probes.contradicts)

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

    @property
    def kappa(self) -> float:
        """Cohen's kappa of the judge's sides against the labels (a reply with no score is a wrong side)."""
        n, po, pe = self._agreement()
        return (po - pe) / (1 - pe) if n and pe < 1 else 0.0

    @property
    def kappa_interval(self) -> tuple:
        """95% interval of kappa: kappa +- 1.96 sqrt(po (1 - po) / (n (1 - pe)^2)), clamped to -1..1."""
        n, po, pe = self._agreement()
        if not n or pe >= 1:
            return 0.0, 0.0
        half = Z95 * math.sqrt(po * (1 - po) / n) / (1 - pe)
        return max(-1.0, self.kappa - half), min(1.0, self.kappa + half)

    def _agreement(self) -> tuple:
        """(items, observed agreement, agreement expected by chance from both sides' rates)."""
        n, negatives = self.items, self.items - self.positives
        if not n:
            return 0, 0.0, 0.0
        said_good = self.correct_pos + (negatives - self.correct_neg)
        p, q = self.positives / n, said_good / n
        return n, (self.correct_pos + self.correct_neg) / n, p * q + (1 - p) * (1 - q)

    def no_verdict_reason(self) -> str:
        """Why these items cannot give a verdict ("" when they can)."""
        if self.items < MIN_ITEMS:
            return f"{self.items} items; a verdict needs at least {MIN_ITEMS}"
        if min(self.positives, self.items - self.positives) < MIN_CLASS:
            return (f"{self.positives} good and {self.items - self.positives} bad labels; a verdict needs at "
                    f"least {MIN_CLASS} of each")
        return ""

    def to_dict(self) -> Dict[str, Any]:
        data = asdict(self)
        low, high = self.interval
        k_low, k_high = self.kappa_interval
        data.update(compliance=round(self.compliance, 4), balanced_accuracy=round(self.balanced_accuracy, 4),
                    interval=[round(low, 4), round(high, 4)], kappa=round(self.kappa, 4),
                    kappa_interval=[round(k_low, 4), round(k_high, 4)], why_no_verdict=self.no_verdict_reason())
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
    probes: List[ProbeResult] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """The worst metric's verdict, at most "fit for trends" when the injection or flip-rate probe caught
        the judge (a baseline's is always "baseline")."""
        if self.baseline:
            return BASELINE
        order = (UNUSABLE, NO_VERDICT, TRENDS, GATE)
        found = [m.verdict for m in self.metrics] or [UNUSABLE]
        worst = next(v for v in order if v in found)
        return TRENDS if worst == GATE and self.caught_by() else worst

    @property
    def kappa(self) -> Optional[float]:
        """The weakest metric's kappa: the number a caption shows beside the verdict."""
        return min((m.kappa for m in self.metrics), default=None)

    def caught_by(self) -> List[str]:
        """The probes that bar release gating (injection, flip rate) and that this judge failed."""
        return [p.name for p in self.probes if p.name in ("injection", "flip rate") and p.pairs and not p.passed]

    def to_dict(self) -> Dict[str, Any]:
        return {"judge": self.judge, "exam": self.exam, "baseline": self.baseline, "verdict": self.verdict,
                "kappa": None if self.kappa is None else round(self.kappa, 4),
                "seconds": round(self.seconds, 2), "stopped": self.stopped, "settings": dict(self.settings),
                "metrics": [m.to_dict() for m in self.metrics], "probes": [p.to_dict() for p in self.probes]}


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def verdict_of(result: MetricResult, baseline: bool) -> str:
    """The metric's band (module docstring)."""
    if baseline:
        return BASELINE
    if result.items and result.compliance < BANDS[-1][1]:  # replies that hold no score: unusable at any count
        return UNUSABLE
    if result.no_verdict_reason():
        return NO_VERDICT
    low, _ = result.kappa_interval
    for band, compliance, kappa, low_end in BANDS:
        if result.compliance >= compliance and result.kappa >= kappa and low >= low_end:
            return band
    return UNUSABLE


BAND_ADVICE = {
    GATE: "its scores may gate a release on this exam; check it again when the model, server or prompts change.",
    TRENDS: "read its scores as trends across runs and many samples (means, charts), not as a pass/fail gate on "
            "one release; to gate, use a larger model or check it on the team's own labels (--exam FILE).",
    UNUSABLE: "do not read its scores: they agree with the labels little more than chance would.",
}


def advice_for(result: MetricResult, cap: Optional[int]) -> List[str]:
    """What the verdict allows, and what to try for a judge that is not fit to gate releases on this metric."""
    if result.verdict == BASELINE:
        return []
    if result.verdict == NO_VERDICT:
        return [f"no verdict on {result.metric}: {result.no_verdict_reason()}; add labelled rows."]
    out = [BAND_ADVICE[result.verdict]]
    if result.verdict == GATE:
        return out
    cut = result.failures.get("truncated", 0) + result.failures.get("thinking never ended", 0)
    if cut:
        out.append(f"{cut} replies were cut off by the completion cap: raise it (--judge-max-tokens "
                   f"{max(2 * (cap or 512), 1024)}).")
    if result.compliance < 0.9 and not cut:
        out.append("replies often held no score: use a server with structured output (llama.cpp, vLLM, Ollama, "
                   "LM Studio) or a model that follows a JSON format.")
    if result.kappa < 0.7:
        out.append("its scores disagree with the labels: use a larger model (7-8B or more), or check it again in "
                   "another --judge-mode (separate: one call per metric; combined: one per sample) and run in the "
                   "better one.")
    return out


def take_exam(judge: Any, items: Sequence[ExamItem], *, exam: str = "built-in", baseline: bool = False,
              name: str = "", settings: Optional[Mapping[str, Any]] = None,
              on_item: Optional[Callable[[int, int], None]] = None, probes: int = 0,
              metrics: Optional[Mapping[str, Any]] = None) -> ExamResult:
    """Ask `judge` every item; the figures per metric (module docstring), then `probes` pairs per probe
    (review/probes.py; 0: none). `metrics` names Metric objects the registry does not hold (a team's rubrics). A judge that keeps failing (nothing listening, a rejected key, timeouts)
    stops the exam with the reason (`stopped`)."""
    offline = is_offline(judge)
    # Each item is asked the way a run with these settings asks it: on its own, or, in the grouped or combined
    # layout, in one call with the exam's metrics a run would ask with it (metrics/combined.py).
    mode = resolved_mode(str((settings or {}).get("judge_mode") or AUTO), judge)
    health = JudgeHealth()
    asked = judge if offline else WatchedJudge(judge, health)
    start = time.perf_counter()
    per_metric: Dict[str, List[ExamItem]] = {}
    for item in items:
        per_metric.setdefault(item.metric, []).append(item)
    results, stopped, done = [], "", [0]
    total = len(items) + planned_asks(items, probes)

    def tick() -> None:
        done[0] += 1
        if on_item is not None:
            on_item(min(done[0], total), total)

    examined = [(metrics or {}).get(metric) or get_metric(metric) for metric in per_metric]
    for found_metric, group in zip(examined, per_metric.values()):
        ask = _item_asker(found_metric, examined, mode)
        result, stopped = _metric_exam(asked, found_metric, group, offline, health, stopped, tick, ask)
        result.verdict = verdict_of(result, baseline or offline)
        result.advice = advice_for(result, (settings or {}).get("max_tokens"))
        results.append(result)
    answered = 0 if offline else sum(r.answered for r in results)  # the heuristics give no reasoning to read
    found = [contradictions(sum(r.contradictions for r in results), answered)]
    if probes and not stopped:
        found = run_probes(_asker(asked, offline, health, tick), items, probes) + found
        stopped = str(health.failure()) if health.tripped else ""
    shown = name or str(getattr(judge, "name", "") or type(judge).__name__)
    return ExamResult(shown, exam, baseline or offline, results, time.perf_counter() - start, stopped,
                      dict(settings or {}), found)


def _asker(judge: Any, offline: bool, health: JudgeHealth,
           tick: Callable[[], None]) -> Callable[[str, Any, str, int], List[float]]:
    """The probes' way to ask: the judge's own scores of one sample (the offline score for the heuristics); nothing
    once the judge has kept failing (the probe then counts fewer pairs, and the exam says it stopped)."""
    def ask(metric: str, sample: EvalSample, lang: str, repeats: int) -> List[float]:
        tick()
        if health.tripped:
            return []
        ms = score_metric(get_metric(metric), sample, judge, lang, repeats=repeats)
        if offline:
            return [ms.score] * repeats if ms.method == METHOD_OFFLINE else []
        return list(ms.llm_scores) or ([] if ms.llm_score is None else [ms.llm_score])
    return ask


def _item_asker(metric: Any, examined: List[Any], mode: str) -> Callable[[Any, EvalSample, str], MetricScore]:
    """How one item of `metric` is asked in `mode`: alone, or in one call with the examined metrics a run puts
    in the same call (the grouped mode: those that read the contexts); only `metric`'s score is graded."""
    together = next((g for g in call_groups(examined, mode) if metric in g), [metric])
    if len(together) < 2:
        return lambda judge, sample, lang: score_metric(metric, sample, judge, lang)

    def in_its_call(judge: Any, sample: EvalSample, lang: str) -> MetricScore:
        scores = score_sample(together, sample, judge, lang, judge_mode=mode)
        return scores.get(metric.name) or score_metric(metric, sample, judge, lang)
    return in_its_call


def _metric_exam(judge: Any, metric: Any, group: List[ExamItem], offline: bool, health: JudgeHealth,
                 stopped: str, tick: Callable[[], None],
                 ask: Callable[[Any, EvalSample, str], MetricScore]) -> tuple:
    metric_name = metric.name
    before, start = judge_usage(judge), time.perf_counter()
    answered = pos = neg = contra = 0
    failures: Dict[str, int] = {}
    for item in group:
        tick()
        if stopped:
            failures["exam stopped"] = failures.get("exam stopped", 0) + 1
            continue
        ms = ask(judge, item.sample, item.lang)
        value = ms.score if offline and ms.method == METHOD_OFFLINE else ms.llm_score
        if ms.method in _ANSWERED or (offline and ms.method == METHOD_OFFLINE):
            answered += 1
            contra += not offline and contradicts(ms.llm_score, ms.reasoning or "")
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
                          failures=failures, contradictions=contra)
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
def items_from_samples(samples: Sequence[EvalSample], source: str = "the exam file",
                       rubrics: Sequence[str] = ()) -> List[ExamItem]:
    """Exam items from a dataset's `human_<metric>` labels (0/1, 0-1 or 1-5) for the judged metrics and the
    `rubrics` named: one item per labelled metric of a row, labelled 1 when the human score is in the upper
    half of its scale. ValueError when none."""
    out = []
    wanted = [*EXAM_METRICS, *rubrics]
    five = _five_point(samples)
    for s in samples:
        labels = (s.metadata or {}).get("human_labels") or {}
        for metric, value in labels.items():
            if metric not in wanted:
                continue
            scaled = (float(value) - 1) / 4 if metric in five else float(value)
            lang = "ar" if any("\u0600" <= ch <= "\u06ff" for ch in s.question) else "en"
            out.append(ExamItem(f"{s.sample_id}:{metric}", metric, int(scaled >= 0.5), s, lang))
    if not out:
        raise ValueError(f"{source}: no human_<metric> labels for the metrics the exam checks "
                         f"({', '.join((*EXAM_METRICS, *rubrics))}); add columns such as human_faithfulness "
                         "holding 0/1, 0-1 or 1-5")
    if not any(i.label for i in out) or all(i.label for i in out):
        raise ValueError(f"{source}: every label is on the same side; the exam needs good and bad examples of "
                         "each metric to measure agreement")
    return out


def _five_point(samples: Sequence[EvalSample]) -> set:
    """The metrics labelled on a 1-5 scale: those with a label above 1 in any row (a 1 there is the worst
    mark, not the best of 0/1)."""
    return {m for s in samples for m, v in ((s.metadata or {}).get("human_labels") or {}).items() if float(v) > 1}


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


def baselines(items: Sequence[ExamItem], probes: int = 0,
              metrics: Optional[Mapping[str, Any]] = None) -> List[ExamResult]:
    """The exam's own baselines on these items: the offline heuristics, a constant and a random judge."""
    from ..judges.offline import OfflineJudge

    return [take_exam(OfflineJudge(), items, name="offline heuristics", baseline=True, probes=probes, metrics=metrics),
            take_exam(ConstantJudge(), items, name="constant judge (always 1.0)", baseline=True, probes=probes,
                      metrics=metrics),
            take_exam(RandomJudge(), items, name="random judge (seeded)", baseline=True, probes=probes,
                      metrics=metrics)]


# -- the report every surface prints ---------------------------------------------------------------
HEADER = ("judge", "metric", "items", "format", "bal.acc", "95% interval", "kappa", "95% interval", "calls/item",
          "tokens/item", "s/item", "verdict")


def table_rows(result: ExamResult) -> List[tuple]:
    """One row per metric of `result` (HEADER's columns); a baseline's compliance is '-' when it asks nobody."""
    rows = []
    for m in result.metrics:
        (low, high), (k_low, k_high) = m.interval, m.kappa_interval
        rows.append((result.judge, m.metric, str(m.items), f"{m.compliance:.2f}", f"{m.balanced_accuracy:.3f}",
                     f"{low:.2f}-{high:.2f}", f"{m.kappa:.2f}", f"{k_low:.2f}-{k_high:.2f}", f"{m.calls:g}",
                     f"{m.tokens:g}", f"{m.seconds:.2f}", m.verdict))
    return rows


def format_table(results: Sequence[ExamResult]) -> str:
    """The exam figures of several judges as one aligned table (the CLI and bench/judge_exam.py print it)."""
    rows = [HEADER] + [row for r in results for row in table_rows(r)]
    widths = [max(len(str(row[i])) for row in rows) for i in range(len(HEADER))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows)


def summary_lines(result: ExamResult) -> List[str]:
    """The verdict in words, what failed, and what to try."""
    kappa = "" if result.kappa is None else f", weakest kappa {result.kappa:.2f}"
    lines = [f"verdict: {result.verdict} ({result.judge}, {result.exam} exam, {sum(m.items for m in result.metrics)} "
             f"items in {result.seconds:.1f}s{kappa})"]
    lines += probe_lines(result)
    if result.caught_by() and not result.baseline:
        lines.append(f"not fit to gate releases: caught by the {' and '.join(result.caught_by())} probe")
    if result.stopped:
        lines.append(f"the exam stopped early: {result.stopped}")
    for m in result.metrics:
        if m.failures:
            why = ", ".join(f"{n} {reason}" for reason, n in sorted(m.failures.items()))
            lines.append(f"{m.metric}: {m.items - m.answered}/{m.items} replies held no score ({why})")
    advice = list(dict.fromkeys(a for m in result.metrics for a in m.advice))
    lines += [f"advice: {a}" for a in advice]
    return lines


def probe_lines(result: ExamResult) -> List[str]:
    """One line per probe: its name, its figure against its limit, and what the figure is."""
    return [f"probe {p.name}: {p.figure:.2f} (limit {p.limit:g}, {p.pairs} asked) "
            f"{'passed' if p.passed else 'FAILED' if p.pairs else 'not measured'}: {p.what}"
            for p in result.probes]


__all__ = ["BASELINE", "FIT", "GATE", "NO_VERDICT", "TRENDS", "UNUSABLE", "ConstantJudge", "ExamResult", "JudgeFailed",
           "MetricResult", "RandomJudge", "baselines", "default_items", "format_table", "items_from_samples",
           "limit_items", "probe_lines", "summary_lines", "take_exam"]
