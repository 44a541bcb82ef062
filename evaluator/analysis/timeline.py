"""A project's production scores over time: per metric and hour (or day), the mean with its band, the
deploys between, and the rows behind each point, read with SQL from the run history.

A live run (evaluator/collect) is an ordinary run of the collector's project, one per day, each
sample's metadata carrying `trace_id`, `trace_end` (ISO 8601, UTC) and, when the traced app says so,
`service_version`. Months of such runs must not be loaded row by row to draw two weeks: every read
here is bounded by a window (`since`, the last 14 days by default) and aggregated in the database
(count, sum and sum of squares per bucket, run and metric), so a page reads a few hundred numbers.
`scored_rows` pages through the window for the alert rules (evaluator/collect/alerts.py).

Times are compared as text: ISO 8601 in UTC sorts as it reads, and an hour's bucket is the first 13
characters (`2026-12-04T18`), a day's the first 10.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Dict, Iterator, List, Optional, Sequence, Tuple

from ..store.history import RunStore
from .inference import t_quantile

WINDOW_DAYS = 14
BUCKETS = {"hour": 13, "day": 10}  # the ISO prefix that names a bucket
OVERALL = "overall"  # the row's overall score (results.overall), usable like a metric
CONFIDENCE = 0.95
PAGE_ROWS = 5000  # rows per read when paging through scored rows
MAX_DRILL = 1000  # sample references listed for one point
METRIC_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Point:
    """One metric's mean over one bucket, with its t-interval band (None under two scores)."""

    metric: str
    bucket: str  # "2026-12-04T18" (hour) or "2026-12-04" (day)
    n: int
    mean: float
    low: Optional[float]
    high: Optional[float]
    run_ids: Tuple[str, ...]  # the runs holding its samples, for the drill-down

    @property
    def start(self) -> str:
        """The bucket's start as an ISO time (what a chart's time axis reads)."""
        return self.bucket + (":00:00Z" if len(self.bucket) == BUCKETS["hour"] else "T00:00:00Z")


@dataclass(frozen=True)
class Deploy:
    """The first trace of a new service version."""

    at: str
    version: str
    previous: str


@dataclass(frozen=True)
class ScoredRow:
    """One scored sample of a live run, for the alert rules."""

    trace_end: str
    run_id: str
    idx: int
    value: float

    @property
    def key(self) -> Tuple[str, str, int]:
        """Its place in trace_end order (ties broken by run and index), the alert cursor."""
        return (self.trace_end, self.run_id, self.idx)


@dataclass
class Timeline:
    """Every metric's points in time order, and the deploys, over one window of one project."""

    project: str
    since: str
    step: str
    points: Dict[str, List[Point]] = field(default_factory=dict)
    deploys: List[Deploy] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.points


def window_start(days: int = WINDOW_DAYS, now: Optional[datetime] = None) -> str:
    """The ISO UTC time `days` ago: where a window starts."""
    moment = (now or datetime.now(timezone.utc)) - timedelta(days=days)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def check_metric(name: str) -> str:
    """`name` when it can be a metric's name (it becomes part of a JSON path in SQL), else ValueError."""
    if not METRIC_NAME.match(name or ""):
        raise ValueError(f"{name!r} is not a metric name (letters, digits and _, e.g. faithfulness)")
    return name


# -- SQL, one fragment per dialect ------------------------------------------------------------
def _json(store: RunStore, column: str, *path: str) -> str:
    """The text at `path` in a JSON column (path parts are checked names or fixed words, never user text)."""
    if store.dialect == "postgresql":
        return f"({column}::jsonb #>> '{{{','.join(path)}}}')"
    return f"json_extract({column}, '$.{'.'.join(path)}')"


def _trace_end(store: RunStore) -> str:
    # A result whose sample differs from its run's (m003) embeds it; rows from before m003 are whole records.
    return (f"COALESCE({_json(store, 'r.record', 'sample', 'metadata', 'trace_end')}, "
            f"{_json(store, 's.record', 'metadata', 'trace_end')}, "
            f"{_json(store, 'r.record', 'metadata', 'trace_end')})")


