"""Report charts (altair) and their PNG/SVG renderings (vl-convert, offline).

Only this module uses altair, and only inside functions, so the library imports without the
dashboard extras. Every chart is built from aggregates (one row per metric, per histogram bin or
per category), never from raw samples, so a 10,000-row report draws as fast as a 10-row one.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence

from .advice import BAND_COLORS, band
from .model import EvalReport
from .stats import MetricSummary, summarize

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import altair as alt

N_BINS = 10
MAX_CATEGORIES = 30
OTHER_CATEGORY = "(other)"
AXIS_TITLE = "score (0-1)"


def _altair():
    try:
        import altair
    except ImportError as exc:  # the library works without charts; say how to get them
        raise ImportError("Charts need altair: pip install 'ragmeter[dashboard]' (or pip install altair).") from exc
    return altair


def _band_scale(alt) -> Any:
    return alt.Scale(domain=list(BAND_COLORS), range=list(BAND_COLORS.values()))


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


def means_chart(report: EvalReport, *, summaries: Optional[Sequence[MetricSummary]] = None) -> "alt.LayerChart":
    """Per-metric mean bars, coloured by band, with ±1 std error bars.

    The tooltip shows mean, std, bootstrap 95% CI, scored/total and fallback count. Pass
    `summaries` (from `stats.summarize`) to avoid computing them twice.
    """
    alt = _altair()
    rows = means_rows(summaries if summaries is not None else summarize(report))
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("metric:N", sort=None, title=None, axis=alt.Axis(labelAngle=-30)),
    )
    tooltip = [
        alt.Tooltip("metric:N"), alt.Tooltip("mean:Q", format=".3f"), alt.Tooltip("std:Q", format=".3f"),
        alt.Tooltip("ci:N", title="bootstrap 95% CI"), alt.Tooltip("scored:N", title="scored/total"),
        alt.Tooltip("fallbacks:Q", title="heuristic fallbacks"),
    ]
    bars = base.mark_bar().encode(
        y=alt.Y("mean:Q", scale=alt.Scale(domain=[0, 1]), title=AXIS_TITLE),
        color=alt.Color("band:N", scale=_band_scale(alt), title="band"),
        tooltip=tooltip,
    )
    whiskers = base.mark_errorbar(ticks=True, color="#1f2328").encode(
        y=alt.Y("low:Q", title=AXIS_TITLE), y2="high:Q", tooltip=tooltip,
    )
    return (bars + whiskers).properties(title="Mean score per metric (±1 std)", width=alt.Step(60), height=260)


def histogram_rows(report: EvalReport, n_bins: int = N_BINS) -> List[Dict[str, Any]]:
    """Counts of scores per metric in `n_bins` equal bins over [0, 1] (a score of 1 goes in the last)."""
    rows = []
    for name in report.metric_names():
        counts = Counter(min(int(v * n_bins), n_bins - 1) for v in report.values(name))
        for i in range(n_bins):
            rows.append({"metric": name, "bin_start": i / n_bins, "bin_end": (i + 1) / n_bins, "count": counts.get(i, 0)})
    return rows


def distribution_chart(report: EvalReport) -> "alt.FacetChart":
    """A pre-binned score histogram per metric, as small multiples."""
    alt = _altair()
    order = report.metric_names()
    chart = alt.Chart(alt.Data(values=histogram_rows(report))).mark_bar().encode(
        x=alt.X("bin_start:Q", bin="binned", scale=alt.Scale(domain=[0, 1]), title=AXIS_TITLE),
        x2="bin_end:Q",
        y=alt.Y("count:Q", title="samples"),
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("bin_start:Q", title="from", format=".1f"),
                 alt.Tooltip("bin_end:Q", title="to", format=".1f"), alt.Tooltip("count:Q")],
    ).properties(width=180, height=120)
    return chart.facet(facet=alt.Facet("metric:N", sort=order, title=None), columns=3).properties(
        title="Score distribution per metric"
    )


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


def category_chart(report: EvalReport) -> "Optional[alt.LayerChart]":
    """A category x metric heatmap of mean scores, or None when no sample has a category."""
    rows = category_rows(report)
    if not rows:
        return None
    alt = _altair()
    base = alt.Chart(alt.Data(values=rows)).encode(
        x=alt.X("metric:N", sort=report.metric_names(), title=None, axis=alt.Axis(labelAngle=-30)),
        y=alt.Y("category:N", title="category"),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("mean:Q", scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), title="mean"),
        tooltip=[alt.Tooltip("category:N"), alt.Tooltip("metric:N"), alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("n:Q", title="scored")],
    )
    labels = base.mark_text(fontSize=11).encode(text=alt.Text("mean:Q", format=".2f"))
    return (cells + labels).properties(title="Mean score by category", width=alt.Step(70), height=alt.Step(24))


def _vl_convert():
    try:
        import vl_convert
    except ImportError as exc:
        raise ImportError("PNG/SVG export needs vl-convert: pip install vl-convert-python.") from exc
    return vl_convert


def _spec(chart: Any) -> Dict[str, Any]:
    return chart if isinstance(chart, dict) else chart.to_dict()


def chart_png(chart: Any, scale: float = 2) -> bytes:
    """The chart (altair chart or vega-lite dict) as PNG bytes, rendered offline."""
    return _vl_convert().vegalite_to_png(_spec(chart), scale=scale)


def chart_svg(chart: Any) -> str:
    """The chart (altair chart or vega-lite dict) as an SVG document, rendered offline."""
    return _vl_convert().vegalite_to_svg(_spec(chart))
