"""A run read for a report: its summary (never its rows), a page of rows, one row, tables, charts, advice, the
files it downloads as, and a comparison of two runs. A stored run is read from the history (store/pages.py:
filtered, sorted and paged by SQL); a run the history could not keep, from its report held in memory."""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

from ..analysis import charts
from ..analysis.summary import RunSummary
from ..analysis.advice import Advice, recommendations
from ..analysis.claims import claim_views
from ..analysis.compare import RunComparison
from ..analysis.provenance import Provenance, file_name
from ..analysis import trend as trend_data
from ..analysis.trend import Trend
from ..analysis.highlight import sample_html
from ..analysis.stats import MetricSummary
from ..metrics.rubric import rubrics_in_settings
from ..model import EvalReport, EvalResult
from ..report.downloads import RunFiles
from ..scoring import summaries
from ..scoring.costs import price
from ..store import pages
from ..store.exams import with_exam
from ..store.history import RunInfo, RunStore
from ..store.pages import Filters

Rows = List[Tuple[int, EvalResult]]


# --- the summary -----------------------------------------------------------------------------------
def run_summary(store: RunStore, run_id: str) -> RunSummary:
    """A stored run's summary (a few KB); built from its rows once, for a run stored without one."""
    return summaries.stored(store, run_id)


def report_summary(report: EvalReport, settings: Mapping[str, Any]) -> RunSummary:
    """The summary of a report held in memory (a run the history could not keep)."""
    return summaries.of_report(report, settings)


def metric_summaries(summary: RunSummary) -> List[MetricSummary]:
    """Per metric: mean, spread, interval, counts and how the scores were made."""
    return list(summary.metrics)


def summary_charts(summary: RunSummary) -> Dict[str, Any]:
    """The run's altair charts by name (By category only when its samples have categories); the means chart
    compact, without its band legend (the page draws the legend once), so it fits the Report's first screen."""
    order = list(summary.metric_names)
    built = {"Means ± 1 std": charts.means_chart(None, summaries=list(summary.metrics), step=30, legend=False),
             "Distributions": charts.histogram_chart(summary.histogram_rows(), order)}
    category = charts.category_heatmap(summary.category_rows(), order)
    if category is not None:
        built["By category"] = category
    return built


def advice(summary: RunSummary, settings: Optional[Mapping[str, Any]]) -> List[Advice]:
    """What to improve: each metric below Good, worst first, with the run's rubrics' own advice."""
    return recommendations({s.name: s.mean for s in metric_summaries(summary)},
                           metrics=rubrics_in_settings(settings))


def judge_cost(usage: Mapping[str, Any], settings: Mapping[str, Any]) -> Optional[float]:
    """The judge's cost at the run's prices (None without prices)."""
    return price(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0), settings.get("price_in"),
                 settings.get("price_out"))


# --- rows --------------------------------------------------------------------------------------------
def rows_page(store: RunStore, run_id: str, *, offset: int, limit: int, sort: Tuple[str, str],
              filters: Filters) -> Tuple[Rows, int]:
    """One page of a stored run's rows and how many match (filtered and sorted in SQL)."""
    return pages.page(store, run_id, offset=offset, limit=limit, sort=sort, filters=filters)


def run_row(store: RunStore, run_id: str, idx: int) -> Optional[EvalResult]:
    """One stored row with its sample (None when it is gone)."""
    return pages.row(store, run_id, idx)


def claims_html(result: EvalResult) -> Optional[str]:
    """The row's text with each metric's claims marked (escaped HTML); None when there is nothing to mark."""
    if result.sample is None:
        return None
    views = claim_views(result.sample, result.scores)
    return sample_html(result.sample, views) if views else None


