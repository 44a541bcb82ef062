"""Tables of results for a screen: a pandas frame per page of rows or per report, '#' first, and the
filters and per-turn rows the dashboard's Report draws from them.

A frame's rows are io.records.flat_row's, less the whole contexts and tool calls (those are for the files
and the drill-down, not a table cell), plus other tools' grades (external_<tool>_<metric>). pandas is
imported on first use: a page that draws no table never loads it.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..conversation import USER
from ..io.records import flat_row
from ..model import EvalReport, EvalResult, TurnResult

Rows = Sequence[Tuple[int, EvalResult]]
LONG_COLUMNS = ("contexts", "tool_calls")  # whole lists: for files and the drill-down, not a table cell
TEXT_CHARS = 200  # a per-turn row's message and reply are cut to this


def grades(result: EvalResult) -> Dict[str, Any]:
    """Other tools' grades of the row (external_<tool>_<metric>), shown beside our scores."""
    meta = (result.sample.metadata if result.sample is not None else None) or {}
    return dict(meta.get("external_scores") or {})


def rows_frame(rows: Rows, names: Sequence[str]) -> Any:
    """A frame of (index, result) rows: '#' is each row's index in the run, then flat_row's columns."""
    import pandas as pd

    frame = pd.DataFrame([{**flat_row(r, names), **grades(r)} for _, r in rows]).drop(
        columns=list(LONG_COLUMNS), errors="ignore")
    frame.insert(0, "#", [i for i, _ in rows])
    return frame


def report_frame(report: EvalReport) -> Any:
    """One row per result of a report held in memory; metric columns no row fills are dropped."""
    frame = rows_frame(list(enumerate(report.results)), report.metric_names())
    return drop_empty(frame)


def drop_empty(frame: Any, keep: Sequence[str] = ()) -> Any:
    """The frame less the columns no row fills, bar '#', sample_id and `keep` (columns that must not come and go)."""
    empty = [c for c in frame.columns if c not in ("#", "sample_id", *keep) and frame[c].isna().all()]
    return frame.drop(columns=empty)


def first_message(result: EvalResult) -> str:
    conv = result.conversation
    return next((t.content for t in conv.turns if t.role == USER), "") if conv is not None else ""


def conversation_frame(report: EvalReport) -> Any:
    """One row per conversation: report_frame's columns, the first user message as `question`, the turn count and
    the worst turn (1-based)."""
    frame = report_frame(report).copy()
    chats = [r for r in report.results if r.conversation is not None]
    frame["question"] = [first_message(r) for r in chats]
    return with_turn_columns(frame, [(0, r) for r in chats])


def with_turn_columns(frame: Any, rows: Rows) -> Any:
    """The frame with each conversation's turn count and worst turn (1-based) as its 3rd and 4th columns."""
    frame = frame.copy()
    convs = [(r.conversation, r.worst_turn()) for _, r in rows]
    frame.insert(2, "turns", [len(c.turns) if c is not None else None for c, _ in convs])
    frame.insert(3, "worst turn", [None if w is None else w.index + 1 for _, w in convs])
    return frame


def turn_rows(rows: Rows) -> List[Dict[str, Any]]:
    """Every scored assistant turn of these (index, row) pairs, one row each: the per-turn view of a table."""
    out = []
    for n, r in rows:
        conv = r.conversation
        if conv is None:
            continue
        for t in r.turns:
            row: Dict[str, Any] = {"#": n, "conversation_id": conv.conversation_id, "turn": t.index + 1,
                                   "overall": t.result.overall_score()}
            row.update(t.result.score_values())
            row.update(user=conv.turns[t.user_index].content[:TEXT_CHARS],
                       reply=conv.turns[t.index].content[:TEXT_CHARS])
            out.append(row)
    return out


def worst_turn(report: EvalReport) -> Optional[Tuple[int, TurnResult]]:
    """(row, turn) with the lowest overall score of the whole run; None without a scored turn."""
    found = [(n, r.worst_turn()) for n, r in enumerate(report.results) if r.conversation is not None]
    scored = [(n, w) for n, w in found if w is not None]
    return min(scored, key=lambda p: p[1].result.overall(), default=None)


def external_columns(frame: Any) -> List[str]:
    """The columns of other tools' grades in a frame."""
    return [c for c in frame.columns if str(c).startswith("external_")]


def score_columns(frame: Any) -> List[str]:
    """The metric score columns of a frame (each has a `<metric>_method` twin), then overall."""
    metrics = [c[: -len("_method")] for c in frame.columns if c.endswith("_method")]
    return [c for c in (*metrics, "overall") if c in frame.columns]


def select_rows(frame: Any, *, text: str = "", categories: Sequence[str] = (), metric: Optional[str] = None,
                at_most: float = 1.0, methods: Sequence[str] = ()) -> Any:
    """The rows of a frame that match: text in question/answer/id, a category, `metric` <= `at_most` (skipped
    scores never match), any metric scored by one of `methods`. The in-memory twin of store.pages.Filters."""
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
