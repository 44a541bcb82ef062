"""People reviewing the judge, from a view: the review store (writing as the session's user), a run's review
queue, the form's reviews saved, and the judge's agreement with the reviewers."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import ReviewError
from ..model import METHOD_RULE, EvalResult
from ..review.agreement import ReviewAgreement, format_review_agreement, review_agreement
from ..review.alignment import ExampleSet, build_example_set, load_example_set, save_example_set
from ..review.entries import Entry, reviews_of
from ..review.labels import export_labels, import_labels
from ..review.queue import DEFAULT_SEED, ORDERS, queue_label, review_queue
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


# --- reviews as files, queues and example sets: the command line's `ragmeter review` ----------------------
@dataclass(frozen=True)
class Exported:
    """A run's reviews written as label columns: how many rows, and whether any was reviewed yet (else the
    file is a form to fill in)."""

    rows: int
    reviewed: bool


def export_reviews(reviews: ReviewStore, run_id: str, path: str) -> Exported:
    """The run's reviews as human_<metric> columns in `path` (CSV, JSON Lines, Parquet)."""
    rows = export_labels(reviews, run_id, path)
    return Exported(rows, bool(reviews.reviews(run_id)))


def import_reviews(reviews: ReviewStore, run_id: str, path: str, reviewer: str, queue: str = "import") -> int:
    """Store the human_<metric> labels of `path` as `reviewer`'s reviews of the run; how many. `queue` says how
    the labelled samples were drawn ("import": by hand, so they correct no mean)."""
    return import_labels(reviews, run_id, path, reviewer, queue)


@dataclass(frozen=True)
class QueuedSample:
    """One sample to review next: its place in the queue, row index, sample id, the judge's score, and how
    many reviews it has on the metric already."""

    place: int
    index: int
    sample_id: Optional[str]
    score: float
    reviews: int


def next_to_review(reviews: ReviewStore, run_id: str, metric: str, order: str, *, n: Optional[int] = None,
                   seed: int = DEFAULT_SEED) -> List[QueuedSample]:
    """The samples to review next on `metric`, in `order`; ReviewError for a metric the run has no scores of."""
    if n is not None and n < 1:
        raise ReviewError(f"-n {n}: give at least 1")
    results = reviews.runs.indexed_results(run_id)
    if not any(metric in r.scores for _, r in results):
        names = sorted({m for _, r in results for m in r.scores})
        raise ReviewError(f"run {run_id} has no {metric!r} scores; it has: {', '.join(names) or 'none'}")
    reviewed = reviews.reviewed_indices(run_id, metric)
    by_index = dict(results)
    return [QueuedSample(place, index, by_index[index].sample_id, by_index[index].scores[metric].score,
                         reviewed.get(index, 0))
            for place, index in enumerate(review_queue(results, metric, order, n=n, seed=seed,
                                                       reviewed=reviewed), 1)]


def save_examples(reviews: ReviewStore, run_id: str, name: str, *, metrics: Optional[Sequence[str]] = None,
                  limit: int = 4) -> ExampleSet:
    """The run's reviewed disagreements saved as the next version of few-shot example set `name`."""
    return save_example_set(reviews, name, build_example_set(reviews, run_id, metrics=metrics, limit=limit))


def example_set(reviews: ReviewStore, spec: str) -> Dict[str, Any]:
    """Example set `spec` ("name" or "name@v2") as a run's settings hold it; ReviewError when unknown."""
    return load_example_set(reviews, spec).to_dict()


__all__ = [
    "DEFAULT_SEED", "ORDERS", "Exported", "QueuedSample", "ReviewStore", "agreement", "example_set",
    "export_reviews", "format_review_agreement", "import_reviews", "next_to_review", "queue_label",
    "queue_scores", "review_store", "reviewable_metrics", "reviewed_indices", "run_reviews", "save_examples",
    "save_reviews",
]