def _version(store: RunStore) -> str:
    return (f"COALESCE({_json(store, 'r.record', 'sample', 'metadata', 'service_version')}, "
            f"{_json(store, 's.record', 'metadata', 'service_version')}, "
            f"{_json(store, 'r.record', 'metadata', 'service_version')})")


def _score(store: RunStore, metric: str) -> str:
    """A metric's score as a number, NULL when skipped or absent; `overall` is the row's overall."""
    if metric == OVERALL:
        return "r.overall"
    score, skipped = _json(store, "r.record", "metrics", metric, "score"), \
        _json(store, "r.record", "metrics", metric, "skipped")
    if store.dialect == "postgresql":  # #>> reads text: 'true', and the score as digits
        return f"CASE WHEN {skipped} = 'true' THEN NULL ELSE CAST({score} AS DOUBLE PRECISION) END"
    return f"CASE WHEN COALESCE({skipped}, 0) = 1 THEN NULL ELSE CAST({score} AS REAL) END"


def _rows(store: RunStore, columns: str) -> str:
    """The project's scored rows with their trace_end as `te`, as a subquery taking the project and the
    earliest run creation time: a live run holds one day of traces, so runs created more than a day
    before a window need not be read (the index on runs.project, then results by run)."""
    return (f"SELECT {columns}, {_trace_end(store)} AS te FROM results r "
            "JOIN runs u ON u.run_id = r.run_id LEFT JOIN samples s ON s.run_id = r.run_id AND s.idx = r.idx "
            "WHERE u.project = ? AND u.created_at >= ?")


def _runs_since(since: str) -> str:
    """The earliest creation time of a run that may hold traces from `since` on (a day earlier)."""
    if not since:
        return ""
    try:
        start = datetime.strptime(since[:10], "%Y-%m-%d")
    except ValueError:
        return ""
    return (start - timedelta(days=1)).strftime("%Y-%m-%d")


def live_projects(store: RunStore) -> List[str]:
    """The projects with live runs (a first sample carrying trace_end), sorted; one row per run is read."""
    first = (f"COALESCE({_json(store, 's.record', 'metadata', 'trace_end')}, "
             f"{_json(store, 'r.record', 'sample', 'metadata', 'trace_end')})")
    rows = store.query(
        f"SELECT DISTINCT u.project FROM runs u JOIN samples s ON s.run_id = u.run_id AND s.idx = 0 "
        f"LEFT JOIN results r ON r.run_id = s.run_id AND r.idx = 0 WHERE u.project IS NOT NULL AND {first} IS NOT NULL "
        "ORDER BY u.project")
    return [str(p) for (p,) in rows]


def metrics_of(store: RunStore, project: str, since: str) -> List[str]:
    """The metrics scored in the project's runs of the window (from the newest run's first row: a live
    run scores every trace on the same metrics)."""
    rows = store.query(
        f"SELECT r.record FROM results r JOIN runs u ON u.run_id = r.run_id WHERE u.project = ? "
        f"AND u.created_at >= ? ORDER BY u.created_at DESC, r.idx LIMIT 1", (project, _runs_since(since)))
    if not rows:
        return []
    names = json.loads(rows[0][0]).get("metrics") or {}
    return [n for n in names if METRIC_NAME.match(n)]


def _aggregate(store: RunStore, project: str, metric: str, since: str, width: int) -> List[Tuple]:
    """(bucket, run_id, n, sum, sum of squares) per bucket and run, the database doing the sums."""
    inner = _rows(store, f"r.run_id AS run_id, {_score(store, metric)} AS v")
    return store.query(
        f"SELECT substr(te, 1, {width}) AS b, run_id, COUNT(v), SUM(v), SUM(v * v) FROM ({inner}) q "
        "WHERE te >= ? AND v IS NOT NULL GROUP BY substr(te, 1, " + str(width) + "), run_id ORDER BY 1, 2",
        (project, _runs_since(since), since))


def _each_metric(store: RunStore) -> Tuple[str, str]:
    """(the FROM item that spreads a row's `metrics` object into (key, value) rows, the score read from
    one of those values, NULL when skipped)."""
    if store.dialect == "postgresql":
        return ("CROSS JOIN LATERAL jsonb_each(q.rec::jsonb -> 'metrics') m",
                "CASE WHEN m.value ->> 'skipped' = 'true' THEN NULL "
                "ELSE CAST(m.value ->> 'score' AS DOUBLE PRECISION) END")
    return ("JOIN json_each(q.rec, '$.metrics') m",
            "CASE WHEN COALESCE(json_extract(m.value, '$.skipped'), 0) = 1 THEN NULL "
            "ELSE CAST(json_extract(m.value, '$.score') AS REAL) END")


