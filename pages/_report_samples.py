"""The Report's Samples section for a stored run: 50 rows at a time, filtered and sorted by the history's SQL
(service.rows_page), and a drill-down that reads the one row it shows. The page never holds the run's rows."""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import streamlit as st

from evaluator import service
from evaluator.model import EvalResult

from pages import _chat_view as chat
from pages import _errors as errors
from pages import _report_data as report_data
from pages import _report_sections as sections
from pages import _state as state
from pages._report_data import RunView

FIRST = "#"  # the sort option that keeps the run's own order
PAGE_SIZE = service.PAGE_SIZE


def score_columns(view: RunView) -> List[str]:
    """The metrics that scored at least one row, then overall (the filter's and the sort's choices)."""
    return [s.name for s in view.sums if s.n_scored] + ["overall"]


def order_widgets(cols: Sequence[str]) -> Tuple[str, str]:
    """Sort by the run's order, a metric or overall, ascending or descending: (key for the pager, direction)."""
    state.drop_stale(state.REP_SORT, [FIRST] + list(cols))
    c1, c2, _ = st.columns([2, 2, 5])
    key = c1.selectbox("Sort by", [FIRST] + list(cols), key=state.REP_SORT, persist_state=state.KEEP,
                       help="Sorted over the whole run, not only the rows shown; unscored rows come last.")
    desc = c2.toggle("Highest first", key=state.REP_DESC, persist_state=state.KEEP)
    return ("idx" if key == FIRST else key), ("desc" if desc else "asc")


def requested_page(query: Any) -> int:
    """The page asked for (1-based); back to 1 when the filters or the order change."""
    if state.get(state.REP_QUERY) != query:
        state.put(state.REP_QUERY, query)
        state.drop(state.REP_PAGE)
    return max(1, int(state.get(state.REP_PAGE) or 1))


def fetch(run_id: str, number: int, sort: Tuple[str, str],
          filters: Any) -> Tuple[int, List[Tuple[int, EvalResult]], int]:
    """(page number, its rows, rows matching): the last page when `number` is past it (fewer rows match now)."""
    rows, total = report_data.samples_page(run_id, offset=(number - 1) * PAGE_SIZE, limit=PAGE_SIZE, sort=sort,
                                           filters=filters)
    last = max(1, math.ceil(total / PAGE_SIZE))
    if number > last:
        return fetch(run_id, last, sort, filters)
    return number, rows, total


def samples(view: RunView) -> None:
    """Filters, order, one page of rows with a pager, and the drill-down into one of them."""
    meta, cols = view.meta, score_columns(view)
    assert meta.run_id
    filters = sections.filter_widgets(cols, list(view.summary.category_names))
    sort = order_widgets(cols)
    number, rows, total = fetch(meta.run_id, requested_page((meta.run_id, filters, sort)), sort, filters)
    pages = max(1, math.ceil(total / PAGE_SIZE))
    first = (number - 1) * PAGE_SIZE
    shown = f"rows {first + 1:,}–{first + len(rows):,} · " if rows else ""
    st.caption(f"{total:,} of {view.summary.n_rows:,} samples · {shown}page {number:,} of {pages:,}")
    chats = view.summary.conversations
    if rows:
        frame = service.rows_frame(rows, list(view.summary.metric_names))
        if chats:
            frame = chat.with_turn_columns(frame, rows)
        sections.samples_table(service.drop_empty(frame, cols), one_based=not chats)
        if chats:
            chat.turns_table(rows)
    if pages > 1:
        state.put(state.REP_PAGE, number)  # the widget shows the page drawn (the last, when fewer rows match now)
        st.number_input("Page", min_value=1, max_value=pages, step=1, key=state.REP_PAGE,
                        help=f"{PAGE_SIZE} rows a page; the filters and the order apply to the whole run.")
    if chats:
        chat.worst_turn_button(view.summary.worst_turn)
    drill_down(meta.run_id, rows, chats)


@st.fragment
def drill_down(run_id: str, rows: Sequence[Tuple[int, EvalResult]], chats: bool = False) -> None:
    """One of the page's rows in full, read from the history on its own (a conversation as chat bubbles). A
    fragment: picking another row reruns this part alone, not the Report's summaries, charts and table
    (issue 28: ≤ 1 s)."""
    st.subheader("Drill-down")
    labels = {i: (chat.page_label if chats else label)(i, r) for i, r in rows}
    focus = state.get(chat.FOCUS) if chats else None
    if focus and focus[0] not in labels:  # the worst turn's conversation, from another page
        opened = report_data.sample(run_id, focus[0])
        if opened is not None:
            labels = {focus[0]: chat.page_label(focus[0], opened), **labels}
    if not labels:
        errors.info("No conversation matches the filters." if chats else "No sample matches the filters.")
        return
    state.drop_stale(state.REP_SAMPLE, list(labels))  # kept from another page, report or filter
    pick = st.selectbox("Conversation" if chats else "Sample", list(labels), format_func=labels.__getitem__,
                        key=state.REP_SAMPLE, persist_state=state.KEEP, help="The rows of the page shown above.")
    result = report_data.sample(run_id, pick)
    if result is None:
        errors.warning("Sample #{i} is no longer in the history (the run was re-scored or deleted).", i=pick + 1)
        return
    if result.conversation is not None:
        chat.conversation_view(result, focus[1] if focus and focus[0] == pick else None)
    else:
        sections.result_view(result)


def label(i: int, result: EvalResult) -> str:
    """'#n · id · question (overall x)', n counted from 1 as in the table: plain text, the question as typed."""
    question = str(result.sample.question if result.sample is not None else "")
    question = question if len(question) <= 70 else question[:67] + "…"
    overall: Optional[float] = result.overall_score()
    from pages._views import format_score

    return f"#{i + 1} · {result.sample_id} · {question} (overall {format_score(overall)})"
