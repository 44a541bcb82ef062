"""Scoring one metric of one sample: heuristic, one judge call, parse, blend — or a visible fallback."""
from __future__ import annotations

from typing import Any, Dict, Iterable, Optional, Union

from .heuristics import DEFAULT_HEURISTICS
from ..model import (
    METHOD_BLEND,
    METHOD_FALLBACK,
    METHOD_LLM,
    METHOD_OFFLINE,
    METHOD_SKIPPED,
    METHOD_UNSCORED,
    EvalSample,
    MetricScore,
)
from .metric import Metric
from .registry import get_metric
from .rules import expected_doc_recall, keyword_coverage  # noqa: F401  (their home before the registry)

LLM_WEIGHT = 0.7
HEURISTIC_WEIGHT = 0.3
UNAVAILABLE = "LLM unavailable — heuristic used."
UNPARSEABLE = "Judge reply had no usable score — heuristic used."
NEEDS_JUDGE = "Needs a judge: this metric has no offline heuristic."
NO_SCORE = "No score: the judge failed and this metric has no heuristic to fall back on."


def is_offline(judge: Any) -> bool:
    """A judge that declares `offline = True` is never called; heuristics score everything."""
    return bool(getattr(judge, "offline", False))


def blend(llm: float, heuristic: float) -> float:
    return round(LLM_WEIGHT * llm + HEURISTIC_WEIGHT * heuristic, 4)


def _metric(metric: Union[str, Metric]) -> Metric:
    return metric if isinstance(metric, Metric) else get_metric(metric)


def skip_reason(metric: Union[str, Metric], sample: EvalSample) -> Optional[str]:
    """Why `metric` cannot be computed for `sample`, or None when it can."""
    return _metric(metric).skip_reason(sample)


def _call_info(judge: Any) -> dict:
    info = getattr(judge, "call_info", None)
    return (info() or {}) if callable(info) else {}


def score_metric(metric: Union[str, Metric], sample: EvalSample, judge: Any, lang: str,
                 heuristics: str = DEFAULT_HEURISTICS) -> MetricScore:
    """Score one judged metric (a name or a Metric) for `sample` with at most one judge call."""
    m = _metric(metric)
    name = m.name
    reason = m.skip_reason(sample)
    if reason:
        return MetricScore(name, 0.0, reason, skipped=True, method=METHOD_SKIPPED)
    h = m.heuristic(sample, lang, heuristics) if m.heuristic is not None else None
    if is_offline(judge):
        if h is None:
            return MetricScore(name, 0.0, NEEDS_JUDGE, skipped=True, method=METHOD_SKIPPED)
        return MetricScore(name, round(h.score, 4), f"Offline heuristic: {h.reasoning}",
                           method=METHOD_OFFLINE, heuristic_score=h.score)
    try:
        reply = judge.generate(m.prompt(sample, lang))
    except Exception as exc:  # any judge failure degrades visibly, never aborts the run
        return _fallback(name, h, UNAVAILABLE, f"{type(exc).__name__}: {exc}", None, _call_info(judge))
    info = _call_info(judge)
    if not (reply or "").strip():
        return _fallback(name, h, UNAVAILABLE, "The judge returned an empty reply.", reply, info)
    parsed = m.parse(reply)
    if parsed.score is None:
        return _fallback(name, h, UNPARSEABLE, "No JSON score or number in the judge reply.", reply, info)
    reasoning = parsed.reasoning or f"Judge scored {parsed.score:.3f} ({parsed.how})."
    if info.get("retries"):
        reasoning += f" (judge call succeeded after {info['retries']} retr{'y' if info['retries'] == 1 else 'ies'})"
    llm = round(parsed.score, 4)
    if h is None:  # nothing to blend with: the judge's score is the score
        return MetricScore(name, llm, reasoning, method=METHOD_LLM, llm_score=llm, raw_reply=reply,
                           verdicts=parsed.verdicts, scored_from=parsed.how)
    return MetricScore(name, blend(parsed.score, h.score), reasoning, method=METHOD_BLEND,
                       llm_score=llm, heuristic_score=h.score,
                       raw_reply=reply, verdicts=parsed.verdicts, scored_from=parsed.how)


def score_sample(metrics: Iterable[Metric], sample: EvalSample, judge: Any, lang: str,
                 heuristics: str = DEFAULT_HEURISTICS) -> Dict[str, MetricScore]:
    """Every chosen metric's score for one sample, in the order chosen.

    A rule-based metric whose inputs the sample lacks is left out (no keywords, no keyword
    coverage), as before the registry; a judged one is kept as skipped, with its reason.
    """
    scores: Dict[str, MetricScore] = {}
    for m in metrics:
        if m.judged:
            scores[m.name] = score_metric(m, sample, judge, lang, heuristics)
        elif m.skip_reason(sample) is None:
            scores[m.name] = m.rule(sample)
    return scores


def _fallback(metric: str, h: Any, reasoning: str, error: str, reply: Optional[str], info: dict) -> MetricScore:
    if info.get("retries"):
        error += f" (after {info['retries']} retries)"
    if h is None:  # no heuristic: no number at all, and never in a mean
        return MetricScore(metric, 0.0, f"{NO_SCORE} {error}", skipped=True, method=METHOD_UNSCORED,
                           raw_reply=reply, error=error)
    return MetricScore(metric, round(h.score, 4), f"{reasoning} {h.reasoning}", method=METHOD_FALLBACK,
                       heuristic_score=h.score, raw_reply=reply, error=error)


def rule_scores(sample: EvalSample) -> dict:
    """The built-in rule-based metrics this sample supports (none without keywords/expected docs)."""
    return score_sample([get_metric("keyword_coverage"), get_metric("expected_doc_recall")], sample, None, "en")