def _aggregate_all(store: RunStore, project: str, since: str, width: int) -> List[Tuple]:
    """(bucket, run_id, metric, n, sum, sum of squares) for every metric in one pass over the window's rows."""
    spread, score = _each_metric(store)
    inner = _rows(store, "r.run_id AS run_id, r.record AS rec")
    return store.query(
        f"SELECT b, run_id, metric, COUNT(v), SUM(v), SUM(v * v) FROM (SELECT substr(q.te, 1, {width}) AS b, "
        f"q.run_id AS run_id, m.key AS metric, {score} AS v FROM ({inner}) q {spread} WHERE q.te >= ?) a "
        "WHERE v IS NOT NULL GROUP BY b, run_id, metric ORDER BY 3, 1, 2",
        (project, _runs_since(since), since))


def all_points(store: RunStore, project: str, *, since: str, step: str = "hour") -> Dict[str, List[Point]]:
    """Every metric's means per bucket over the window, read in one pass; metric -> points in time order."""
    grouped: Dict[str, Dict[str, List[Tuple]]] = {}
    for b, run_id, metric, n, total, squares in _aggregate_all(store, project, since, BUCKETS[step]):
        if METRIC_NAME.match(str(metric)):
            grouped.setdefault(str(metric), {}).setdefault(str(b), []).append((b, run_id, n, total, squares))
    return {metric: [_point(metric, bucket, parts) for bucket, parts in sorted(buckets.items())]
            for metric, buckets in grouped.items()}


def _point(metric: str, bucket: str, parts: Sequence[Tuple]) -> Point:
    n = sum(int(p[2]) for p in parts)
    total, squares = sum(float(p[3]) for p in parts), sum(float(p[4]) for p in parts)
    mean = total / n
    low = high = None
    if n >= 2:
        variance = max(0.0, (squares - n * mean * mean) / (n - 1))
        half = t_quantile(CONFIDENCE, n - 1) * math.sqrt(variance / n)
        low, high = max(0.0, mean - half), min(1.0, mean + half)
    return Point(metric, bucket, n, mean, low, high, tuple(sorted({p[1] for p in parts})))


def metric_points(store: RunStore, project: str, metric: str, *, since: str, step: str = "hour") -> List[Point]:
    """`metric`'s mean per bucket over the window, bands included, in time order."""
    width = BUCKETS[step]
    by_bucket: Dict[str, List[Tuple]] = {}
    for row in _aggregate(store, project, check_metric(metric), since, width):
        by_bucket.setdefault(row[0], []).append(row)
    return [_point(metric, bucket, parts) for bucket, parts in sorted(by_bucket.items())]


def deploys(store: RunStore, project: str, *, since: str) -> List[Deploy]:
    """Where service_version changes, in trace_end order (rows without a version are skipped)."""
    inner = _rows(store, f"{_version(store)} AS ver")
    rows = store.query(
        f"SELECT te, ver, prev FROM (SELECT te, ver, LAG(ver) OVER (ORDER BY te) AS prev FROM ({inner}) q "
        "WHERE te >= ? AND ver IS NOT NULL) w WHERE prev IS NOT NULL AND ver <> prev ORDER BY te",
        (project, _runs_since(since), since))
    return [Deploy(at=str(te), version=str(ver), previous=str(prev)) for te, ver, prev in rows]


def timeline(store: RunStore, project: str, *, days: int = WINDOW_DAYS, step: str = "hour",
             metrics: Optional[Sequence[str]] = None, now: Optional[datetime] = None) -> Timeline:
    """The project's points per metric and its deploys over the last `days` days."""
    if step not in BUCKETS:
        raise ValueError(f"step must be one of {', '.join(BUCKETS)}, not {step!r}")
    since = window_start(days, now)
    out = Timeline(project=project, since=since, step=step)
    if metrics is None:  # every metric the rows have, in one pass, in the order the newest run lists them
        found = all_points(store, project, since=since, step=step)
        order = [m for m in metrics_of(store, project, since) if m in found]
        out.points = {m: found[m] for m in order + sorted(set(found) - set(order))}
    for metric in metrics or ():
        points = metric_points(store, project, metric, since=since, step=step)
        if points:
            out.points[metric] = points
    out.deploys = deploys(store, project, since=since) if out.points else []
    return out


