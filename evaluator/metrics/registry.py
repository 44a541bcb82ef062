"""The metric registry: a plain dict of name -> Metric, and `register()` to add one.

    from evaluator.metrics.registry import Metric, register
    register(Metric("politeness", prompts={"en": "..."}, shows=("question", "answer")))
    RAGEvaluator(judge, metrics=["faithfulness", "politeness"])

The built-in metrics are registered at import. `RAGEvaluator(metrics=...)` also accepts Metric
objects that were never registered (a RubricMetric made for one run, say).

Plugins: an installed package registers metrics through the entry-point group
`ragmeter.metrics` (as simonw/llm's plugins register models). In its pyproject.toml:

    [project.entry-points."ragmeter.metrics"]
    politeness = "ragmeter_politeness:METRICS"

The object named may be a Metric, a list of Metrics, or a function returning either. Plugins
load on the first lookup; one that fails to load is reported (`plugin_errors()`, and in the
unknown-metric error) and never stops ragmeter.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Dict, Iterable, List, Optional, Sequence, Union

from ..errors import MetricError
from .builtin import BUILTINS
from .metric import JUDGED, RULE, Metric
from .parsing import ParsedReply
from .prompts import prefix_fields, render_prompt
from .retrieval import NAMES_HELP, retrieval_metric

__all__ = ["DEFAULT_METRICS", "JUDGED", "METRIC_REGISTRY", "PLUGIN_GROUP", "RULE", "Metric", "get_metric",
           "known_metrics", "load_plugins", "plugin_errors", "register", "resolve_metrics"]

log = logging.getLogger("ragmeter")

METRIC_REGISTRY: Dict[str, Metric] = {m.name: m for m in BUILTINS}
PLUGIN_GROUP = "ragmeter.metrics"
_BUILTIN_NAMES = frozenset(METRIC_REGISTRY)


@dataclass
class _Plugins:
    loaded: bool = False  # plugins load once per process (load_plugins(reload=True) loads them again)
    errors: List[str] = field(default_factory=list)


_plugins = _Plugins()

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


def _metrics_of(provided: Any) -> List[Metric]:
    """The Metrics a plugin's entry point names: a Metric, a list of them, or a function returning either."""
    if callable(provided) and not isinstance(provided, Metric):
        provided = provided()
    items = [provided] if isinstance(provided, Metric) else list(provided)
    bad = [type(m).__name__ for m in items if not isinstance(m, Metric)]
    if bad:
        raise TypeError(f"expected Metric objects, got {', '.join(bad)}")
    return items


def load_plugins(*, reload: bool = False) -> List[str]:
    """Register every metric offered under the `ragmeter.metrics` entry-point group; returns the
    problems met (a plugin that fails to import, or that reuses a built-in metric's name)."""
    if _plugins.loaded and not reload:
        return list(_plugins.errors)
    _plugins.loaded, _plugins.errors = True, []
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            for metric in _metrics_of(ep.load()):
                if metric.name in _BUILTIN_NAMES:
                    raise ValueError(f"metric {metric.name!r} is a built-in metric's name")
                register(metric, replace=True)  # a re-installed plugin replaces its older self
        except Exception as exc:  # a broken plugin must not break ragmeter
            problem = f"metric plugin {ep.name!r} ({ep.value}) was not loaded: {type(exc).__name__}: {exc}"
            _plugins.errors.append(problem)
            log.warning(problem)
    return list(_plugins.errors)


def plugin_errors() -> List[str]:
    """Why metric plugins failed to load (empty when all loaded)."""
    return load_plugins()


def known_metrics() -> List[str]:
    """Every name that can be chosen, in registry order (built-ins, then plugins and registered ones)."""
    load_plugins()
    return list(METRIC_REGISTRY)


def get_metric(name: str) -> Metric:
    """The registered metric called `name`; an unknown name raises ValueError listing the known ones."""
    found = METRIC_REGISTRY.get(name)
    if found is not None:
        return found
    try:
        by_id = retrieval_metric(name)  # `ndcg@5`, `mrr`: made from the name, k included
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    if by_id is not None:
        return METRIC_REGISTRY.get(by_id.name) or by_id
    problems = load_plugins()
    if name in METRIC_REGISTRY:
        return METRIC_REGISTRY[name]
    hint = f" ({'; '.join(problems)})" if problems else ""
    raise MetricError(f"unknown metric {name!r}; known metrics: {', '.join(known_metrics())}, and the "
                      f"{NAMES_HELP}{hint}")


def resolve_metrics(choice: Optional[Iterable[MetricChoice]] = None) -> List[Metric]:
    """Metric objects for `choice` (names and/or Metric objects, in order; None = DEFAULT_METRICS).

    Raises MetricError (a ValueError) for an unknown name (listing the known ones), a name given twice, or an
    empty choice.
    """
    if isinstance(choice, str):
        raise TypeError("metrics= takes a list of names, e.g. metrics=['faithfulness'], not one string")
    items: Sequence[MetricChoice] = DEFAULT_METRICS if choice is None else list(choice)
    metrics = [item if isinstance(item, Metric) else get_metric(str(item).strip()) for item in items]
    if not metrics:
        raise MetricError(f"no metrics chosen; choose at least one of: {', '.join(known_metrics())}")
    names = [m.name for m in metrics]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise MetricError(f"metric(s) chosen twice: {', '.join(twice)}")
    return metrics


def parse_reply(reply: str, metric: Union[str, Metric]) -> ParsedReply:
    """Parse a judge reply for `metric` (a registered name or a Metric); `score` None when unusable."""
    return (get_metric(metric) if isinstance(metric, str) else metric).parse(reply)


def build_prompt(metric: str, lang: str, question: str, answer: str,
                 contexts: List[str], reference: Optional[str] = None, *,
                 chosen: Sequence[MetricChoice] = ()) -> str:
    """The full judge prompt for one registered metric of one sample (see Metric.prompt), as a run
    of the `chosen` metrics sends it: their shared prefix shows every field they need (default:
    this metric alone)."""
    m = get_metric(metric)
    others = resolve_metrics(chosen) if chosen else [m]
    fields = prefix_fields(*(o.shows for o in others if o.shares_prefix)) if m.shares_prefix else None
    return render_prompt(m.prompts, m.shows, lang, question, answer, contexts, reference, fields=fields)
