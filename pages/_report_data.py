"""The Report page's data, computed once per report: `token` (RunMeta.token) keys each cache entry, and the
report itself is passed with a leading underscore so Streamlit does not hash it."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

import streamlit as st

from evaluator.model import EvalReport


@st.cache_data(max_entries=8, show_spinner=False)
def summaries(token: str, _report: EvalReport) -> List[Any]:
    """stats.summarize of the report (mean, std, CI, counts per metric)."""
    from evaluator.analysis.stats import summarize

    return summarize(_report)


@st.cache_resource(max_entries=8, show_spinner=False)
def report_charts(token: str, _report: EvalReport) -> Dict[str, Any]:
    """The report's altair charts by name (category only when samples have categories)."""
    from evaluator.analysis import charts

    built = {"Means ± 1 std": charts.means_chart(_report, summaries=summaries(token, _report)),
             "Distributions": charts.distribution_chart(_report)}
    category = charts.category_chart(_report)
    if category is not None:
        built["By category"] = category
    return built


@st.cache_data(max_entries=8, show_spinner=False)
def agreement(token: str, _report: EvalReport) -> Dict[str, Any]:
    """agreement.agreement_table of the report: metric -> agreement with human labels, then "<metric> vs
    external_<tool>_<metric>" -> agreement with another tool's grades of that metric (may be empty)."""
    from evaluator.analysis.agreement import agreement_table, external_pairs

    return {**agreement_table(_report), **agreement_table(external_pairs(_report))}


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
