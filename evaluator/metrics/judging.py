"""Asking the judge about one metric of one sample: one call per repeat, each parsed on its own.

A judgement is data, success or failure alike: the score (or why there is none), the raw
reply and what the judge reported about the call (retries, token probabilities). scoring.py
turns a sample's judgements into its MetricScore.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, List, Optional

from ..judges.base import accepts, call_info, report_unusable
from ..safetext import safe
from .geval import weighted_score
from .metric import Metric
from .parsing import ParsedReply, load_json_object

TOP_LOGPROBS = 5  # alternatives asked per token: enough to cover the neighbours of a 1-5 score
UNAVAILABLE = "LLM unavailable — heuristic used."
UNPARSEABLE = "Judge reply had no usable score — heuristic used."
TRUNCATED = "Judge reply was cut off mid-JSON (truncated) — heuristic used."
EMPTY_REPLY = "The judge returned an empty reply."
NO_SCORE_ERROR = "No JSON score or number in the judge reply."
TRUNCATED_ERROR = ("No JSON score: the reply's JSON is cut off before its end (truncated; a max_tokens too low?), "
                   "so any score in what survived is not used.")


@dataclass
class Judgement:
    """One judge call for one metric: a 0-1 score, or `failure` (UNAVAILABLE/UNPARSEABLE) and `error`."""

    score: Optional[float] = None
    parsed: ParsedReply = field(default_factory=lambda: ParsedReply(None))
    reply: Optional[str] = None
    info: dict = field(default_factory=dict)
    how: str = "unparsed"  # how the reply became the score: parsing's `how`, or "logprobs"
    failure: str = ""
    error: str = ""


def ask(metric: Metric, judge: Any, prompt: str, repeat: int = 0) -> Judgement:
    """One judgement; `repeat` > 0 marks a repeated one (its own cache entry, for judges that cache)."""
    options = {}
    if repeat and accepts(judge, "repeat"):
        options["repeat"] = repeat
    if metric.logprobs and accepts(judge, "top_logprobs"):
        options["top_logprobs"] = TOP_LOGPROBS
    try:
        reply = judge.generate(prompt, **options)
    except Exception as exc:  # any judge failure is recorded, never aborts the run
        return Judgement(info=call_info(judge), failure=UNAVAILABLE, error=f"{type(exc).__name__}: {exc}")
    info = call_info(judge)
    if isinstance(reply, str):  # any judge's: SQLite and the exports cannot store these (U+FFFD shows where)
        reply = safe(reply)
    if not (reply or "").strip():
        report_unusable(judge, EMPTY_REPLY, not_json=True)
        return Judgement(reply=reply, info=info, failure=UNAVAILABLE, error=EMPTY_REPLY)
    parsed = metric.parse(reply)
    if parsed.score is None:
        return _unusable(judge, parsed, reply, info)
    if metric.logprobs and parsed.how != "verdicts":
        weighted = weighted_score(info.get("logprobs"), parsed.stated, metric.scale)
        if weighted is not None:
            return Judgement(weighted, parsed, reply, info, "logprobs")
    return Judgement(parsed.score, parsed, reply, info, parsed.how)


def _unusable(judge: Any, parsed: ParsedReply, reply: str, info: dict) -> Judgement:
    """A reply with no score: a failed call for the run's health check, and data for the row."""
    truncated = parsed.how == "truncated"
    error = TRUNCATED_ERROR if truncated else NO_SCORE_ERROR
    report_unusable(judge, f"{error} Reply: {_excerpt(reply)}",
                    not_json=not truncated and load_json_object(reply) is None)
    return Judgement(parsed=parsed, reply=reply, info=info, failure=TRUNCATED if truncated else UNPARSEABLE,
                     error=error)


def _excerpt(reply: str, limit: int = 80) -> str:
    text = " ".join(reply.split())
    return repr(text if len(text) <= limit else text[:limit] + "…")


def ask_repeatedly(metric: Metric, judge: Any, prompt: str, repeats: int) -> List[Judgement]:
    return [ask(metric, judge, prompt, i) for i in range(max(1, repeats))]


def retries(judgements: List[Judgement]) -> int:
    return sum(int(j.info.get("retries") or 0) for j in judgements)
