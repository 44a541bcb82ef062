"""What a review form holds, turned into reviews: a verdict, a corrected score on the metric's own scale and
a note per metric of one sample (the dashboard's Review page)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Optional, Sequence

from ..metrics.registry import get_metric
from ..model import METHOD_RULE, EvalResult, MetricScore
from ..store.history import RunInfo
from ..store.reviews import AGREE, Review, judge_settings

PASS_FAIL = {"pass": 1.0, "fail": 0.0}  # how a pass-fail correction is picked, and stored


@dataclass(frozen=True)
class Entry:
    """One metric's part of the form: `corrected` is a number, "pass"/"fail", or None (none given)."""

    metric: str
    verdict: Optional[str]  # "agree", "disagree", or None (the metric is left unreviewed)
    corrected: Any = None
    note: str = ""


def scale_of(metric: str, settings: Mapping[str, Any]) -> str:
    """The scale a metric asks the judge for (a rubric keeps its own in the run's settings)."""
    rubric = (settings.get("rubrics") or {}).get(metric)
    if isinstance(rubric, dict) and rubric.get("scale"):
        return str(rubric["scale"])
    try:
        return get_metric(metric).scale
    except Exception:  # a plugin metric that is not installed here: its scores are 0-1
        return "0-1"


def reviewable(result: EvalResult) -> List[MetricScore]:
    """The row's scores a person can review: scored, and given by a judge (not by a rule)."""
    return [ms for ms in result.scores.values() if not ms.skipped and ms.method != METHOD_RULE]


def shown_corrected(review: Optional[Review]) -> Any:
    """A stored correction as the form shows it ("pass"/"fail" on the pass-fail scale)."""
    if review is None or review.corrected is None:
        return None
    if review.scale == "pass-fail":
        return "pass" if review.corrected == 1.0 else "fail"
    return review.corrected


def agree_with_all(result: EvalResult) -> List[Entry]:
    """The form of "agree with every metric": an agreement, nothing corrected, no note."""
    return [Entry(ms.name, AGREE) for ms in reviewable(result)]


def reviews_of(info: RunInfo, index: int, result: EvalResult, reviewer: str, queue: str,
               entries: Sequence[Entry]) -> List[Review]:
    """The reviews the form holds of row `index` of run `info` (entries without a verdict are left out)."""
    scores = {ms.name: ms for ms in reviewable(result)}
    out = []
    for entry in entries:
        ms = scores.get(entry.metric)
        if entry.verdict is None or ms is None:
            continue
        corrected = PASS_FAIL[entry.corrected] if isinstance(entry.corrected, str) else entry.corrected
        out.append(Review(info.run_id, index, ms.name, entry.verdict, reviewer, corrected=corrected,
                          scale=scale_of(ms.name, info.settings), note=entry.note, judge_score=ms.score,
                          judge=judge_settings(info), sample_id=result.sample_id, queue=queue))
    return out
