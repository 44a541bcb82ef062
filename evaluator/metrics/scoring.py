"""Scoring one metric of one sample: heuristic, one judge call, parse, blend — or a visible fallback."""
from __future__ import annotations

from typing import Any, List, Optional

from ..judges.base import call_info, is_offline
from ..model import (
    METHOD_BLEND,
    METHOD_FALLBACK,
    METHOD_OFFLINE,
    METHOD_RULE,
    METHOD_SKIPPED,
    EvalSample,
    MetricScore,
)
from ..text import words
from .heuristics import DEFAULT_HEURISTICS, heuristic_score
from .parsing import parse_reply
from .prompts import build_prompt

LLM_WEIGHT = 0.7
HEURISTIC_WEIGHT = 0.3
UNAVAILABLE = "LLM unavailable — heuristic used."
UNPARSEABLE = "Judge reply had no usable score — heuristic used."

# Metrics that compare against a reference answer and are skipped without one.
NEEDS_REFERENCE = ("context_recall", "answer_correctness")


def blend(llm: float, heuristic: float) -> float:
    return round(LLM_WEIGHT * llm + HEURISTIC_WEIGHT * heuristic, 4)


def skip_reason(metric: str, sample: EvalSample) -> Optional[str]:
    """Why `metric` cannot be computed for `sample`, or None when it can."""
    if metric in NEEDS_REFERENCE and not (sample.ground_truth or "").strip():
        return "No reference answer (ground_truth) for this sample."
    if metric == "faithfulness":
        if not (sample.answer or "").strip():
            return "The answer is empty."
        if not sample.contexts:
            return "No contexts were retrieved."
    return None


def score_metric(metric: str, sample: EvalSample, judge: Any, lang: str,
                 heuristics: str = DEFAULT_HEURISTICS) -> MetricScore:
    """Score `metric` for `sample` with at most one judge call."""
    reason = skip_reason(metric, sample)
    if reason:
        return MetricScore(metric, 0.0, reason, skipped=True, method=METHOD_SKIPPED)
    h = heuristic_score(metric, sample, lang, heuristics)
    if is_offline(judge):
        return MetricScore(metric, round(h.score, 4), f"Offline heuristic: {h.reasoning}",
                           method=METHOD_OFFLINE, heuristic_score=h.score)
    prompt = build_prompt(metric, lang, sample.question, sample.answer, sample.contexts, sample.ground_truth)
    try:
        reply = judge.generate(prompt)
    except Exception as exc:  # any judge failure degrades to the heuristic, never aborts the run
        return _fallback(metric, h, UNAVAILABLE, f"{type(exc).__name__}: {exc}", None, call_info(judge))
    info = call_info(judge)
    if not (reply or "").strip():
        return _fallback(metric, h, UNAVAILABLE, "The judge returned an empty reply.", reply, info)
    parsed = parse_reply(reply, metric)
    if parsed.score is None:
        return _fallback(metric, h, UNPARSEABLE, "No JSON score or number in the judge reply.", reply, info)
    reasoning = parsed.reasoning or f"Judge scored {parsed.score:.3f} ({parsed.how})."
    if info.get("retries"):
        reasoning += f" (judge call succeeded after {info['retries']} retr{'y' if info['retries'] == 1 else 'ies'})"
    return MetricScore(metric, blend(parsed.score, h.score), reasoning, method=METHOD_BLEND,
                       llm_score=round(parsed.score, 4), heuristic_score=h.score,
                       raw_reply=reply, verdicts=parsed.verdicts)


def _fallback(metric: str, h: Any, reasoning: str, error: str, reply: Optional[str], info: dict) -> MetricScore:
    if info.get("retries"):
        error += f" (after {info['retries']} retries)"
    return MetricScore(metric, round(h.score, 4), f"{reasoning} {h.reasoning}", method=METHOD_FALLBACK,
                       heuristic_score=h.score, raw_reply=reply, error=error)


def keyword_coverage(answer: str, keywords: List[str]) -> MetricScore:
    """Fraction of expected keywords found in the answer (case-insensitive, whole words)."""
    text = " " + " ".join(words(answer)) + " "
    found = [k for k in keywords if " " + " ".join(words(k)) + " " in text]
    missing = [k for k in keywords if k not in found]
    score = len(found) / len(keywords) if keywords else 0.0
    reasoning = f"{len(found)}/{len(keywords)} expected keywords in the answer"
    reasoning += f"; missing: {', '.join(missing)}." if missing else "."
    return MetricScore("keyword_coverage", round(score, 4), reasoning, method=METHOD_RULE)


def expected_doc_recall(contexts: List[str], expected_docs: List[str]) -> MetricScore:
    """Fraction of expected document titles among the retrieved contexts' titles.

    A context's title is how it begins ("Title: text", "Title\ntext" or the title alone), compared
    word by word, case-insensitively, so punctuation and spacing do not matter.
    """
    heads = [" ".join(words(c)) + " " for c in contexts]
    found = [d for d in expected_docs if any(h.startswith(" ".join(words(d)) + " ") for h in heads)]
    missing = [d for d in expected_docs if d not in found]
    score = len(found) / len(expected_docs) if expected_docs else 0.0
    reasoning = f"{len(found)}/{len(expected_docs)} expected documents retrieved"
    reasoning += f"; missing: {', '.join(missing)}." if missing else "."
    return MetricScore("expected_doc_recall", round(score, 4), reasoning, method=METHOD_RULE)


def rule_scores(sample: EvalSample) -> dict:
    """The rule-based metrics this sample supports (none when it has no keywords/expected docs)."""
    extra = {}
    if sample.expected_answer_keywords:
        extra["keyword_coverage"] = keyword_coverage(sample.answer, sample.expected_answer_keywords)
    if sample.expected_docs:
        extra["expected_doc_recall"] = expected_doc_recall(sample.contexts, sample.expected_docs)
    return extra
