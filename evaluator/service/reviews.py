"""People reviewing the judge, from a view: the review store (writing as the session's user), a run's review
queue, the form's reviews saved, and the judge's agreement with the reviewers."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..model import METHOD_RULE, EvalResult
from ..review.agreement import ReviewAgreement, review_agreement
from ..review.entries import Entry, reviews_of
from ..store import pages
from ..store.history import RunInfo, RunStore
from ..store.reviews import Review, ReviewStore
from ..team.access import Access


def review_store(store: RunStore, access: Optional[Access] = None) -> ReviewStore:
    """The reviews of the history, written as `access`'s user (a viewer's save is refused by the store itself)."""
    return ReviewStore(store, access=access)


def reviewable_metrics(store: RunStore, run_id: str) -> List[str]:
    """The run's metrics with a score a person can review (judged, not rule-based), in the run's order; SQL
    over the narrow scores table, no row decoded."""
    return pages.reviewable_metrics(store, run_id, exclude_method=METHOD_RULE)


def queue_scores(store: RunStore, run_id: str, metric: str) -> List[Tuple[int, EvalResult]]:
    """Every row's score on `metric` and nothing else: what a review queue orders."""
    return pages.light_results(store, run_id, [metric])


def run_reviews(reviews: ReviewStore, run_id: str) -> List[Review]:
    """Every review of the run, anyone's."""
    return reviews.reviews(run_id)


def reviewed_indices(reviews: ReviewStore, run_id: str, metric: str) -> Dict[int, int]:
    """Row index -> how many reviews it has on `metric` (what the "not yet reviewed" queue leaves out)."""
    return reviews.reviewed_indices(run_id, metric)


def save_reviews(reviews: ReviewStore, info: RunInfo, index: int, result: EvalResult, reviewer: str, queue: str,
                 entries: Sequence[Entry]) -> int:
    """Store the form's reviews of row `index` (entries without a verdict are left out); how many were saved."""
    return reviews.record_many(reviews_of(info, index, result, reviewer, queue, entries))


def agreement(reviews: ReviewStore, run_id: Optional[str]) -> Dict[str, ReviewAgreement]:
    """Judge agreement with the run's reviewers, per metric; {} without reviews. Reads the reviewed metrics'
    score rows, never the run's records."""
    if not run_id:
        return {}
    given = reviews.reviews(run_id)
    if not given:
        return {}
    return review_agreement(given, pages.light_results(reviews.runs, run_id, sorted({r.metric for r in given})))