# --- files ---------------------------------------------------------------------------------------------
def run_files(dataset_name: str, summary: RunSummary, settings: Dict[str, Any], *,
              report: Optional[EvalReport] = None, store: Optional[RunStore] = None, run_id: Optional[str] = None,
              reviewed: Optional[Callable[[], Dict[str, str]]] = None, date: str = "", title: str = "") -> RunFiles:
    """The run's CSV, JSON, Parquet, HTML and PDF summary, each built when asked (a stored run's rows read a page
    at a time); `date` (when the run was made) goes into the exports' provenance caption, `title` (the run's
    name) heads the workbook and the PDF."""
    settings = with_exam(store, settings) if store is not None else settings
    return RunFiles(dataset_name, summary, settings, report=report, store=store, run_id=run_id,
                    labels_agreement=dict(summary.agreement) or None,
                    reviewed=reviewed, date=date, title=title)


def chart_png(chart: Any) -> bytes:
    return charts.chart_png(chart)


def run_provenance(dataset_name: str, settings: Mapping[str, Any], summary: RunSummary, *,
                   run_id: Optional[str], date: str, store: Optional[RunStore] = None) -> Provenance:
    """The caption every exported chart of this run carries (dataset, rows scored, judge and its exam, date, run,
    version); the exam is looked up in `store` when given."""
    settings = with_exam(store, settings) if store is not None else settings
    return Provenance.of_summary(dataset=dataset_name, settings=settings, summary=summary, date=date,
                                 run_id=run_id or "")


def chart_file(chart: Any, provenance: Any, ext: str) -> bytes:
    """The chart as a .png, .svg or .pdf file with its provenance caption under it."""
    return charts.chart_bytes(charts.captioned(chart, provenance), ext)


def chart_file_name(dataset_name: str, run_id: Optional[str], chart: str, ext: str) -> str:
    """`ragmeter-<dataset>-<run>-<chart>.<ext>` (safe characters only)."""
    return file_name(dataset_name, run_id or "", chart, ext)


def chart_svg(chart: Any) -> str:
    return charts.chart_svg(chart)


# --- two runs --------------------------------------------------------------------------------------------
def compare_verdict(cmp: RunComparison, delta: Any, alpha: float = 0.05) -> str:
    """The one decision of a metric, as `ragmeter compare` says it: better, worse, no clear change or not
    comparable (analysis/decision.py; no verdict between runs scored differently unless allowed)."""
    return cmp.decision(delta, alpha)


def disagreement(cmp: RunComparison, delta: Any, alpha: float = 0.05) -> str:
    """One sentence where the sequential test reads a metric differently from its decision; "" otherwise."""
    return cmp.footnote(delta, alpha)


def comparison_file(cmp: RunComparison) -> str:
    """The comparison as one self-contained HTML page (its chart captioned, "not comparable" first)."""
    from ..report.comparison import comparison_html

    return comparison_html(cmp)


def compare_chart(cmp: RunComparison) -> Any:
    """Per metric: both runs' means with their intervals, and the paired difference with its 95% CI."""
    rows = charts.compare_rows(cmp)
    return charts.compare_chart(rows, cmp.run_a.label, cmp.run_b.label) if rows else None


def project_trend(store: RunStore, project: str, limit: Optional[int] = None,
                  listed: Optional[Sequence[RunInfo]] = None) -> Trend:
    """A project's finished runs over time (the newest `limit`), per metric, and the runs whose scorer or data
    changed; `listed`: the runs the page has already read."""
    return trend_data.project_trend(store, project, limit, listed)


def trend_chart(found: Trend) -> Any:
    """The trend as a chart (None without a scored run)."""
    return charts.trend_chart([p.to_row() for p in found.points], found.changes) if found.points else None


def calibration_chart(table: Mapping[str, Any]) -> Any:
    """Judge scores against human labels, per metric (None when nothing to draw)."""
    return charts.calibration_chart(dict(table))


def timeline_chart(metric: str, rows: Sequence[Dict[str, Any]], deploys: Sequence[Dict[str, Any]],
                   alerts: Sequence[Dict[str, Any]]) -> Any:
    return charts.timeline_chart(metric, rows, deploys, alerts)
