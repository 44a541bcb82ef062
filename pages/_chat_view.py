"""Conversations on the dashboard: the Evaluate page's preview and the Report's chat drill-down.

A conversation file is recognised by its shape (service.is_conversation_upload), previewed as
conversations (one table row each, the first one as a chat), and scored by the one `Run` like any
dataset (each row an `EvalSample` carrying its conversation). On the Report, the table has one row per conversation; the drill-down
shows the chosen conversation as chat bubbles (st.chat_message), its conversation-level scores on
top, each assistant turn with its scores, contexts and tool calls, and a button that opens the
run's worst turn. Every text from the file, the target or the judge is escaped (`said`), never
Markdown, and Arabic reads right to left.
"""
from __future__ import annotations

import html
import json
from typing import Any, Dict, List, Optional, Sequence, Tuple

import streamlit as st

from evaluator import service
from evaluator.model import EvalReport, EvalResult, EvalSample, MetricScore, TurnResult

from pages import _data as data_ui
from pages import _errors as errors
from pages import _state as state
from pages import _views as views

PICK = state.REP_SAMPLE  # the Report's drill-down selectbox (the conversation's row number)
FOCUS = state.REP_CHAT_FOCUS  # (row, turn index) the "worst turn" button asked to open
USER, ASSISTANT = service.USER, service.ASSISTANT
AVATARS = {USER: ":material/person:", ASSISTANT: ":material/smart_toy:", service.TOOL: ":material/build:"}


# --- Evaluate: reading and previewing a conversation file -----------------------------------------
def is_conversation_rows(samples: List[EvalSample]) -> bool:
    """Whether these rows are conversations (the Evaluate page words its estimate and summary so)."""
    return any(s.conversation is not None for s in samples)


@st.cache_data(max_entries=8, show_spinner=False)
def is_conversation_file(data: bytes, name: str, max_bytes: Optional[int] = None) -> bool:
    return service.is_conversation_upload(data, name, max_bytes)  # a file it cannot read: the row reader says why


def read(data: bytes, name: str, max_bytes: Optional[int], tool_evidence: bool = True) -> service.ConversationSet:
    """The conversations of an upload; a large one is never put in the shared cache (pages/_data.py)."""
    if len(data) <= data_ui.CACHE_MAX_BYTES:
        return _cached_read(data, name, max_bytes, tool_evidence)
    return service.load_conversation_upload(data, name, max_bytes, tool_evidence)


@st.cache_data(max_entries=8, show_spinner="Reading the conversations…")
def _cached_read(data: bytes, name: str, max_bytes: Optional[int],
                 tool_evidence: bool = True) -> service.ConversationSet:
    return service.load_conversation_upload(data, name, max_bytes, tool_evidence)


def dataset_step(data: bytes, name: str, max_bytes: Optional[int]) -> Optional[data_ui.LoadedDataset]:
    """The preview of a conversation file and the dataset to score (None after a shown error)."""
    evidence = st.toggle("Tool replies are evidence", value=True, key=state.TOOL_EVIDENCE, persist_state=state.KEEP,
                         help="A tool's output becomes a context of the assistant turn after it, so a reply "
                              "that repeats what the tool said is scored as grounded (CLI: --no-tool-evidence).")
    try:
        found = read(data, name, max_bytes, evidence)
    except service.DatasetError as exc:
        errors.error("Cannot use this file. {problem}", problem=exc, icon=":material/block:")
        return None
    convs = found.conversations
    turns = sum(len(c.turns) for c in convs)
    errors.caption("**{name}** · {format} · {n:,} conversations · {turns:,} turns", name=name, format=found.format,
                   n=len(convs), turns=turns)
    errors.caption("{note}", note=found.note())  # what was kept aside (system prompts) or added (tool evidence)
    for cid, reason in found.skipped:
        errors.warning("Skipped conversation {cid}: {reason}", cid=cid, reason=reason, icon=":material/warning:")
    views.records_table(service.conversation_rows(convs[:200]))
    if convs:
        with st.expander(f"First conversation ({len(convs[0].turns)} turns)"):
            for turn in convs[0].turns:
                bubble(turn)
    return data_ui.LoadedDataset(name, service.conversation_samples(found), service.digest(
        data + (b"conversations" if evidence else b"conversations without tool evidence")))


