"""The metric registry: a plain dict of name -> Metric, and `register()` to add one.

    from evaluator.metrics.registry import Metric, register
    register(Metric("politeness", prompts={"en": "..."}, shows=("question", "answer")))
    RAGEvaluator(judge, metrics=["faithfulness", "politeness"])

A registration carries what the lists need: `default=True` makes a metric part of DEFAULT_METRICS (a new
one is opt-in until it says so), `languages=` and `heuristic_sets=` promise a prompt per language and a
scorer per heuristic set (Metric refuses a promise it does not keep). `contract_problems(metric)` adds what a
default metric owes every run (tests/test_extending.py asks it of every registered one). Adding a metric,
step by step: docs/extending.md.

The built-in metrics are registered at import, through the plugin door (builtin.py offers them as
an entry point offers a plugin's). `RAGEvaluator(metrics=...)` also accepts Metric objects that were
never registered (a RubricMetric made for one run, say).

Plugins: an installed package registers metrics through the entry-point group
`ragmeter.metrics` (as simonw/llm's plugins register models). In its pyproject.toml:

    [project.entry-points."ragmeter.metrics"]
    politeness = "ragmeter_politeness:METRICS"

The object named may be a Metric, a list of Metrics, or a function returning either; evaluator/plugins.py
loads them on the first lookup, and one that fails to load is reported (`plugin_errors()`, and in
the unknown-metric error) and never stops ragmeter.
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Optional, Sequence, Tuple, Union

from ..errors import MetricError
from ..plugins import PluginGroup
from . import builtin
from .languages import SCORED
from .metric import JUDGED, RULE, Metric
from .parsing import ParsedReply
from .prompts import prefix_fields, render_prompt
from .retrieval import NAMES_HELP, retrieval_metric

__all__ = ["DEFAULT_METRICS", "JUDGED", "contract_problems", "METRIC_REGISTRY", "PLUGIN_GROUP", "RULE", "Metric", "get_metric",
           "known_metrics", "load_plugins", "plugin_errors", "register", "resolve_metrics"]

METRIC_REGISTRY: Dict[str, Metric] = {}
PLUGIN_GROUP = "ragmeter.metrics"
METRIC_PLUGINS: PluginGroup[Metric] = PluginGroup(PLUGIN_GROUP, "metric", Metric, METRIC_REGISTRY, lambda m: m.name)
# The built-ins come in by the door a plugin's do (builtin.metrics is what an entry point would name).
BUILTINS = tuple(METRIC_PLUGINS.register_builtin(builtin.metrics))




def default_metrics() -> Tuple[str, ...]:
    """The registered metrics marked default=True, in registration order."""
    return tuple(name for name, m in METRIC_REGISTRY.items() if m.default)


# What a run scores when no metrics are chosen: the built-ins marked default=True (the five judged
# metrics, then the rule-based and agent ones, which cost no judge call or show only on rows that carry
# what they need). Read once, after the built-ins: a plugin is scored when a run names it, so installing
# a package never changes what an unnamed run costs.
DEFAULT_METRICS = default_metrics()

MetricChoice = Union[str, Metric]


# register(metric, replace=False) -> metric: a name already taken is an error unless replace=True.
register = METRIC_PLUGINS.register
load_plugins = METRIC_PLUGINS.load  # (reload=False) -> the problems met; plugins load once per process
plugin_errors = METRIC_PLUGINS.load  # () -> why metric plugins failed to load (empty when all loaded)
known_metrics = METRIC_PLUGINS.names  # every name that can be chosen: built-ins, then plugins and registered ones


def contract_problems(metric: Metric) -> List[str]:
    """What `metric` lacks to be registered as it is: a default judged metric scores every run, so it needs a
    prompt in each language scoring knows (languages.SCORED) and a heuristic for runs without a judge.
    Empty when nothing is missing (an opt-in metric owes only what Metric itself checks)."""
    if not (metric.default and metric.judged):
        return []
    problems = [f"default metric {metric.name} has no {lang!r} prompt: add prompts[{lang!r}] and "
                f"languages=({', '.join(repr(c) for c in SCORED)}), or leave it opt-in (default=False)"
                for lang in SCORED if lang not in metric.languages]
    if metric.heuristic is None:
        problems.append(f"default metric {metric.name} has no heuristic, so an offline run cannot score it: add "
                        f"heuristics={{'ragmeter': ...}} (one per heuristic set it claims), or leave it opt-in")
    return problems


def get_metric(name: str) -> Metric:
    """The registered metric called `name`; an unknown name raises ValueError listing the known ones."""
    found = METRIC_PLUGINS.find(name)
    if found is not None:
        return found
    try:
        by_id = retrieval_metric(name)  # `ndcg@5`, `mrr`: made from the name, k included
    except ValueError as exc:
        raise MetricError(str(exc)) from None
    if by_id is not None:
        return by_id
    raise MetricError(f"unknown metric {name!r}; known metrics: {', '.join(known_metrics())}, and the "
                      f"{NAMES_HELP}{METRIC_PLUGINS.hint()}")


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


def rule_metrics(names: Iterable[str]) -> frozenset:
    """Which of these metrics are rule-based (keyword coverage, retrieval by id): no judge is asked."""
    def is_rule(name: str) -> bool:
        try:
            return not get_metric(name).judged
        except ValueError:  # a rubric made for one run, or a plugin not installed here: judged
            return False
    return frozenset(n for n in names if is_rule(n))


def metric_title(name: str) -> str:
    """A metric's name in plain words for a reader (a card, a PDF): "context_precision" -> "Context precision"; a
    retrieval cut-off such as "ndcg@5" is kept as written."""
    if "@" in name or not name:
        return name
    return name.replace("_", " ").capitalize()


def metric_description(name: str) -> str:
    """What a registered metric measures, in one plain sentence ("" for a name that is not registered)."""
    try:
        return get_metric(name).description
    except MetricError:
        return ""
