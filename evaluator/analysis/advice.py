"""Score bands and what to do about a low metric: the reading guide printed beside every report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Mapping, Optional, Tuple

from ..metrics.registry import METRIC_REGISTRY, Metric

EXCELLENT = "Excellent"
GOOD = "Good"
NEEDS_IMPROVEMENT = "Needs improvement"
PROBLEM = "Problem"

# (lower bound, band), highest first: a score gets the first band whose bound it reaches.
BANDS: Tuple[Tuple[float, str], ...] = ((0.9, EXCELLENT), (0.7, GOOD), (0.5, NEEDS_IMPROVEMENT), (0.0, PROBLEM))

BAND_COLORS: Dict[str, str] = {
    EXCELLENT: "#1b7f3b",
    GOOD: "#6aa84f",
    NEEDS_IMPROVEMENT: "#e69138",
    PROBLEM: "#cc0000",
}

DEFAULT_THRESHOLD = 0.7


def band(score: float) -> str:
    """The band of a score: Excellent (>= 0.9), Good (0.7-0.9), Needs improvement (0.5-0.7), Problem (< 0.5)."""
    for lower, name in BANDS:
        if score >= lower:
            return name
    return PROBLEM


@dataclass(frozen=True)
class Advice:
    """Why a metric is low and what to try, for one metric."""

    metric: str
    score: float
    band: str
    diagnosis: str
    actions: List[str] = field(default_factory=list)


def _advice_of(name: str, metrics: Mapping[str, Metric]) -> Optional[Tuple[str, Tuple[str, ...]]]:
    metric = metrics.get(name) or METRIC_REGISTRY.get(name)
    return metric.advice if metric is not None else None


def recommendations(mean_scores: Mapping[str, Optional[float]], threshold: float = DEFAULT_THRESHOLD,
                    metrics: Iterable[Metric] = ()) -> List[Advice]:
    """Advice for each metric whose mean is below `threshold`, worst first.

    A metric's advice is its definition's (`Metric.advice`): registered metrics are found by name,
    others (a run's rubric metrics) when passed in `metrics`. Metrics without a mean (None:
    nothing scored) and metrics without advice are left out.
    """
    known = {m.name: m for m in metrics}
    low = [(name, score, advice) for name, score in mean_scores.items()
           if score is not None and score < threshold and (advice := _advice_of(name, known)) is not None]
    low.sort(key=lambda item: item[1])
    return [Advice(name, score, band(score), advice[0], list(advice[1])) for name, score, advice in low]
