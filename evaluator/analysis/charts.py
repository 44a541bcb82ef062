"""Report charts (altair) and their PNG/SVG renderings (vl-convert, offline).

Only this module uses altair, and only inside functions, so the library imports without the
dashboard extras. Every chart is built from aggregates (analysis/aggregate.py: one row per metric, per
histogram bin or per category), never from raw samples, so a 10,000-row report draws as fast as a 10-row one.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple

from . import render
from .aggregate import category_rows, histogram_rows, means_rows
from .bands import BAND_COLORS
from .stats import MetricSummary, summarize
from ..model import EvalReport
from ..safetext import drawable, drawable_value

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    import altair as alt

AXIS_TITLE = "score (0-1)"
MEANS_WIDTH = 560  # px in exports; the dashboard stretches the chart to its column


def _altair():
    try:
        import altair
    except ImportError as exc:  # the library works without charts; say how to get them
        raise ImportError("Charts need altair: pip install 'ragmeter[dashboard]' (or pip install altair).") from exc
    return altair


def _data(alt, rows: Sequence[Dict[str, Any]]) -> Any:
    """A chart's rows, their text made drawable (safetext.drawable): the dashboard draws these specs in the browser,
    where a bidi control in a category or run label would reorder it; the files go through render.py as well."""
    return alt.Data(values=drawable_value(list(rows)))


def _band_scale(alt) -> Any:
    return alt.Scale(domain=list(BAND_COLORS), range=list(BAND_COLORS.values()))


def means_chart(report: Optional[EvalReport], *, summaries: Optional[Sequence[MetricSummary]] = None,
                step: int = 44, legend: bool = True) -> "alt.LayerChart":
    """Per-metric mean bars, coloured by band, with ±1 std error bars and the mean written beside.

    Bars are horizontal so every metric name reads in full. The tooltip shows mean, std,
    bootstrap 95% CI, scored/total and fallback count. Pass `summaries` (from
    `stats.summarize`) to avoid computing them twice. `step` is each metric's row height in px; `legend=False`
    leaves the band legend to the page (the dashboard draws it once under its charts).
    """
    alt = _altair()
    if summaries is None:
        assert report is not None, "means_chart needs a report or its summaries"
        summaries = summarize(report)
    rows = means_rows(summaries)
    score = alt.Scale(domain=[0, 1])
    base = alt.Chart(_data(alt, rows)).encode(
        y=alt.Y("metric:N", sort=None, title=None, axis=alt.Axis(labelLimit=220, labelFontSize=12, ticks=False)),
    )
    tooltip = [
        alt.Tooltip("metric:N"), alt.Tooltip("mean:Q", format=".3f"), alt.Tooltip("std:Q", format=".3f"),
        alt.Tooltip("ci:N", title="bootstrap 95% CI"), alt.Tooltip("scored:N", title="scored/total"),
        alt.Tooltip("fallbacks:Q", title="heuristic fallbacks"),
    ]
    bars = base.mark_bar(height={"band": 0.7}, cornerRadiusEnd=2).encode(
        x=alt.X("mean:Q", scale=score, title=AXIS_TITLE, axis=alt.Axis(values=[0, 0.5, 0.7, 0.9, 1], format=".1f")),
        color=alt.Color("band:N", scale=_band_scale(alt), title="band",
                        legend=alt.Legend(orient="bottom") if legend else None),
        tooltip=tooltip,
    )
    whiskers = base.mark_errorbar(ticks=alt.MarkConfig(size=9), color="#1f2328", thickness=1.5).encode(
        x=alt.X("low:Q", scale=score, title=AXIS_TITLE), x2="high:Q", tooltip=tooltip,
    )
    # The value sits just right of the bar end: the reader gets the number without hovering.
    labels = base.mark_text(align="left", dx=4, dy=-9, fontSize=11, color="#1f2328").encode(
        x="mean:Q", text=alt.Text("mean:Q", format=".3f"),
    )
    return (bars + whiskers + labels).properties(
        title="Mean score per metric (±1 std)", height=alt.Step(step), width=MEANS_WIDTH,
    )


def calibration_chart(agreement: Dict[str, Any]) -> "Optional[alt.Chart]":
    """Mean score per human-label bin, one line per metric (on the diagonal = well calibrated).

    `agreement` is `agreement.agreement_table(report)`; None when no metric has a calibration bin.
    """
    rows = [{"metric": a.metric, "label": b.low if b.low == b.high else (b.low + b.high) / 2,
             "mean score": b.mean_score, "rows": b.n}
            for a in agreement.values() for b in a.calibration if b.mean_score is not None]
    if not rows:
        return None
    alt = _altair()
    unit, ticks = alt.Scale(domain=[0, 1]), alt.Axis(values=[0, 0.25, 0.5, 0.75, 1], format=".2f")
    return alt.Chart(_data(alt, rows)).mark_line(point=True).encode(
        x=alt.X("label:Q", title="human label (scaled 0-1)", scale=unit, axis=ticks),
        y=alt.Y("mean score:Q", scale=unit, axis=ticks),
        color="metric:N", tooltip=["metric:N", "label:Q", alt.Tooltip("mean score:Q", format=".3f"), "rows:Q"],
    ).properties(title="Calibration: mean score per human label", height=260)


def distribution_chart(report: EvalReport) -> "alt.FacetChart":
    """A pre-binned score histogram per metric, as small multiples."""
    return histogram_chart(histogram_rows(report), report.metric_names())


def histogram_chart(rows: Sequence[Dict[str, Any]], order: Sequence[str]) -> "alt.FacetChart":
    """`distribution_chart` from its rows (aggregate.histogram_rows, or a stored run summary's)."""
    alt = _altair()
    chart = alt.Chart(_data(alt, list(rows))).mark_bar().encode(
        x=alt.X("bin_start:Q", bin="binned", scale=alt.Scale(domain=[0, 1]), title=AXIS_TITLE),
        x2="bin_end:Q",
        y=alt.Y("count:Q", title="samples"),
        tooltip=[alt.Tooltip("metric:N"), alt.Tooltip("bin_start:Q", title="from", format=".1f"),
                 alt.Tooltip("bin_end:Q", title="to", format=".1f"), alt.Tooltip("count:Q")],
    ).properties(width=180, height=120)
    return chart.facet(facet=alt.Facet("metric:N", sort=list(order), title=None), columns=3).properties(
        title="Score distribution per metric"
    )


def category_chart(report: EvalReport) -> "Optional[alt.LayerChart]":
    """A category x metric heatmap of mean scores, or None when no sample has a category."""
    return category_heatmap(category_rows(report), report.metric_names())


def category_heatmap(rows: Sequence[Dict[str, Any]], order: Sequence[str]) -> "Optional[alt.LayerChart]":
    """`category_chart` from its rows (aggregate.category_rows, or a stored run summary's); None without rows."""
    if not rows:
        return None
    alt = _altair()
    base = alt.Chart(_data(alt, list(rows))).encode(
        x=alt.X("metric:N", sort=list(order), title=None, axis=alt.Axis(labelAngle=-30, labelLimit=0)),
        y=alt.Y("category:N", title="category", axis=alt.Axis(labelLimit=240)),
    )
    cells = base.mark_rect().encode(
        color=alt.Color("mean:Q", scale=alt.Scale(domain=[0, 1], scheme="redyellowgreen"), title="mean"),
        tooltip=[alt.Tooltip("category:N"), alt.Tooltip("metric:N"), alt.Tooltip("mean:Q", format=".3f"),
                 alt.Tooltip("n:Q", title="scored")],
    )
    labels = base.mark_text(fontSize=11).encode(text=alt.Text("mean:Q", format=".2f"))
    return (cells + labels).properties(title="Mean score by category", width=alt.Step(70), height=alt.Step(24))


def _spec(chart: Any) -> Dict[str, Any]:
    return chart if isinstance(chart, dict) else chart.to_dict()


def chart_png(chart: Any, scale: float = 2, max_height: Optional[int] = None) -> bytes:
    """The chart (altair chart or vega-lite dict) as PNG bytes, rendered offline (render.py: its text made
    drawable, in a child process; RenderError when it cannot be made); drawn smaller when it would be taller
    than `max_height` pixels (a trend of many metrics is then still one screen or page to read)."""
    png = render.render(render.RenderJob("png", _spec(chart), scale))
    height = png_size(png)[1]
    if max_height is None or height <= max_height:
        return png
    return render.render(render.RenderJob("png", _spec(chart), scale * max_height / height * 0.995))


def png_size(png: bytes) -> Tuple[int, int]:
    """(width, height) in pixels, read from the PNG's header (its IHDR chunk)."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def chart_svg(chart: Any) -> str:
    """The chart (altair chart or vega-lite dict) as an SVG document, rendered offline (as chart_png)."""
    return chart_svgs([chart])[0]


def chart_svgs(specs: Sequence[Any]) -> List[str]:
    """Several charts as SVG documents, drawn by one renderer child (an export's charts: one cold start)."""
    return [svg.decode("utf-8") for svg in render.render_all([render.RenderJob("svg", _spec(c)) for c in specs])]


def timeline_chart(metric: str, rows: Sequence[Dict[str, Any]], deploys: Sequence[Dict[str, Any]] = (),
                   alerts: Sequence[Dict[str, Any]] = ()) -> "alt.LayerChart":
    """One metric over time (the Monitor page): the mean per hour or day as a line of points, its 95%
    band as a shaded area, and each deploy as a dashed rule. A row is {time, mean, low, high, n, run,
    href}: clicking a point opens `href` (its run's report); a deploy is {at, version, previous}; an alert, drawn as a
    triangle at the window's mean, is {at, value, state, rule}."""
    alt = _altair()
    data = _data(alt, list(rows))
    time_axis = alt.X("time:T", title=None, axis=alt.Axis(format="%b %d %H:%M", labelAngle=0))
    score = alt.Scale(domain=[0, 1])
    band = alt.Chart(data).mark_area(opacity=0.18, color="#4c78a8").encode(
        x=time_axis, y=alt.Y("low:Q", scale=score, title="mean (95% band)"), y2="high:Q")
    tooltip = [alt.Tooltip("time:T", format="%Y-%m-%d %H:%M", title="from"), alt.Tooltip("mean:Q", format=".3f"),
               alt.Tooltip("low:Q", format=".3f"), alt.Tooltip("high:Q", format=".3f"),
               alt.Tooltip("n:Q", title="scored samples"), alt.Tooltip("run:N")]
    line = alt.Chart(data).mark_line(point=alt.OverlayMarkDef(size=40, cursor="pointer"), color="#4c78a8").encode(
        x=time_axis, y=alt.Y("mean:Q", scale=score), href="href:N", tooltip=tooltip)
    layers = [band, line]
    if deploys:
        marks = alt.Chart(_data(alt, list(deploys))).mark_rule(color="#cc0000", strokeDash=[4, 3]).encode(
            x="at:T", tooltip=[alt.Tooltip("version:N", title="deploy"), alt.Tooltip("previous:N", title="after"),
                               alt.Tooltip("at:T", format="%Y-%m-%d %H:%M:%S")])
        layers.append(marks)
    if alerts:
        states = alt.Scale(domain=["breach", "recovered"], range=["#cc0000", "#1b7f3b"])
        triangle = {"shape": "triangle-down", "size": 120, "filled": True}
        fired = alt.Chart(_data(alt, list(alerts))).mark_point(**triangle).encode(
            x="at:T", y=alt.Y("value:Q", scale=score),
            color=alt.Color("state:N", scale=states, title="alert", legend=alt.Legend(orient="bottom")),
            tooltip=[alt.Tooltip("state:N"), alt.Tooltip("rule:N"), alt.Tooltip("value:Q", format=".3f", title="mean"),
                     alt.Tooltip("at:T", format="%Y-%m-%d %H:%M:%S")])
        layers.append(fired)
    return alt.layer(*layers).properties(title=alt.TitleParams(metric, anchor="start", fontSize=14),
                                         height=220, padding={"top": 12, "left": 5, "right": 5, "bottom": 5})


# --- provenance, comparison and trend (issue 40) --------------------------------------------------------
CAPTION_COLOR = "#57606a"


def captioned(chart: Any, provenance: Any) -> Dict[str, Any]:
    """The chart's vega-lite spec with its provenance (provenance.Provenance) as a caption under it, so an
    exported PNG/SVG/PDF says which data, how many rows, which judge, when, which run and which ragmeter."""
    spec = _spec(chart)
    outer: Dict[str, Any] = {k: spec.pop(k) for k in ("$schema", "datasets", "config") if k in spec}
    first, *rest = provenance.lines()
    return {**outer, "vconcat": [spec], "padding": 8,
            "title": {"text": first, "subtitle": rest, "orient": "bottom", "anchor": "start", "fontSize": 10,
                      "fontWeight": "normal", "subtitleFontSize": 10, "color": CAPTION_COLOR,
                      "subtitleColor": CAPTION_COLOR, "offset": 10}}


def chart_pdf(chart: Any, what: str = "chart") -> bytes:
    """The chart (altair chart or vega-lite dict) as a one-page PDF with real, selectable text, rendered
    offline by vl-convert (text shaped and laid out right to left where the script needs it; as chart_png)."""
    return render.render(render.RenderJob("pdf", _spec(chart), what=what))


def svg_and_vega(chart: Any) -> Tuple[str, Dict[str, Any]]:
    """The chart as an SVG document (to measure it) and compiled to vega (where a page's size can be fixed:
    autosize "none"), both from one renderer child: a child's cold start (about 1.5 s) is most of a render."""
    svg, vega = render.render_all([render.RenderJob("svg", _spec(chart), what="PDF summary"),
                                   render.RenderJob("vega", _spec(chart), what="PDF summary")])
    return svg.decode("utf-8"), dict(json.loads(vega))


def vega_pdf(vega: Dict[str, Any]) -> bytes:
    """A vega spec as a one-page PDF, sized as the spec says."""
    return render.render(render.RenderJob("vega-pdf", vega, what="PDF summary"))


def chart_bytes(chart: Any, ext: str, max_height: Optional[int] = None) -> bytes:
    """The chart in the format its file extension names: png, svg or pdf (a PNG at most `max_height` px tall)."""
    ext = ext.lower().lstrip(".")
    if ext == "png":
        return chart_png(chart, max_height=max_height)
    if ext == "svg":
        return chart_svg(chart).encode("utf-8")
    if ext == "pdf":
        return chart_pdf(chart)
    raise ValueError(f"a chart is written as .png, .svg or .pdf, not .{ext}")


VERDICT_COLORS = {"better": "#1b7f3b", "worse": "#cc0000", "no clear change": "#6e7781",
                  "not comparable": "#afb8c1"}  # analysis/decision.py's words


def compare_rows(cmp: Any, alpha: float = 0.05) -> List[Dict[str, Any]]:
    """Per metric of a RunComparison: both means with their 95% intervals, the paired difference with its CI,
    and the decision (the same words as `ragmeter compare`: analysis/decision.py)."""
    rows = []
    for d in cmp.metrics:
        if d.delta is None:
            continue
        ha, hb = d.half_a or 0.0, d.half_b or 0.0
        rows.append({"metric": d.metric, "baseline": d.mean_a, "candidate": d.mean_b,
                     "a_low": max(0.0, d.mean_a - ha), "a_high": min(1.0, d.mean_a + ha),
                     "b_low": max(0.0, d.mean_b - hb), "b_high": min(1.0, d.mean_b + hb),
                     "delta": d.delta, "low": d.ci_low if d.ci_low is not None else d.delta,
                     "high": d.ci_high if d.ci_high is not None else d.delta, "pairs": d.n_pairs,
                     "decision": cmp.decision(d, alpha)})
    return rows


def compare_chart(rows: Sequence[Dict[str, Any]], baseline: str = "baseline", candidate: str = "candidate") -> "alt.HConcatChart":
    """Two panels per metric: a dumbbell of the baseline's and the candidate's means with their 95% intervals,
    and a forest plot of the paired difference (candidate − baseline) with its bootstrap 95% CI and a rule at 0."""
    alt = _altair()
    data = _data(alt, list(rows))
    y = alt.Y("metric:N", sort=None, title=None, axis=alt.Axis(labelLimit=220, labelFontSize=12))
    unit = alt.Scale(domain=[0, 1])
    long_rows = [{"metric": r["metric"], "run": who, "mean": r[key], "low": r[f"{p}_low"], "high": r[f"{p}_high"]}
                 for r in rows for who, key, p in ((f"baseline: {baseline}", "baseline", "a"),
                                                   (f"candidate: {candidate}", "candidate", "b"))]
    sides = _data(alt, long_rows)
    colors = alt.Scale(range=["#8c959f", "#0969da"])
    link = alt.Chart(data).mark_rule(color="#d0d7de", strokeWidth=3).encode(y=y, x=alt.X("baseline:Q", scale=unit),
                                                                          x2="candidate:Q")
    bars = alt.Chart(sides).mark_errorbar(ticks=True).encode(
        y=y, x=alt.X("low:Q", scale=unit, title="mean (95% interval)"), x2="high:Q",
        color=alt.Color("run:N", scale=colors, title=None, legend=alt.Legend(orient="bottom", direction="vertical",
                                                                            labelLimit=560)))
    dots = alt.Chart(sides).mark_point(filled=True, size=80).encode(
        y=y, x=alt.X("mean:Q", scale=unit), color=alt.Color("run:N", scale=colors),
        tooltip=["metric:N", "run:N", alt.Tooltip("mean:Q", format=".3f")])
    means = alt.layer(link, bars, dots).properties(title="Means", width=300, height=alt.Step(36))
    used = [d for d in VERDICT_COLORS if any(r["decision"] == d for r in rows)]  # the legend lists only these
    verdicts = alt.Scale(domain=used, range=[VERDICT_COLORS[d] for d in used])
    zero = alt.Chart(alt.Data(values=[{"x": 0}])).mark_rule(color="#1f2328", strokeDash=[3, 3]).encode(x="x:Q")
    ci = alt.Chart(data).mark_errorbar(ticks=True, thickness=2).encode(
        y=y, x=alt.X("low:Q", title="candidate − baseline (95% CI)"), x2="high:Q",
        color=alt.Color("decision:N", scale=verdicts, title="decision", legend=alt.Legend(orient="bottom")))
    point = alt.Chart(data).mark_point(filled=True, size=80, shape="diamond").encode(
        y=y, x="delta:Q", color=alt.Color("decision:N", scale=verdicts),
        tooltip=["metric:N", alt.Tooltip("delta:Q", format="+.3f"), alt.Tooltip("low:Q", format="+.3f"),
                 alt.Tooltip("high:Q", format="+.3f"), "pairs:Q", "decision:N"])
    diff = alt.layer(zero, ci, point).properties(title="Difference", width=260, height=alt.Step(36))
    return alt.hconcat(means, diff).resolve_scale(color="independent").properties(
        title=alt.TitleParams(drawable(f"{candidate} (candidate) against {baseline} (baseline)"), anchor="start"))


def trend_chart(rows: Sequence[Dict[str, Any]], changes: Sequence[Dict[str, Any]] = ()) -> "alt.FacetChart":
    """A project's runs in order, one panel per metric (two panels a row): each run's mean as a point with its 95%
    interval, one coloured series per scorer with a legend (a change of scorer is a new series, never a drop of the
    line), and each run whose judge, model, heuristics or dataset version changed marked by a dashed rule. The x
    axis is the runs in order, each named by its name or its date and time (trend.tick_of). A row is
    {metric, tick, order, scorer, mean, low, high, n, run, label, time}; a change is {tick, run, what}."""
    alt = _altair()
    ticks = [r["tick"] for r in sorted({r["tick"]: r for r in rows}.values(), key=lambda r: r["order"])]
    x = alt.X("tick:N", sort=ticks, title="runs, oldest first",
              axis=alt.Axis(labelAngle=-40, labelLimit=150, labelOverlap=True))
    score = alt.Scale(domain=[0, 1])
    color = alt.Color("scorer:N", title="scored by", legend=alt.Legend(orient="bottom", direction="vertical",
                                                                      labelLimit=420))
    interval = alt.Chart().mark_rule(strokeWidth=3, opacity=0.35).encode(
        x=x, y=alt.Y("low:Q", scale=score, title="mean (95% interval)"), y2="high:Q", color=color)
    line = alt.Chart().mark_line(point=True).encode(
        x=x, y=alt.Y("mean:Q", scale=score), color=color, detail="scorer:N",
        tooltip=["label:N", "scorer:N", alt.Tooltip("time:T", format="%Y-%m-%d %H:%M"), "run:N",
                 alt.Tooltip("mean:Q", format=".3f"), alt.Tooltip("low:Q", format=".3f"),
                 alt.Tooltip("high:Q", format=".3f"), alt.Tooltip("n:Q", title="scored")])
    metrics = list(dict.fromkeys(r["metric"] for r in rows))
    marked = [{**c, "metric": m} for c in changes for m in metrics]
    data_rows = [{**r, "kind": "run"} for r in rows] + [{**c, "kind": "change"} for c in marked]
    layers = [interval.transform_filter(alt.datum.kind == "run"), line.transform_filter(alt.datum.kind == "run")]
    if marked:
        layers.append(alt.Chart().transform_filter(alt.datum.kind == "change").mark_rule(
            color="#bc4c00", strokeDash=[4, 3]).encode(x=x, tooltip=["what:N", "run:N"]))
    return alt.layer(*layers, data=_data(alt, data_rows)).properties(width=380, height=120).facet(
        facet=alt.Facet("metric:N", sort=metrics, title=None, header=alt.Header(
            labelAngle=0, labelAlign="left", labelAnchor="start", labelOrient="top", labelFontSize=13,
            labelFontWeight="bold")), columns=2,
    ).properties(title=alt.TitleParams("Runs in order, one series per scorer (dashed: the judge, model, heuristics "
                                       "or dataset version changed)", anchor="start"))
