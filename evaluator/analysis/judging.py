"""How far a report's scores can be trusted: the offline notice, the judge's success, the fallbacks.

Every surface (CLI, HTML report, dashboard) shows these the same way, so a run whose judge
failed never reads like a pass and an offline run never reads like a judgement.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import AbstractSet, Any, Callable, Dict, Iterator, Mapping, Optional, Tuple

from ..judges.health import STOPPED_KEY, UNUSABLE_KEY
from ..model import (METHOD_BLEND, METHOD_FALLBACK, METHOD_FLAGGED, METHOD_LLM, METHOD_OFFLINE, METHOD_UNSCORED,
                     EvalReport)

OFFLINE_NOTICE = (
    "Offline run: these scores are lexical estimates (words shared by the answer, the contexts and the "
    "reference), not judgements. They cannot see paraphrase (a right answer in other words scores low), "
    "word salad beyond the obvious, or an answer that is wrong but uses the context's words. "
    "Score with a judge model for numbers you can act on.")
MAX_FALLBACK_RATE = 0.1  # above this share of fallbacks a run counts as a judge failure (CLI exit 3)
_CAUSE = re.compile(r"HTTP \d{3}|connection refused|unknown host|timed? ?out|malformed|empty reply|not JSON|"
                    r"not usable|truncated", re.IGNORECASE)


# How a score comes out when the judge was asked: it answered, or it failed (heuristic or no score).
ASKED = (METHOD_BLEND, METHOD_FLAGGED, METHOD_LLM, METHOD_FALLBACK, METHOD_UNSCORED)
_FAILED = (METHOD_FALLBACK, METHOD_UNSCORED)


def _methods(report: EvalReport) -> Iterator[str]:
    return (ms.method for r in report.results for ms in r.scores.values())


def is_offline(report: EvalReport) -> bool:
    """True when heuristics scored the run and no judge was asked (rule-based scores aside)."""
    return offline_methods(set(_methods(report)))


def offline_methods(methods: AbstractSet[str]) -> bool:
    """`is_offline` from the set of methods a run's scores were made by."""
    return METHOD_OFFLINE in methods and not methods & set(ASKED)


def fallback_counts(report: EvalReport) -> Tuple[int, int]:
    """(scores the judge failed to give: heuristic fallbacks and unscored rubrics, scores it was asked for)."""
    return tallied_fallbacks(Counter(_methods(report)))


def tallied_fallbacks(methods: Mapping[str, int]) -> Tuple[int, int]:
    """`fallback_counts` from method -> count over every metric (how an engine that streams rows counts)."""
    judged = sum(n for method, n in methods.items() if method in ASKED)
    return sum(n for method, n in methods.items() if method in _FAILED), judged


def fallback_rate(report: EvalReport) -> float:
    fallback, judged = fallback_counts(report)
    return fallback / judged if judged else 0.0


def stopped_reason(report: EvalReport) -> Optional[str]:
    """Why the run stopped early on judge failure (JudgeFailed's message), or None."""
    reason = (report.usage or {}).get(STOPPED_KEY)
    return str(reason) if reason else None


def main_cause(report: EvalReport) -> Optional[str]:
    """The judge's failure in a few words ("HTTP 401", "connection refused"), or None."""
    found = cause_of(stopped_reason(report))
    if found:
        return found
    causes = Counter(c for r in report.results for c in map(cause_of, (ms.error for ms in r.scores.values())) if c)
    return causes.most_common(1)[0][0] if causes else None


def cause_of(message: Optional[str]) -> Optional[str]:
    """A failure message's cause in a few words ("HTTP 401", "timed out"), or None."""
    found = _CAUSE.search(message or "")
    return found.group(0) if found else None


def judge_calls(usage: Mapping[str, Any]) -> Tuple[int, int]:
    """(judge calls that gave a reply, judge calls asked for): replies and cache hits against failures."""
    ok = int(usage.get("calls") or 0) + int(usage.get("cache_hits") or 0)
    return ok, ok + int(usage.get("failures") or 0)


def usable_replies(usage: Mapping[str, Any]) -> Tuple[int, int]:
    """(replies that held a score, calls answered): an answer in prose or cut-off JSON is answered, not usable."""
    answered, _ = judge_calls(usage)
    return max(0, answered - int(usage.get(UNUSABLE_KEY) or 0)), answered


def judge_status(report: EvalReport, settings: Optional[Dict[str, Any]] = None) -> str:
    """One line for a report header: 'gpt-4o-mini · 124/124 calls answered, 0/124 replies usable · not JSON',
    or the offline one."""
    return status_line(settings, report.usage or {}, lambda: is_offline(report), lambda: main_cause(report))


def status_line(settings: Optional[Dict[str, Any]], usage: Mapping[str, Any], offline: Callable[[], bool],
                cause: Callable[[], Optional[str]]) -> str:
    """`judge_status` from the run's settings, usage and (asked only when needed) its offline-ness and cause."""
    settings = settings or {}
    if settings.get("judge") == "offline" or (not settings.get("model") and offline()):
        return "offline heuristics (lexical estimates, no judge)"
    ok, asked = judge_calls(usage)
    usable, _ = usable_replies(usage)
    parts = [str(settings.get("model") or settings.get("judge") or "judge"),
             f"{ok}/{asked} calls answered, {usable}/{asked} replies usable"]
    found = cause() if usable < asked or usage.get(STOPPED_KEY) else None
    if found:
        parts.append(found)
    return " · ".join(parts)
