"""What to do about a low metric: the reading guide printed beside every report."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, List, Mapping, Optional, Tuple

from ..metrics.registry import METRIC_REGISTRY, Metric

from .bands import band

DEFAULT_THRESHOLD = 0.7


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