# --- showing a conversation --------------------------------------------------------------------
def said(text: str) -> None:
    """Text from the file, the target or the judge: escaped, line breaks kept, right to left when Arabic."""
    way = views.direction(text)
    align = "right" if way == "rtl" else "start"
    st.html(f'<div class="chat-text" dir="{way}" style="text-align:{align};unicode-bidi:plaintext;'
            f'white-space:pre-wrap;overflow-wrap:anywhere">{html.escape(text)}</div>')


def score_line(scores: Dict[str, MetricScore], overall: Optional[float]) -> str:
    """Badges (HTML) for a set of scores; metric names escaped (a rubric's name is typed by a user)."""
    parts = [f"overall {views.badge(overall)}"] + [f"{html.escape(n)} {views.badge(ms.score, ms.skipped)}"
                                                for n, ms in scores.items()]
    return " &nbsp; ".join(parts)


def bubble(turn: service.Turn, scored: Optional[TurnResult] = None, *, worst: bool = False) -> None:
    """One turn as a chat bubble; an assistant turn with its scores, contexts and tool calls."""
    with st.chat_message(turn.role, avatar=AVATARS.get(turn.role)):
        if worst:
            st.markdown(":red-badge[:material/south: worst turn of this conversation]")
        if turn.not_asked:
            st.caption("Not asked: the target failed on an earlier turn of this conversation.")
        elif turn.content:
            said(turn.content)
        elif turn.role == ASSISTANT:
            st.caption("(no text: this step only called tools)")
        if turn.error:
            errors.error("The target call failed: {problem}", problem=turn.error, icon=":material/error:")
        if turn.role != ASSISTANT or turn.not_asked:
            return
        if scored is not None:
            st.markdown(score_line(scored.result.scores, scored.result.overall_score()), unsafe_allow_html=True)
        turn_details(turn, scored)


def turn_details(turn: service.Turn, scored: Optional[TurnResult]) -> None:
    names = ([f"Scores ({len(scored.result.scores)})"] if scored is not None else []) + \
        [f"Contexts ({len(turn.contexts)})", f"Tool calls ({len(turn.tool_calls)})"]
    tabs = st.tabs(names)
    if scored is not None:
        with tabs[0]:
            for ms in scored.result.scores.values():
                views.metric_view(ms)
    with tabs[-2]:
        origins = turn.context_origins or []
        for i, ctx in enumerate(turn.contexts, 1):
            tool = i <= len(origins) and origins[i - 1] == "tool"  # a tool's reply read as evidence
            views.text_block(f"Context {i} · tool output" if tool else f"Context {i}", ctx)
        if not turn.contexts:
            st.caption("No contexts were retrieved for this turn.")
    with tabs[-1]:
        for call in turn.tool_calls:
            st.code(json.dumps({k: call.get(k) for k in ("name", "arguments", "output") if k in call},
                               ensure_ascii=False, indent=1, default=str), language="json", wrap_lines=True)
        if not turn.tool_calls:
            st.caption("No tool was called in this turn.")


