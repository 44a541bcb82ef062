"""A stored run read the way a page needs it: aggregates from SQL, 50 rows at a time, one row for a drill-down.

Nothing here decodes every row of a run: `summary` is SQL aggregates over the narrow `scores` table
(m009), `page` counts the matching rows in SQL and decodes only the rows of the page it returns,
and `row` decodes one. So a page over a 200,000-row run costs about what it costs over 100 rows.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

from ..model import EvalResult, MetricScore
from .history import RunStore, result_from_row

N_BINS = 10  # histogram bins over [0, 1]; a score of 1 goes in the last (as analysis/aggregate.py)
PAGE_SIZE = 50
SORTS = ("asc", "desc")


@dataclass(frozen=True)
class MetricAggregate:
    """One metric over a run: rows, scored rows, mean, std, min, max, histogram counts and methods."""

    name: str
    n_total: int
    n_scored: int
    mean: Optional[float]
    std: Optional[float]
    low: Optional[float]
    high: Optional[float]
    bins: Tuple[int, ...] = ()
    methods: Dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Aggregates:
    """A run's figures from SQL: its rows, the mean of their overall scores, and each metric's aggregate."""

    n_rows: int
    n_overall: int
    overall_mean: Optional[float]
    metrics: List[MetricAggregate]


def _std(n: int, total: Optional[float], squares: Optional[float]) -> Optional[float]:
    """Sample standard deviation from a count, a sum and a sum of squares (None under two values)."""
    if n < 2 or total is None or squares is None:
        return None
    return math.sqrt(max(0.0, (squares - total * total / n) / (n - 1)))


def _round(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(float(value), 4)


def _bin(dialect: str) -> str:
    # PostgreSQL's CAST rounds, SQLite's truncates: FLOOR there, the cast here (scores are >= 0).
    scaled = f"score * {N_BINS}"
    floor = f"CAST(FLOOR({scaled}) AS INTEGER)" if dialect == "postgresql" else f"CAST({scaled} AS INTEGER)"
    return f"CASE WHEN score >= 1 THEN {N_BINS - 1} ELSE {floor} END"


def summary(store: RunStore, run_id: str) -> Aggregates:
    """Per metric n, mean, std, min/max, histogram and methods, and the overall mean: SQL aggregates only."""
    n_rows, n_overall, overall = store.query(
        "SELECT COUNT(*), COUNT(overall), AVG(overall) FROM results WHERE run_id = ?", (run_id,))[0]
    figures = store.query(
        "SELECT metric, MIN(pos), COUNT(score), SUM(score), SUM(score * score), MIN(score), MAX(score) "
        "FROM scores WHERE run_id = ? GROUP BY metric ORDER BY MIN(pos), metric", (run_id,))
    bins: Dict[str, List[int]] = {}
    for metric, b, count in store.query(f"SELECT metric, {_bin(store.dialect)} AS b, COUNT(*) FROM scores "
                                        "WHERE run_id = ? AND score IS NOT NULL GROUP BY metric, b", (run_id,)):
        bins.setdefault(metric, [0] * N_BINS)[int(b)] += int(count)
    methods: Dict[str, Dict[str, int]] = {}
    for metric, method, count in store.query(
            "SELECT metric, method, COUNT(*) FROM scores WHERE run_id = ? GROUP BY metric, method", (run_id,)):
        methods.setdefault(metric, {})[method] = int(count)
    metrics = [MetricAggregate(name, n_rows, n, _round(total / n) if n else None, _round(_std(n, total, squares)),
                               _round(low), _round(high), tuple(bins.get(name, [0] * N_BINS)), methods.get(name, {}))
               for name, _, n, total, squares, low, high in figures]
    return Aggregates(int(n_rows), int(n_overall), _round(overall), metrics)


@dataclass(frozen=True)
class Filters:
    """What the Samples table keeps: `text` in question/answer/id, a category, `metric` <= `at_most`
    (skipped scores never match; "overall" is the row's overall), any metric scored by one of `methods`."""

    text: str = ""
    categories: Sequence[str] = ()
    metric: Optional[str] = None
    at_most: float = 1.0
    methods: Sequence[str] = ()


def _field(dialect: str, name: str) -> str:
    """A sample field of a row: from its run's sample, else from a full (pre-m003) or embedding record."""
    if dialect == "postgresql":
        return (f"COALESCE(s.record::jsonb ->> '{name}', r.record::jsonb ->> '{name}', "
                f"r.record::jsonb -> 'sample' ->> '{name}')")
    return (f"COALESCE(json_extract(s.record, '$.{name}'), json_extract(r.record, '$.{name}'), "
            f"json_extract(r.record, '$.sample.{name}'))")


def _like(text: str) -> str:
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _where(dialect: str, run_id: str, f: Filters) -> Tuple[str, List[object]]:
    where: List[str] = ["r.run_id = ?"]
    params: List[object] = [run_id]
    if f.text:
        like = "ILIKE" if dialect == "postgresql" else "LIKE"  # SQLite's LIKE ignores ASCII case already
        where.append("(" + " OR ".join(f"COALESCE({_field(dialect, n)}, '') {like} ? ESCAPE '\\'"
                                       for n in ("question", "answer")) + " OR COALESCE(r.sample_id, '') "
                     f"{like} ? ESCAPE '\\')")
        params += [_like(f.text)] * 3
    if f.categories:
        where.append(f"{_field(dialect, 'category')} IN ({', '.join('?' * len(f.categories))})")
        params += [str(c) for c in f.categories]
    if f.metric == "overall":  # the row's own mean (results.overall), not a metric's score row
        where.append("r.overall IS NOT NULL AND r.overall <= ?")
        params.append(f.at_most + 1e-9)
    elif f.metric:
        where.append("EXISTS (SELECT 1 FROM scores m WHERE m.run_id = r.run_id AND m.idx = r.idx AND m.metric = ? "
                     "AND m.score IS NOT NULL AND m.score <= ?)")
        params += [f.metric, f.at_most + 1e-9]
    if f.methods:
        where.append("EXISTS (SELECT 1 FROM scores m WHERE m.run_id = r.run_id AND m.idx = r.idx AND m.method IN "
                     f"({', '.join('?' * len(f.methods))}))")
        params += list(f.methods)
    return " AND ".join(where), params


def _order(sort: Tuple[str, str]) -> Tuple[str, str, List[object]]:
    """(join, ORDER BY, join params) for sorting by "idx", "overall" or a metric; unscored rows last."""
    key, way = sort
    if way not in SORTS:
        raise ValueError(f"sort direction must be one of {', '.join(SORTS)}, not {way!r}")
    if key == "idx":
        return "", f"r.idx {way}", []
    if key == "overall":
        return "", f"(r.overall IS NULL), r.overall {way}, r.idx", []
    join = "LEFT JOIN scores o ON o.run_id = r.run_id AND o.idx = r.idx AND o.metric = ?"
    return join, f"(o.score IS NULL), o.score {way}, r.idx", [key]


def _language(store: RunStore, run_id: str) -> str:
    rows = store.query("SELECT settings FROM runs WHERE run_id = ?", (run_id,))
    return (json.loads(rows[0][0] or "{}").get("language") or "auto") if rows else "auto"


def page(store: RunStore, run_id: str, *, offset: int = 0, limit: int = PAGE_SIZE,
         sort: Tuple[str, str] = ("idx", "asc"), filters: Filters = Filters()) -> Tuple[List[Tuple[int, EvalResult]], int]:
    """((index, result) of the rows in this page, the number of rows matching `filters`)."""
    where, params = _where(store.dialect, run_id, filters)
    join, order, join_params = _order(sort)
    base = f"FROM results r LEFT JOIN samples s ON s.run_id = r.run_id AND s.idx = r.idx {{join}} WHERE {where}"
    total = store.query("SELECT COUNT(*) " + base.format(join=""), tuple(params))[0][0]
    rows = store.query(f"SELECT r.idx, r.compact, r.record, s.record {base.format(join=join)} ORDER BY {order} "
                       "LIMIT ? OFFSET ?", tuple(join_params + params + [max(0, limit), max(0, offset)]))
    language = _language(store, run_id)
    return [(idx, result_from_row(compact, text, sample, language)) for idx, compact, text, sample in rows], int(total)


def row(store: RunStore, run_id: str, idx: int) -> Optional[EvalResult]:
    """One row's result with its sample (a drill-down's detail); None when the run has no result there."""
    found = store.query("SELECT r.compact, r.record, s.record FROM results r LEFT JOIN samples s ON "
                        "s.run_id = r.run_id AND s.idx = r.idx WHERE r.run_id = ? AND r.idx = ?", (run_id, idx))
    if not found:
        return None
    compact, text, sample = found[0]
    return result_from_row(compact, text, sample, _language(store, run_id))


def worst_rows(store: RunStore, run_id: str, limit: int) -> List[Tuple[int, EvalResult]]:
    """(index, result) of the `limit` rows with the lowest overall score (an unscored row counts as 0; of equal
    ones, the first), worst first: what the HTML report embeds, read without decoding the rest of the run."""
    rows = store.query("SELECT r.idx, r.compact, r.record, s.record FROM results r LEFT JOIN samples s ON "
                       "s.run_id = r.run_id AND s.idx = r.idx WHERE r.run_id = ? ORDER BY COALESCE(r.overall, 0), r.idx "
                       "LIMIT ?", (run_id, max(0, limit)))
    language = _language(store, run_id)
    return [(idx, result_from_row(compact, text, sample, language)) for idx, compact, text, sample in rows]


def light_results(store: RunStore, run_id: str, metrics: Optional[Sequence[str]] = None,
                  ) -> List[Tuple[int, EvalResult]]:
    """(index, result) of every row, each holding only its scores on `metrics` (default all) as the narrow table
    keeps them: score, method, the judge's and the heuristic's parts and the judge's spread; no sample, no text.
    What review queues and the reviewers' agreement need of a whole run, without decoding its records."""
    chosen = list(metrics) if metrics is not None else None
    if chosen == []:
        return []
    where = "" if chosen is None else f" AND metric IN ({', '.join('?' * len(chosen))})"
    rows = store.query("SELECT idx, metric, score, method, skipped, llm_score, heuristic_score, llm_std FROM scores "
                       f"WHERE run_id = ?{where} ORDER BY idx, pos", (run_id, *(chosen or ())))
    by_index: Dict[int, Dict[str, MetricScore]] = {}
    for idx, metric, score, method, skipped, llm, heuristic, std in rows:
        by_index.setdefault(idx, {})[metric] = MetricScore(
            metric, 0.0 if score is None else score, skipped=bool(skipped), method=method, llm_score=llm,
            heuristic_score=heuristic, llm_std=std)
    return [(idx, EvalResult(None, scores=scores)) for idx, scores in by_index.items()]


def reviewable_metrics(store: RunStore, run_id: str, *, exclude_method: str) -> List[str]:
    """The metrics with at least one score not skipped and not made by `exclude_method` (rule), in chosen order."""
    return [m for m, _ in store.query(
        "SELECT metric, MIN(pos) FROM scores WHERE run_id = ? AND skipped = 0 AND method <> ? GROUP BY metric "
        "ORDER BY MIN(pos), metric", (run_id, exclude_method))]