def samples_at(store: RunStore, project: str, bucket: str, *, limit: int = MAX_DRILL) -> List[Tuple[str, int]]:
    """(run id, sample index) of the rows behind one point (its bucket), in trace_end order, at most `limit`."""
    inner = _rows(store, "r.run_id AS run_id, r.idx AS idx")
    rows = store.query(
        f"SELECT run_id, idx FROM ({inner}) q WHERE substr(te, 1, ?) = ? ORDER BY te, run_id, idx LIMIT ?",
        (project, _runs_since(bucket), len(bucket), bucket, int(limit)))
    return [(str(run_id), int(idx)) for run_id, idx in rows]


def scored_rows(store: RunStore, project: str, metric: str, *, after: Optional[Tuple[str, str, int]] = None,
                since: Optional[str] = None, page: int = PAGE_ROWS) -> Iterator[ScoredRow]:
    """The project's rows scored on `metric`, in trace_end order, after the cursor `after` (exclusive)
    or from `since`; read `page` rows at a time so months of rows never sit in memory at once."""
    inner = _rows(store, f"r.run_id AS run_id, r.idx AS idx, {_score(store, check_metric(metric))} AS v")
    cursor = after or (since or "", "", -1)
    runs_since = _runs_since(cursor[0])
    while True:
        rows = store.query(
            f"SELECT te, run_id, idx, v FROM ({inner}) q WHERE v IS NOT NULL AND te IS NOT NULL AND "
            "(te > ? OR (te = ? AND (run_id > ? OR (run_id = ? AND idx > ?)))) ORDER BY te, run_id, idx LIMIT ?",
            (project, runs_since, cursor[0], cursor[0], cursor[1], cursor[1], cursor[2], int(page)))
        for te, run_id, idx, v in rows:
            yield ScoredRow(str(te), str(run_id), int(idx), float(v))
        if len(rows) < page:
            return
        cursor = (str(rows[-1][0]), str(rows[-1][1]), int(rows[-1][2]))


def last_rows(store: RunStore, project: str, metric: str, *, upto: Tuple[str, str, int], n: int) -> List[ScoredRow]:
    """The `n` rows at or before the cursor `upto`, oldest first (an alert window refilled after a restart)."""
    inner = _rows(store, f"r.run_id AS run_id, r.idx AS idx, {_score(store, check_metric(metric))} AS v")
    rows = store.query(
        f"SELECT te, run_id, idx, v FROM ({inner}) q WHERE v IS NOT NULL AND te IS NOT NULL AND "
        "(te < ? OR (te = ? AND (run_id < ? OR (run_id = ? AND idx <= ?)))) ORDER BY te DESC, run_id DESC, "
        "idx DESC LIMIT ?", (project, "", upto[0], upto[0], upto[1], upto[1], upto[2], int(n)))
    return [ScoredRow(str(te), str(run_id), int(idx), float(v)) for te, run_id, idx, v in reversed(rows)]


def run_mean(store: RunStore, run_id: str, metric: str) -> Optional[float]:
    """The mean of `metric` over one run's scored rows (a baseline), None when it has none."""
    inner = (f"SELECT {_score(store, check_metric(metric))} AS v FROM results r "
             "WHERE r.run_id = ?")
    rows = store.query(f"SELECT AVG(v), COUNT(v) FROM ({inner}) q", (run_id,))
    if not rows or not rows[0][1]:
        return None
    return float(rows[0][0])


__all__ = ["BUCKETS", "Deploy", "OVERALL", "Point", "ScoredRow", "Timeline", "WINDOW_DAYS", "all_points",
           "check_metric", "deploys", "last_rows", "live_projects", "metric_points", "metrics_of", "run_mean",
           "samples_at", "scored_rows", "timeline", "window_start"]
