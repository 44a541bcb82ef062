"""The Report page's data. A stored run (RunMeta.paged) is read as its stored summary (analysis/summary.py)
and 50-row pages (store/pages.py), never as its rows; a run the history could not keep is read from the
report held in memory. `token` (RunMeta.token) keys each cache entry, and a report is passed with a leading
underscore so Streamlit does not hash it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

import streamlit as st

from evaluator.analysis import summary as summary_data
from evaluator.analysis.stats import MetricSummary
from evaluator.model import EvalReport, EvalResult
from evaluator.store import pages
from evaluator.store.history import RunStore
from evaluator.store.pages import Filters

from pages import _runs as runs
from pages._runs import RunMeta


def history() -> RunStore:
    """The history the pages read: runs.open_store, opened once per location for the whole server."""
    return runs.open_store()


@dataclass(frozen=True)
class RunView:
    """What the Report draws: the run's summary, and its rows in memory only when the history lacks them."""

    meta: RunMeta
    summary: Dict[str, Any]
    report: Optional[EvalReport] = None

    @property
    def paged(self) -> bool:
        return self.report is None

    @property
    def sums(self) -> List[MetricSummary]:
        return summary_data.metric_summaries(self.summary)


def run_view(meta: Optional[RunMeta], report: Optional[EvalReport]) -> Optional[RunView]:
    """The view of the run the Report shows; None when there is none, or it has no row."""
    view = any_view(meta, report)
    return view if view is not None and view.summary.get("n_rows") else None


def any_view(meta: Optional[RunMeta], report: Optional[EvalReport]) -> Optional[RunView]:
    """The view of the session's run, rows or none (how a run that scored nothing ended still shows)."""
    if meta is None:
        return None
    if meta.paged and meta.run_id:
        return RunView(meta, stored_summary(meta.token, meta.run_id))
    if report is not None:
        return RunView(meta, memory_summary(meta.token, report, meta.settings), report)
    return None


@st.cache_data(max_entries=32, show_spinner="Summarising the run (once: it is stored with it)…")
def stored_summary(token: str, run_id: str) -> Dict[str, Any]:
    """The run's stored summary; built from its rows, once, for a run that has none (scoring/summaries.py)."""
    from evaluator.scoring import summaries

    return summaries.stored(history(), run_id)


@st.cache_data(max_entries=4, show_spinner=False)
def memory_summary(token: str, _report: EvalReport, _settings: Dict[str, Any]) -> Dict[str, Any]:
    """The summary of a report held in memory (a run the history could not keep)."""
    from evaluator.scoring import summaries

    return summaries.of_report(_report, _settings)


@st.cache_resource(max_entries=8, show_spinner=False)
def report_charts(token: str, _summary: Dict[str, Any]) -> Dict[str, Any]:
    """The run's altair charts by name (category only when samples have categories), from its summary."""
    from evaluator.analysis import charts

    order = _summary.get("metric_names") or []
    built = {"Means ± 1 std": charts.means_chart(None, summaries=summary_data.metric_summaries(_summary)),
             "Distributions": charts.histogram_chart(_summary.get("histogram") or [], order)}
    category = charts.category_heatmap(_summary.get("categories") or [], order)
    if category is not None:
        built["By category"] = category
    return built


def samples_page(run_id: str, *, offset: int, limit: int, sort: Tuple[str, str],
                 filters: Filters) -> Tuple[List[Tuple[int, EvalResult]], int]:
    """One page of a stored run's rows and how many match (store/pages.py: filtered and sorted in SQL)."""
    return pages.page(history(), run_id, offset=offset, limit=limit, sort=sort, filters=filters)


def sample(run_id: str, idx: int) -> Optional[EvalResult]:
    """One stored row with its sample, for the drill-down."""
    return pages.row(history(), run_id, idx)


def page_frame(rows: Sequence[Tuple[int, EvalResult]], names: Sequence[str]) -> Any:
    """A results_frame of one page's rows: '#' is each row's index in the run."""
    import pandas as pd

    from evaluator.io.records import flat_row

    frame = pd.DataFrame([{**flat_row(r, names), **_grades(r)} for _, r in rows]).drop(
        columns=["contexts", "tool_calls"], errors="ignore")
    frame.insert(0, "#", [i for i, _ in rows])
    return frame


@st.cache_data(max_entries=4, show_spinner=False)
def results_frame(token: str, _report: EvalReport) -> Any:
    """One row per sample (records.flat_row) with a leading '#' column; empty metric columns dropped."""
    import pandas as pd

    from evaluator.io.records import flat_row

    # Whole contexts and tool calls are for the CSV and the drill-down, not a table cell.
    names = _report.metric_names()
    frame = pd.DataFrame([{**flat_row(r, names), **_grades(r)} for r in _report.results]).drop(
        columns=["contexts", "tool_calls"], errors="ignore")
    frame.insert(0, "#", range(len(frame)))
    empty = [c for c in frame.columns if c not in ("#", "sample_id") and frame[c].isna().all()]
    return frame.drop(columns=empty)


def _grades(result: Any) -> Dict[str, Any]:
    """Other tools' grades of the row (external_<tool>_<metric>), shown beside our scores."""
    meta = (result.sample.metadata if result.sample is not None else None) or {}
    return dict(meta.get("external_scores") or {})


def external_columns(frame: Any) -> List[str]:
    """The columns of other tools' grades in a results_frame."""
    return [c for c in frame.columns if str(c).startswith("external_")]


def score_columns(frame: Any) -> List[str]:
    """The metric score columns of a results_frame (each has a `<metric>_method` twin), then overall."""
    metrics = [c[: -len("_method")] for c in frame.columns if c.endswith("_method")]
    return [c for c in (*metrics, "overall") if c in frame.columns]


def select_rows(frame: Any, *, text: str = "", categories: Sequence[str] = (), metric: Optional[str] = None,
                at_most: float = 1.0, methods: Sequence[str] = ()) -> Any:
    """The rows of a results_frame that match: text in question/answer/id, a category, `metric` <= `at_most`
    (skipped scores never match), any metric scored by one of `methods`."""
    keep = frame.index == frame.index
    if text:
        hay = (frame["question"].fillna("") + " " + frame["answer"].fillna("") + " "
               + frame["sample_id"].fillna("").astype(str))
        keep &= hay.str.contains(text, case=False, regex=False)
    if categories:
        keep &= frame["category"].isin(categories)
    if metric:
        keep &= frame[metric].notna() & (frame[metric] <= at_most + 1e-9)
    if methods:
        keep &= frame[[c for c in frame.columns if c.endswith("_method")]].isin(methods).any(axis=1)
    return frame[keep]