def conversation_view(result: EvalResult, focus: Optional[int] = None) -> None:
    """Conversation-level scores on top, then the chat; `focus` (a turn index) is marked like the worst."""
    conv = result.conversation
    assert conv is not None  # the drill-down shows conversation rows only
    st.markdown(score_line(result.scores, result.overall_score()), unsafe_allow_html=True)
    st.caption("Conversation scores: knowledge retention, goal completion and the agent metrics score the whole "
               "chat; each turn metric here is the mean over this conversation's turns.")
    with st.popover("Conversation-level details", icon=":material/forum:"):
        for label, text in (("Scenario", conv.scenario), ("Expected outcome", conv.expected_outcome)):
            if text:
                views.text_block(label, text)
        for ms in result.scores.values():
            views.metric_view(ms)
    worst = result.worst_turn()
    marked = focus if focus is not None else (worst.index if worst is not None and len(result.turns) > 1 else None)
    by_index = {t.index: t for t in result.turns}
    for i, turn in enumerate(conv.turns):
        bubble(turn, by_index.get(i), worst=i == marked)


# --- Report: the table and the drill-down --------------------------------------------------------
def is_conversations(report: EvalReport) -> bool:
    return report.multi_turn


@st.cache_data(max_entries=4, show_spinner=False)
def results_frame(token: str, _report: EvalReport) -> Any:
    """One row per conversation: the report's table, the first user message as `question`, the last reply as
    `answer`, and its turn count and worst turn."""
    return service.conversation_frame(_report)


def turns_table(results: Sequence[Tuple[int, EvalResult]]) -> None:
    with st.expander("Every assistant turn of these conversations (one row per turn)"):
        views.records_table(service.turn_rows(results), height=300)


def with_turn_columns(frame: Any, rows: Sequence[Tuple[int, EvalResult]]) -> Any:
    """A page's frame with each conversation's turn count and worst turn (the columns results_frame adds)."""
    return service.with_turn_columns(frame, rows)


def worst_turn_button(worst: Optional[service.WorstTurn]) -> None:
    """The run's worst turn (kept in its summary), one click away whatever page shows its conversation."""
    if worst is None:
        return
    if st.button(f"Open the worst turn: {worst.sample_id}, turn {worst.turn + 1} (overall "
                 f"{views.format_score(worst.overall)})", key="btn_worst_turn", icon=":material/trending_down:"):
        state.put(PICK, worst.row)
        state.put(FOCUS, (worst.row, worst.turn))


def page_label(i: int, result: EvalResult) -> str:
    """'#i · id · N turns · first message (overall x)' for a conversation read on its own."""
    conv = result.conversation
    if conv is None:
        return f"#{i} · {result.sample_id}"
    first = service.first_user_message(conv)
    first = first if len(first) <= 60 else first[:57] + "…"
    return (f"#{i} · {result.sample_id} · {len(conv.turns)} turns · {first} "
            f"(overall {views.format_score(result.overall_score())})")


def drill_down(report: EvalReport, frame: Any, shown: Any) -> None:
    st.subheader("Drill-down")
    worst = service.worst_turn(report)
    if worst is not None:
        n, turn = worst
        cid = report.results[n].sample_id
        if st.button(f"Open the worst turn: {cid}, turn {turn.index + 1} (overall "
                     f"{views.format_score(turn.result.overall_score())})", key="btn_worst_turn",
                     icon=":material/trending_down:"):
            state.put(PICK, n)
            state.put(FOCUS, (n, turn.index))
    options = shown["#"].tolist()[:1000]
    if not options:
        errors.info("No conversation matches the filters.")
        return
    state.drop_stale(PICK, options)
    pick = st.selectbox("Conversation", options, format_func=lambda i: label(frame, i), key=PICK)
    focus = state.get(FOCUS)
    result = report.results[pick]
    if result.conversation is not None:
        conversation_view(result, focus[1] if focus and focus[0] == pick else None)


def label(frame: Any, i: int) -> str:
    row = frame.loc[frame["#"] == i].iloc[0]
    first = str(row.get("question") or "")
    first = first if len(first) <= 60 else first[:57] + "…"
    overall = row["overall"]
    return (f"#{i} · {row.get('sample_id')} · {row.get('turns')} turns · {first} "
            f"(overall {views.format_score(None if overall != overall else overall)})")
