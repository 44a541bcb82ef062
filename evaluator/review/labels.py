"""Reviews out as `human_<metric>` label columns, and label files in as reviews.

Export: one row per reviewed sample of a run, with the sample's own columns (sample_id,
question, answer, contexts, ground_truth; a conversation's id, turns and goal) and, per reviewed metric, `human_<metric>`: the mean of
its reviewers' scores on 0-1. The file is a dataset like any other, so `ragmeter evaluate
labels.csv --labels` and the dashboard's agreement panel read the labels back.

An unreviewed run exports every row with an empty `human_<metric>` column per scored metric, so
labelling can start in a spreadsheet.

Import: any CSV, JSONL or Parquet file with `sample_id` and `human_<metric>` columns (this export, a
spreadsheet, labels made elsewhere; label_files.py reads it) becomes reviews by one reviewer: rows are matched to the run's samples by sample_id, a label
within AGREE_WITHIN of the run's score is an "agree", any other a "disagree" with the label as
the corrected score (labels above 1 are read as 1-5 ratings). A row naming no sample of the run
is an error naming the row, before anything is stored.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import ReviewError
from ..io.filetypes import LABELS, write_rows
from ..model import EvalResult, merged_order
from .label_files import read_label_file
from ..store.reviews import AGREE, DISAGREE, Review, ReviewStore, judge_settings

# A label this close to the run's score (on 0-1) agrees with it.
AGREE_WITHIN = 0.05
LABEL_COLUMNS = ("sample_id", "question", "answer", "contexts", "ground_truth")  # an empty file's header


def label_rows(results: Sequence[Tuple[int, EvalResult]], reviews: Sequence[Review]) -> List[Dict[str, Any]]:
    """One row per reviewed sample: its fields and human_<metric> (reviewers' mean on 0-1)."""
    scores: Dict[int, Dict[str, List[float]]] = defaultdict(lambda: defaultdict(list))
    for r in reviews:
        human = r.human_score
        if human is None and r.verdict == AGREE:
            human = _run_score(results, r.index, r.metric)
        if human is not None:
            scores[r.index][r.metric].append(human)
    metrics = list(dict.fromkeys(r.metric for r in reviews))
    if not reviews:  # nothing reviewed yet: every row, an empty column per scored metric, ready to label
        metrics = _scored_metrics(results)
    rows = []
    for index, result in results:
        if (reviews and index not in scores) or result.sample is None:
            continue
        s = result.sample
        row: Dict[str, Any] = {"sample_id": s.sample_id or result.sample_id or f"row-{index + 1}",
                               "question": s.question, "answer": s.answer, "contexts": list(s.contexts),
                               "ground_truth": s.ground_truth or ""}
        if s.conversation is not None:  # the conversation itself (our own format), read back as one
            row = s.conversation.to_dict()
        for m in metrics:
            values = scores[index].get(m)
            row[f"human_{m}"] = round(sum(values) / len(values), 4) if values else None
        rows.append(row)
    return rows


def _scored_metrics(results: Sequence[Tuple[int, EvalResult]]) -> List[str]:
    """The metrics the run scored on at least one row, in the run's order."""
    order = merged_order(r.scores for _, r in results)
    return [m for m in order if any(m in r.scores and not r.scores[m].skipped for _, r in results)]


def _run_score(results: Sequence[Tuple[int, EvalResult]], index: int, metric: str) -> Optional[float]:
    for i, result in results:
        ms = result.scores.get(metric) if i == index else None
        if ms is not None and not ms.skipped:
            return ms.score
    return None


def write_labels(rows: List[Dict[str, Any]], path: str) -> None:
    """Write label rows as CSV (contexts as a JSON array, formulas neutralised), JSONL or Parquet."""
    write_rows(rows, path, LABELS, LABEL_COLUMNS)


def export_labels(store: ReviewStore, run_id: str, path: str) -> int:
    """Write the run's reviews as label columns to `path`; returns the number of rows written."""
    rows = label_rows(store.runs.indexed_results(run_id), store.reviews(run_id))
    write_labels(rows, path)
    return len(rows)


def import_labels(store: ReviewStore, run_id: str, path: str, reviewer: str, queue: str = "import") -> int:
    """Store the human_<metric> labels of `path` as `reviewer`'s reviews of the run; returns how many.
    `queue` says how the labelled samples were picked ("random", "informative:SEED"; default "import":
    picked by hand, so they give no corrected mean)."""
    info = store.runs.get_run(run_id)
    results = store.runs.indexed_results(run_id)
    by_id = {(r.sample.sample_id if r.sample else None) or r.sample_id: (i, r) for i, r in results}
    reviews = []
    for row in read_label_file(path):
        if row.sample_id not in by_id:
            raise ReviewError(f"{path}: data row {row.number} has sample_id {row.sample_id!r}, which is not a "
                              f"sample of run {run_id} ({row.where.label()}); export the run's labels "
                              "(ragmeter review export) to see its ids")
        index, result = by_id[row.sample_id]
        for metric, label in row.labels.items():
            reviews.append(_imported(info, run_id, index, result, metric, float(label), reviewer, queue))
    return store.record_many(reviews)


def _imported(info: Any, run_id: str, index: int, result: EvalResult, metric: str, label: float,
              reviewer: str, queue: str = "import") -> Review:
    ms = result.scores.get(metric)
    if ms is None or ms.skipped:
        raise ReviewError(f"run {run_id} has no {metric} score for sample {result.sample_id!r} to review")
    scale = "1-5" if label > 1 else "0-1"
    review = Review(run_id, index, metric, DISAGREE, reviewer, corrected=label, scale=scale,
                    judge_score=ms.score, judge=judge_settings(info), sample_id=result.sample_id, queue=queue)
    human = review.human_score
    if human is not None and abs(human - ms.score) <= AGREE_WITHIN:
        return Review(run_id, index, metric, AGREE, reviewer, corrected=label, scale=scale, judge_score=ms.score,
                      judge=review.judge, sample_id=result.sample_id, queue=queue)
    return review
