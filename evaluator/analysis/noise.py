"""Judge noise: how much the judge disagrees with itself when asked the same question again.

With `repeats=k` every judged metric is asked k times per sample (MetricScore.llm_scores).
Per metric, two figures:
- mean within-sample std: the mean over samples of the std of their k judge scores (0-1 scale);
- band flips: the share of samples whose band (Excellent / Good / Needs improvement / Problem)
  differs between repeats, each repeat's score taken as the metric would have reported it
  (blended 70/30 with the heuristic when the metric has one).
A noisy judge shows in both; the second says whether the noise changes what a reader concludes.
"""
from __future__ import annotations

import statistics
from dataclasses import asdict, dataclass
from typing import Dict, List

from ..metrics.scoring import blend
from ..model import METHOD_BLEND, EvalReport, MetricScore
from .advice import band


@dataclass(frozen=True)
class JudgeNoise:
    metric: str
    repeats: int  # the most repeats any sample had for this metric
    samples: int  # samples with two or more judge scores
    mean_std: float
    band_flip_share: float

    def to_dict(self) -> dict:
        return asdict(self)


def repeat_scores(ms: MetricScore) -> List[float]:
    """Each repeat's score as the metric would have reported it alone."""
    if ms.method == METHOD_BLEND and ms.heuristic_score is not None:
        return [blend(s, ms.heuristic_score) for s in ms.llm_scores]
    return list(ms.llm_scores)


def judge_noise(report: EvalReport) -> List[JudgeNoise]:
    """Judge-noise figures per metric that has repeated judgements, in report order (empty without repeats)."""
    per_metric: Dict[str, List[MetricScore]] = {}
    for result in report.results:
        for name, ms in result.scores.items():
            if len(ms.llm_scores) >= 2:
                per_metric.setdefault(name, []).append(ms)
    out = []
    for name in report.metric_names():
        scores = per_metric.get(name)
        if not scores:
            continue
        stds = [statistics.stdev(ms.llm_scores) for ms in scores]
        flips = sum(len({band(s) for s in repeat_scores(ms)}) > 1 for ms in scores)
        out.append(JudgeNoise(name, max(len(ms.llm_scores) for ms in scores), len(scores),
                              round(statistics.fmean(stds), 4), round(flips / len(scores), 4)))
    return out


def format_judge_noise(noise: List[JudgeNoise]) -> str:
    """A small text table for the CLI report ("" when there are no repeats)."""
    if not noise:
        return ""
    lines = [" Judge noise (same prompt asked again)", f" {'metric':<20} {'within-sample std':<18} band flips"]
    for n in noise:
        lines.append(f" {n.metric:<20} {n.mean_std:<18.3f} {n.band_flip_share:.0%} of {n.samples} "
                     f"({n.repeats} repeats)")
    return "\n".join(lines)
