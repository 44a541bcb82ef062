"""People's reviews of a run's scores, kept in the run-history database beside the run.

A reviewer looks at one sample's score on one metric and says whether they agree; when not,
they may give the score they would have given, on the metric's own scale ("0-1", "1-5", or
"pass-fail" as 1/0), and a note. Each review records who, when, the score shown and which
judge settings produced it, so agreement can later be read per judge. One row per (run, sample,
metric, reviewer): reviewing again replaces that reviewer's row; other reviewers keep theirs.

The tables are created by history.m004_reviews; the SQL here is portable (ON CONFLICT upsert,
no SQLite-only types).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from ..errors import ReviewError
from .history import RunInfo, RunStore
from ..metrics.parsing import SCALES, normalise

AGREE, DISAGREE = "agree", "disagree"
VERDICTS = (AGREE, DISAGREE)
# The run settings that say which judge made the scores (no key: settings are stored sanitised).
JUDGE_KEYS = ("judge", "model", "base_url", "temperature", "repeats", "heuristics", "language", "alignment")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Review:
    """One reviewer's verdict on one metric of one sample of a run."""

    run_id: str
    index: int
    metric: str
    verdict: str  # "agree" or "disagree"
    reviewer: str
    corrected: Optional[float] = None  # the reviewer's score on `scale`; None: none given
    scale: str = "0-1"
    note: str = ""
    judge_score: Optional[float] = None  # the 0-1 score the reviewer saw
    judge: Dict[str, Any] = field(default_factory=dict)  # the judge settings reviewed
    sample_id: Optional[str] = None
    queue: str = ""  # the queue order it was reviewed in ("random" marks an unbiased sample)
    created_at: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ReviewError(f"verdict must be 'agree' or 'disagree', not {self.verdict!r}")
        if not self.reviewer.strip():
            raise ReviewError("a review needs a reviewer name")
        if self.scale not in SCALES:
            raise ReviewError(f"scale must be one of {', '.join(SCALES)}, not {self.scale!r}")
        if self.corrected is not None:
            check_on_scale(self.corrected, self.scale)

    @property
    def human_score(self) -> Optional[float]:
        """The reviewer's score on 0-1: the correction, or the judge's score when they agree."""
        if self.corrected is not None:
            return normalise(self.corrected, self.scale)
        return self.judge_score if self.verdict == AGREE else None


def check_on_scale(value: float, scale: str) -> None:
    """ReviewError unless `value` is a score on `scale` (0-1, 1-5, or 1/0 for pass-fail)."""
    low, high = (1.0, 5.0) if scale == "1-5" else (0.0, 1.0)
    if value != value or not low <= value <= high or (scale == "pass-fail" and value not in (0.0, 1.0)):
        shown = "1 (pass) or 0 (fail)" if scale == "pass-fail" else f"between {low:g} and {high:g}"
        raise ReviewError(f"corrected score {value!r} is off the metric's {scale} scale: give a score {shown}")


def judge_settings(info: RunInfo) -> Dict[str, Any]:
    """The part of a run's settings that names its judge (what a review reviewed); an example set
    by its name and version only."""
    found = {k: info.settings[k] for k in JUDGE_KEYS if info.settings.get(k) not in (None, "", {})}
    if isinstance(found.get("alignment"), dict):
        found["alignment"] = f"{found['alignment'].get('name')}@v{found['alignment'].get('version')}"
    return found


_COLUMNS = ("run_id, idx, metric, reviewer, verdict, corrected, scale, note, judge_score, judge, sample_id, "
            "queue, created_at")


def _row(r: Review) -> Tuple:
    return (r.run_id, r.index, r.metric, r.reviewer.strip(), r.verdict, r.corrected, r.scale, r.note,
            r.judge_score, json.dumps(r.judge, ensure_ascii=False, default=str), r.sample_id,
            r.queue, r.created_at or _now())


def _review(row: Sequence[Any]) -> Review:
    return Review(run_id=row[0], index=row[1], metric=row[2], reviewer=row[3], verdict=row[4], corrected=row[5],
                  scale=row[6], note=row[7], judge_score=row[8], judge=json.loads(row[9] or "{}"),
                  sample_id=row[10], queue=row[11], created_at=row[12])


class ReviewStore:
    """Reviews in the run history at `runs.path` (the same database file as the runs)."""

    def __init__(self, runs: Optional[RunStore] = None, access: Optional[Any] = None) -> None:
        self.runs = runs if runs is not None else RunStore()
        # Who writes through this store (an evaluator.team.access.Access; None: the laptop's one user).
        # Every write asks it; it is passed in because the store sits below the team layer.
        self.access = access

    def _check(self) -> None:
        if self.access is not None:
            self.access.check("review")  # NotAllowed for a viewer in team mode

    def record(self, review: Review) -> Review:
        """Store `review`, replacing the same reviewer's earlier review of that sample and metric.
        NotAllowed when this store's user may not review (a viewer, in team mode)."""
        self._check()
        self.runs.get_run(review.run_id)  # a clear error for an unknown run
        row = _row(review)
        self.runs.write(
            f"INSERT INTO reviews ({_COLUMNS}) VALUES ({', '.join('?' * len(row))}) "
            "ON CONFLICT (run_id, idx, metric, reviewer) DO UPDATE SET verdict = excluded.verdict, "
            "corrected = excluded.corrected, scale = excluded.scale, note = excluded.note, "
            "judge_score = excluded.judge_score, judge = excluded.judge, sample_id = excluded.sample_id, "
            "queue = excluded.queue, created_at = excluded.created_at", row)
        return _review(row)

    def record_many(self, reviews: Iterable[Review]) -> int:
        n = 0
        for review in reviews:
            self.record(review)
            n += 1
        return n

    def remove(self, run_id: str, index: int, metric: str, reviewer: str) -> bool:
        """Withdraw one review; False when there was none."""
        self._check()
        return bool(self.runs.write("DELETE FROM reviews WHERE run_id = ? AND idx = ? AND metric = ? AND reviewer = ?",
                                     (run_id, index, metric, reviewer)))

    def reviews(self, run_id: Optional[str] = None, *, metric: Optional[str] = None,
                reviewer: Optional[str] = None) -> List[Review]:
        """Reviews, oldest sample first; filtered by run, metric and reviewer when given."""
        where, params = [], []
        for column, value in (("run_id", run_id), ("metric", metric), ("reviewer", reviewer)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self.runs.query(f"SELECT {_COLUMNS} FROM reviews{clause} ORDER BY run_id, idx, metric, reviewer",
                                tuple(params))
        return [_review(row) for row in rows]

    def reviewed_indices(self, run_id: str, metric: Optional[str] = None) -> Dict[int, int]:
        """Sample index -> how many reviews it has (on `metric`, or on any metric)."""
        counts: Dict[int, int] = {}
        for r in self.reviews(run_id, metric=metric):
            counts[r.index] = counts.get(r.index, 0) + 1
        return counts

    def reviewers(self, run_id: Optional[str] = None) -> List[str]:
        return sorted({r.reviewer for r in self.reviews(run_id)})
