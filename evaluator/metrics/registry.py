"""The metric registry: a plain dict of name -> Metric, and `register()` to add one.

    from evaluator.metrics.registry import Metric, register
    register(Metric("politeness", prompts={"en": "..."}, shows=("question", "answer")))
    RAGEvaluator(judge, metrics=["faithfulness", "politeness"])

The built-in metrics are registered at import. `RAGEvaluator(metrics=...)` also accepts Metric
objects that were never registered (a RubricMetric made for one run, say).
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Union

from .builtin import BUILTINS
from .metric import JUDGED, RULE, Metric

__all__ = ["DEFAULT_METRICS", "JUDGED", "METRIC_REGISTRY", "RULE", "Metric", "get_metric", "known_metrics",
           "register", "resolve_metrics"]

METRIC_REGISTRY: Dict[str, Metric] = {m.name: m for m in BUILTINS}

# What a run scores when no metrics are chosen: the five judged metrics, plus the rule-based
# ones for samples that carry keywords / expected documents (they cost no judge call).
DEFAULT_METRICS = tuple(m.name for m in BUILTINS)

MetricChoice = Union[str, Metric]


def register(metric: Metric, *, replace: bool = False) -> Metric:
    """Add `metric` to the registry so its name can be chosen, and return it.

    A name already taken by another metric is an error unless `replace=True`."""
    if not isinstance(metric, Metric):
        raise TypeError(f"register() takes a Metric, not {type(metric).__name__}")
    current = METRIC_REGISTRY.get(metric.name)
    if current is not None and current is not metric and not replace:
        raise ValueError(f"a metric named {metric.name!r} is already registered; pass replace=True to replace it")
    METRIC_REGISTRY[metric.name] = metric
    return metric


def known_metrics() -> List[str]:
    """Every name that can be chosen, in registry order."""
    return list(METRIC_REGISTRY)


def get_metric(name: str) -> Metric:
    """The registered metric called `name`; an unknown name raises ValueError listing the known ones."""
    try:
        return METRIC_REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; known metrics: {', '.join(known_metrics())}") from None


def resolve_metrics(choice: Optional[Iterable[MetricChoice]] = None) -> List[Metric]:
    """Metric objects for `choice` (names and/or Metric objects, in order; None = DEFAULT_METRICS).

    Raises ValueError for an unknown name (listing the known ones), a name given twice, or an
    empty choice.
    """
    if isinstance(choice, str):
        raise TypeError("metrics= takes a list of names, e.g. metrics=['faithfulness'], not one string")
    items: Sequence[MetricChoice] = DEFAULT_METRICS if choice is None else list(choice)
    metrics = [item if isinstance(item, Metric) else get_metric(str(item).strip()) for item in items]
    if not metrics:
        raise ValueError(f"no metrics chosen; choose at least one of: {', '.join(known_metrics())}")
    names = [m.name for m in metrics]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"metric(s) chosen twice: {', '.join(twice)}")
    return metrics
