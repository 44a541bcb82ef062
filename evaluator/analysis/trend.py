"""A project over time: each finished run's mean per metric with its 95% interval, and the runs whose
judge, model or dataset version changed (a step in the line may be the scorer's, not the pipeline's).

Runs are placed in order (`Point.order`, oldest first), each named on the axis by `tick` (its name, or its date
and time when it has none), not by wall-clock time: runs minutes apart and runs weeks apart are as readable.
Each point carries its scorer's label (store/naming.py), so the chart draws one series per scorer and a change
of scorer is never drawn as a drop of quality.

Read with one aggregate query over the narrow scores table (store/history.py m009), so a trend over 1,000
runs decodes no row: the sum, the sum of squares and the count per (run, metric).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence

from ..io.versions import VERSION_KEY
from ..store.history import RunInfo, RunStore
from ..store.naming import heuristics_word, host_of

# What marks a run on the chart: a change of any of these since the project's previous run.
MARKED = (("judge", "judge"), ("model", "model"), ("base_url", "judge endpoint"), ("heuristics", "heuristic set"),
          (VERSION_KEY, "dataset version"))
_Z = 1.96


@dataclass(frozen=True)
class Point:
    """One run's mean of one metric, with its 95% interval (normal approximation; None bounds for n < 2)."""

    metric: str
    run_id: str
    time: str
    label: str
    mean: float
    n: int
    low: Optional[float]
    high: Optional[float]
    scorer: str = ""  # who scored the run (store/naming.scorer_label): one series each
    order: int = 0  # the run's place, oldest first (1, 2, ...)
    tick: str = ""  # how the axis names the run (tick_of)

    def to_row(self) -> Dict[str, Any]:
        return {"metric": self.metric, "run": self.run_id, "time": self.time, "label": self.label,
                "mean": self.mean, "n": self.n, "low": self.mean if self.low is None else self.low,
                "high": self.mean if self.high is None else self.high, "scorer": self.scorer,
                "order": self.order, "tick": self.tick}


TICK_CHARS = 22  # an axis label longer than this is cut


def tick_of(order: int, info: RunInfo) -> str:
    """The axis label of the run at `order`: "#3 NAME" (cut with an ellipsis), or "#3 12-06 15:20" unnamed; the
    number keeps two runs of one name apart."""
    said = " ".join(info.name.split()) if info.name else info.created_at.replace("T", " ")[5:16]
    return f"#{order} " + (said if len(said) <= TICK_CHARS else said[:TICK_CHARS - 1] + "…")


@dataclass
class Trend:
    """A project's runs over time, oldest first: the points, and the runs that changed the scorer or data."""

    project: str
    runs: List[RunInfo]
    points: List[Point] = field(default_factory=list)
    changes: List[Dict[str, str]] = field(default_factory=list)  # {time, run, what, tick}

    @property
    def metrics(self) -> List[str]:
        return list(dict.fromkeys(p.metric for p in self.points))


def _marked(settings: Mapping[str, Any], key: str) -> str:
    value = settings.get(key)
    if key == "heuristics":
        return heuristics_word(settings)
    return host_of(str(value or "")) if key == "base_url" else str(value or "")


def changes(runs: Sequence[RunInfo]) -> List[Dict[str, str]]:
    """Each run (oldest first) whose judge, model, judge endpoint or dataset version differs from the run
    before it, with what changed in words."""
    found = []
    for place, (before, run) in enumerate(zip(runs, runs[1:]), start=2):
        said = [f"{what} {_marked(before.settings, key) or 'none'} → {_marked(run.settings, key) or 'none'}"
                for key, what in MARKED
                if key in before.settings and key in run.settings
                and _marked(before.settings, key) != _marked(run.settings, key)]
        if said:
            found.append({"time": run.created_at, "run": run.run_id, "what": "; ".join(said),
                          "tick": tick_of(place, run)})
    return found


def _interval(total: float, squares: float, n: int) -> tuple:
    mean = total / n
    if n < 2:
        return mean, None, None
    var = max(0.0, (squares - n * mean * mean) / (n - 1))
    half = _Z * (var / n) ** 0.5
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def project_trend(store: RunStore, project: str, limit: Optional[int] = None,
                  listed: Optional[Sequence[RunInfo]] = None) -> Trend:
    """The finished runs of `project`, oldest first (the newest `limit` when given), per metric. `listed`: the
    runs already read (newest first, as RunStore.list_runs gives them), so a page that lists them reads once."""
    found = store.list_runs(project=project) if listed is None else [r for r in listed if r.project == project]
    runs = [r for r in found if r.status == "finished"]
    runs = list(reversed(runs[:limit] if limit else runs))
    trend = Trend(project, runs, changes=changes(runs))
    if not runs:
        return trend
    by_id = {r.run_id: r for r in runs}
    marks = ",".join("?" for _ in runs)
    rows = store.query(
        f"SELECT run_id, metric, MIN(pos), SUM(score), SUM(score * score), COUNT(score) FROM scores "
        f"WHERE skipped = 0 AND score IS NOT NULL AND run_id IN ({marks}) GROUP BY run_id, metric",
        tuple(by_id))
    order = {r.run_id: i for i, r in enumerate(runs)}
    for run_id, metric, _pos, total, squares, n in sorted(rows, key=lambda r: (order[r[0]], r[2])):
        if not n:
            continue
        mean, low, high = _interval(float(total), float(squares), int(n))
        info = by_id[run_id]
        trend.points.append(Point(metric, run_id, info.created_at, info.label, round(mean, 4), int(n),
                                  None if low is None else round(low, 4), None if high is None else round(high, 4),
                                  scorer=info.scorer, order=order[run_id] + 1, tick=tick_of(order[run_id] + 1, info)))
    return trend
