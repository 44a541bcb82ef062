"""The aggregates every chart and table is drawn from: one row per metric, per histogram bin or per
category (plain dicts, no plotting library), so a 10,000-row report draws as fast as a 10-row one."""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Sequence

from ..model import EvalReport
from .bands import band
from .stats import MetricSummary

N_BINS = 10
MAX_CATEGORIES = 30
OTHER_CATEGORY = "(other)"


def _fmt(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def means_rows(summaries: Sequence[MetricSummary]) -> List[Dict[str, Any]]:
    """One row per scored metric: mean, ±1 std whiskers clipped to [0, 1], CI and counts as text."""
    rows = []
    for s in summaries:
        if s.mean is None:
            continue
        std = s.std or 0.0
        rows.append({
            "metric": s.name, "mean": s.mean, "std": std,
            "low": max(0.0, s.mean - std), "high": min(1.0, s.mean + std),
            "band": band(s.mean),
            "ci": f"{_fmt(s.ci_low)} - {_fmt(s.ci_high)}",
            "scored": f"{s.n_scored}/{s.n_total}",
            "fallbacks": s.n_fallback,
        })
    return rows


def histogram_rows(report: EvalReport, n_bins: int = N_BINS) -> List[Dict[str, Any]]:
    """Counts of scores per metric in `n_bins` equal bins over [0, 1] (a score of 1 goes in the last)."""
    rows = []
    for name in report.metric_names():
        counts = Counter(min(int(v * n_bins), n_bins - 1) for v in report.values(name))
        for i in range(n_bins):
            rows.append({"metric": name, "bin_start": i / n_bins, "bin_end": (i + 1) / n_bins, "count": counts.get(i, 0)})
    return rows


def _category_of(result) -> Optional[str]:
    category = result.sample.category if result.sample is not None else None
    return str(category) if category not in (None, "") else None


def category_rows(report: EvalReport, max_categories: int = MAX_CATEGORIES) -> List[Dict[str, Any]]:
    """Mean score per (category, metric); categories beyond the `max_categories` largest are pooled."""
    sizes = Counter(c for c in map(_category_of, report.results) if c is not None)
    kept = {c for c, _ in sizes.most_common(max_categories)}
    sums: Dict[tuple, List[float]] = defaultdict(lambda: [0.0, 0])
    for result in report.results:
        category = _category_of(result)
        if category is None:
            continue
        category = category if category in kept else OTHER_CATEGORY
        for name, ms in result.metric_scores().items():
            if not ms.skipped:
                cell = sums[(category, name)]
                cell[0] += ms.score
                cell[1] += 1
    return [{"category": c, "metric": m, "mean": round(total / n, 4), "n": n}
            for (c, m), (total, n) in sorted(sums.items())]
