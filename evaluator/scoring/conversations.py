"""Scoring a conversation row: each assistant turn in context, then the conversation as a whole.

`RAGEvaluator.evaluate` sends every row with a conversation here, so conversations are scored by
the same pass as single-turn rows (one judge-health window, one usage count, rows in parallel).

Per assistant turn, the evaluator's own metrics (faithfulness to that turn's contexts, relevancy
to the user's turn with the conversation so far shown to the judge as part of the question…):
one judged call per metric and repeat, as for a single-turn sample. Per conversation: knowledge
retention and goal completion (one call each when judged), conversation relevancy (no call: from
the turns' answer_relevancy), the agent metrics over every turn's tool calls (task_completion one
call), and rubrics declared `level = "conversation"` (one call each).

The row's result has the conversation-level metrics plus, per turn metric, the mean over that
conversation's scored turns as its `scores`, and each turn's result in `turns`.
"""
from __future__ import annotations

import dataclasses
import statistics
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..conversation import NOT_ASKED, Exchange
from ..metrics.conversational import CONVERSATION_METRICS, conversation_relevancy
from ..metrics.metric import Metric
from ..metrics.tools import AGENT_METRICS
from ..model import METHOD_RULE, METHOD_SKIPPED, EvalResult, EvalSample, MetricScore, TurnResult, merged_order

METHOD_TURNS = "from_turns"  # a conversation's score computed from its turns' scores, no judge call
_AGENT_NAMES = frozenset(m.name for m in AGENT_METRICS)


def level_of(metric: Metric) -> str:
    """"conversation" for metrics that score a whole conversation, else "turn"."""
    if metric.name in _AGENT_NAMES or metric in CONVERSATION_METRICS:
        return "conversation"
    return str(getattr(metric, "level", "turn"))


def split_metrics(metrics: Sequence[Metric]) -> Tuple[List[Metric], List[Metric]]:
    """(turn metrics, conversation metrics): the evaluator's choice, agent metrics and conversation-level
    rubrics moved to the conversation, and the built-in conversation metrics added there."""
    turn = [m for m in metrics if level_of(m) == "turn"]
    conv = list(CONVERSATION_METRICS) + [m for m in metrics if level_of(m) == "conversation"
                                         and m not in CONVERSATION_METRICS]
    if not any(m.name in _AGENT_NAMES for m in conv):
        conv += list(AGENT_METRICS)
    return turn, conv


def row_metric_names(metrics: Sequence[Metric]) -> List[str]:
    """Every score a conversation's row can have, in the order its result holds them: the turn metrics'
    means, conversation_relevancy, then the conversation metrics (a results table's columns)."""
    turn, conv = split_metrics(metrics)
    names = [m.name for m in turn] + (["conversation_relevancy"] if any(m.name == "answer_relevancy" for m in turn)
                                      else [])
    return names + [m.name for m in conv if m.name not in names]


def judged_parts(sample: EvalSample, metrics: Sequence[Metric], language: str) -> List[Tuple[EvalSample, List[Metric]]]:
    """What one row puts to the judge, as (exchange, its metrics): a single-turn row with every metric; a
    conversation's asked replies with the turn metrics, then the whole with the conversation metrics
    (what costs.py estimates, and what `score_conversation` scores)."""
    if sample.conversation is None:
        return [(sample, list(metrics))]
    turn_metrics, conv_metrics = split_metrics(metrics)
    asked = [s for ex, s in _replies(sample, language) if ex.reply is not None and not ex.reply.not_asked]
    return [(s, turn_metrics) for s in asked] + [(_whole(sample), conv_metrics)]


def _replies(sample: EvalSample, language: str) -> List[Tuple[Exchange, EvalSample]]:
    """Each exchange with a reply, and the turn sample its turn metrics score (numbered from 1)."""
    replies = [e for e in sample.exchanges() if e.reply is not None]
    return [(ex, sample.turn_sample(ex, n, language)) for n, ex in enumerate(replies, 1)]


def _whole(sample: EvalSample) -> EvalSample:
    # A failed turn leaves the rest of the conversation scorable: the whole is judged without the error.
    return dataclasses.replace(sample, target_error=None)


def score_conversation(evaluator: Any, sample: EvalSample, *, parallel_calls: bool = False) -> EvalResult:
    """The row's result (see the module docstring). `evaluator` is the RAGEvaluator scoring the pass:
    its `score(sample, metrics)` judges under the pass's health watch, so a failing judge drops the row."""
    assert sample.conversation is not None
    turn_metrics, conv_metrics = split_metrics(evaluator.metrics)
    turns = []
    for ex, asked in _replies(sample, evaluator.language):
        assert ex.reply is not None
        result = (_not_asked(asked, turn_metrics) if ex.reply.not_asked
                  else evaluator.score(asked, turn_metrics, parallel_calls=parallel_calls))
        turns.append(TurnResult(ex.reply_index or 0, ex.user_index, result))
    whole = evaluator.score(_whole(sample), conv_metrics, parallel_calls=parallel_calls)
    return _combine(sample, turns, whole)


def _turn_mean(name: str, turns: List[EvalResult]) -> Optional[MetricScore]:
    found = [t.scores[name] for t in turns if name in t.scores]
    if not found:
        return None
    scored = [ms for ms in found if not ms.skipped]
    if not scored:
        return MetricScore(name, 0.0, f"No turn could be scored: {found[0].reasoning}", skipped=True,
                           method=METHOD_SKIPPED)
    method = METHOD_RULE if all(ms.method == METHOD_RULE for ms in scored) else METHOD_TURNS
    return MetricScore(name, round(statistics.fmean(ms.score for ms in scored), 4),
                       f"Mean over {len(scored)}/{len(found)} assistant turns.", method=method)


def _not_asked(sample: EvalSample, metrics: Sequence[Metric]) -> EvalResult:
    return EvalResult(sample.sample_id, sample=sample, scores={
        m.name: MetricScore(m.name, 0.0, NOT_ASKED, skipped=True, method=METHOD_SKIPPED) for m in metrics if m.judged})


def _combine(sample: EvalSample, turns: List[TurnResult], whole: EvalResult) -> EvalResult:
    results = [t.result for t in turns]
    scores: Dict[str, MetricScore] = {}
    for name in merged_order(r.scores for r in results):
        mean = _turn_mean(name, results)
        if mean is not None:
            scores[name] = mean
    if any("answer_relevancy" in r.scores for r in results):
        scores["conversation_relevancy"] = conversation_relevancy(
            [r.scores.get("answer_relevancy") for r in results], METHOD_TURNS)
    scores.update(whole.scores)
    elapsed = whole.elapsed_sec + sum(r.elapsed_sec for r in results)
    return EvalResult(sample.sample_id, elapsed_sec=elapsed, sample=sample, scores=scores, turns=turns)
