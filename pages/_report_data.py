"""The Report page's data. A stored run (RunMeta.paged) is read as its stored summary and 50-row pages
(service.run_summary, service.rows_page), never as its rows; a run the history could not keep is read from the
report held in memory. `token` (RunMeta.token) keys each cache entry, and a report is passed with a leading
underscore so Streamlit does not hash it."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

import streamlit as st

from evaluator import service
from evaluator.model import EvalReport, EvalResult

from pages import _runs as runs
from pages._runs import RunMeta


def history() -> service.RunStore:
    """The history the pages read: runs.open_store, opened once per location for the whole server."""
    return runs.open_store()


@dataclass(frozen=True)
class RunView:
    """What the Report draws: the run's summary, and its rows in memory only when the history lacks them."""

    meta: RunMeta
    summary: service.RunSummary
    report: Optional[EvalReport] = None

    @property
    def paged(self) -> bool:
        return self.report is None

    @property
    def sums(self) -> List[service.MetricSummary]:
        return service.metric_summaries(self.summary)


def run_view(meta: Optional[RunMeta], report: Optional[EvalReport]) -> Optional[RunView]:
    """The view of the run the Report shows; None when there is none, or it has no row."""
    view = any_view(meta, report)
    return view if view is not None and view.summary.n_rows else None


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
def stored_summary(token: str, run_id: str) -> service.RunSummary:
    """The run's stored summary; built from its rows, once, for a run that has none."""
    return service.run_summary(history(), run_id)


@st.cache_data(max_entries=4, show_spinner=False)
def memory_summary(token: str, _report: EvalReport, _settings: Dict[str, Any]) -> service.RunSummary:
    """The summary of a report held in memory (a run the history could not keep)."""
    return service.report_summary(_report, _settings)


@st.cache_resource(max_entries=8, show_spinner=False)
def report_charts(token: str, _summary: service.RunSummary) -> Dict[str, Any]:
    """The run's altair charts by name (category only when samples have categories), from its summary."""
    return service.summary_charts(_summary)


def samples_page(run_id: str, *, offset: int, limit: int, sort: Tuple[str, str],
                 filters: service.Filters) -> Tuple[List[Tuple[int, EvalResult]], int]:
    """One page of a stored run's rows and how many match (filtered and sorted in SQL)."""
    return service.rows_page(history(), run_id, offset=offset, limit=limit, sort=sort, filters=filters)


def sample(run_id: str, idx: int) -> Optional[EvalResult]:
    """One stored row with its sample, for the drill-down."""
    return service.run_row(history(), run_id, idx)


@st.cache_data(max_entries=4, show_spinner=False)
def results_frame(token: str, _report: EvalReport) -> Any:
    """One row per sample with a leading '#' column; empty metric columns dropped."""
    return service.report_frame(_report)
