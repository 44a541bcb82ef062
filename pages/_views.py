"""Display pieces the pages share: score badges, tables, durations and the drill-down of one result.

Sample and judge text is user text: it goes out HTML-escaped (`text_block`), through
pages/_errors.py (escaped Markdown) or as st.code, never as Markdown of its own.
"""
from __future__ import annotations

import html
import json
import re
from typing import Any, Mapping, Optional, Sequence

import streamlit as st

from evaluator import service
from evaluator.model import METHOD_LABELS, EvalResult, EvalSample
from evaluator.model import LANGUAGE_NOTE_KEY as LANGUAGE_NOTE

from pages import _errors as errors

GREY = service.NA_COLOR
NA = "–"  # shown for a skipped score or a missing value, in every table
_ARABIC_LETTER = re.compile(r"[\u0600-\u06FF]")
_LATIN_LETTER = re.compile(r"[A-Za-z]")
_LINE_END = re.compile(r"\r\n?|[\u2028\u2029]")  # every line end CommonMark or a browser honours


def format_duration(seconds: Optional[float]) -> str:
    """A duration as people read it: '40 ms', '3.2 s', '4 min 05 s', '2 h 07 min'; '–' for None."""
    if seconds is None:
        return "–"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 90:
        return f"{seconds:.1f} s"
    if seconds < 5400:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def format_score(value: Optional[float]) -> str:
    """A mean as the dashboard shows it: N/A when nothing was scored, never 0.000."""
    return "N/A" if value is None else f"{value:.3f}"


def badge(score: Optional[float], skipped: bool = False, *, show_score: bool = True, wrap: bool = False) -> str:
    """A coloured pill with the score and its band (HTML; contains no user text); `wrap`: its words may wrap, so
    "Needs improvement" stays inside a narrow card."""
    if skipped or score is None:
        return service.badge_html(None, "N/A · skipped", wrap=wrap)
    return service.badge_html(score, (f"{score:.3f} · " if show_score else "") + service.band(score), wrap=wrap)


def direction(text: str) -> str:
    """'rtl' for mostly-Arabic text, else 'auto' (English reasoning that quotes an Arabic word stays LTR)."""
    arabic = len(_ARABIC_LETTER.findall(text))
    return "rtl" if arabic and arabic >= len(_LATIN_LETTER.findall(text)) else "auto"


def text_block(label: str, text: Optional[str]) -> None:
    """User text shown safely (escaped) and right-to-left when it is Arabic.

    The text is one HTML block: Markdown is not read inside it as long as it has no blank line,
    so every line end (\\r too, which CommonMark also counts) becomes a <br>.
    """
    text = _LINE_END.sub("\n", text or "")
    way = direction(text)
    body = html.escape(text).replace("\n", "<br>") or "<i>(empty)</i>"
    # plaintext: each line takes the direction of its own first letter, so mixed text reads right.
    st.markdown(f"**{label}**")
    st.markdown(f'<div dir="{way}" style="text-align:{"right" if way == "rtl" else "start"};unicode-bidi:plaintext;'
                f'padding:6px 10px;border-inline-start:3px solid #ddd;margin-bottom:8px">{body}</div>',
                unsafe_allow_html=True)


def sample_view(sample: Optional[EvalSample], marked: bool = False) -> None:
    """Question, answer, reference and each context of a sample; with `marked`, the answer, reference
    and contexts are already on the page with their claims marked, so only the question and notes show."""
    if sample is None:
        errors.info("This result carries no sample text.")
        return
    text_block("Question", sample.question)
    if sample.target_error:
        errors.error("The target call failed: {problem}", problem=sample.target_error, icon=":material/error:")
    elif sample.target_latency_ms is not None:
        st.caption(f"Answered by the target in {sample.target_latency_ms:,.0f} ms")
    if sample.no_answer_reason and not sample.answer:  # no answer at all: N/A, not an empty answer
        errors.caption("{reason}", reason=sample.no_answer_reason)
    elif not marked:
        text_block("Answer", sample.answer)
    if sample.metadata.get(LANGUAGE_NOTE):
        errors.caption("{note}", note=sample.metadata[LANGUAGE_NOTE])
    if not marked:
        text_block("Ground truth", sample.ground_truth or "(none)")
        for i, ctx in enumerate(sample.contexts, 1):
            text_block(f"Context {i}", ctx)
    if not sample.contexts:
        errors.caption("{reason}", reason=sample.no_contexts_reason or "No contexts were retrieved for this sample.")
    ids_view(sample)
    trajectory_view(sample)


def ids_view(sample: EvalSample) -> None:
    """The retrieved document ids in rank order and the relevant ones: what the retrieval metrics read."""
    if sample.retrieval_ids:
        errors.caption("Retrieved ids, by rank: {ids}", ids=", ".join(i or "(no id)" for i in sample.retrieval_ids))
    relevant = sample.relevance or {d: 1 for d in sample.expected_docs or []}
    if relevant and (sample.retrieval_ids or sample.relevance):
        errors.caption("Relevant ids (grade): {ids}", ids=", ".join(f"{d} ({g:g})" for d, g in relevant.items()))


def trajectory_view(sample: EvalSample) -> None:
    """The agent's steps: each tool, its arguments and its output, in order."""
    if not sample.tool_calls and not sample.expected_tools:
        return
    st.markdown("**Trajectory**")
    if sample.expected_tools:
        errors.caption("Expected tools: {tools}", tools=", ".join(sample.expected_tools))
    for i, call in enumerate(sample.tool_calls, 1):
        with st.expander(errors.fmt("Step {i}: {name}", i=i, name=str(call.get("name"))),
                         expanded=len(sample.tool_calls) <= 3):
            st.code(json.dumps(call.get("arguments"), ensure_ascii=False, indent=1, default=str), language="json")
            output = call.get("output")
            st.code(output if isinstance(output, str) else json.dumps(output, ensure_ascii=False, indent=1,
                                                                     default=str), language=None, wrap_lines=True)
    if not sample.tool_calls:
        st.caption("No tool was called.")


def metric_view(ms: Any) -> None:
    """One metric: score, method, LLM and heuristic parts, reasoning, verdicts, raw judge reply."""
    with st.container(border=True):
        st.markdown(f"**{errors.md(ms.name)}** &nbsp; {badge(ms.score, ms.skipped)} &nbsp; "
                    f"<span style='color:{GREY}'>{html.escape(METHOD_LABELS.get(ms.method, ms.method))}</span>",
                    unsafe_allow_html=True)
        parts = [f"{name} part: {value:.3f}" for name, value in
                 (("LLM", ms.llm_score), ("heuristic", ms.heuristic_score)) if value is not None]
        if ms.llm_scores:
            parts.append(f"{len(ms.llm_scores)} judge repeats: {', '.join(f'{v:.3f}' for v in ms.llm_scores)}"
                         + (f" (std {ms.llm_std:.3f})" if ms.llm_std is not None else ""))
        if ms.scored_from == "logprobs":
            parts.append("probability-weighted (G-Eval)")
        if parts:
            st.caption(" · ".join(parts))
        text_block("Reasoning", ms.reasoning)
        if ms.error:
            errors.warning("Judge problem: {problem}", problem=ms.error, icon=":material/warning:")
        if ms.verdicts:
            if isinstance(ms.verdicts[0], dict) and "rank" in ms.verdicts[0]:
                st.caption("Per-rank breakdown (gain × discount adds up to DCG)")
            records_table([{k: str(v) for k, v in item.items()} if isinstance(item, dict) else {"verdict": str(item)}
                           for item in ms.verdicts])
        if ms.raw_reply:
            with st.expander("Judge's raw reply"):
                st.code(ms.raw_reply, language=None, wrap_lines=True)


def result_view(result: EvalResult, marked: bool = False) -> None:
    """The per-metric drill-down of one result, beside its sample's text (`marked`: see sample_view)."""
    left, right = st.columns([2, 3])
    with left:
        sample_view(result.sample, marked)
    with right:
        st.markdown(f"Overall {badge(result.overall_score())}", unsafe_allow_html=True)
        for ms in result.metric_scores().values():
            metric_view(ms)


def records_table(data: Any, **kwargs: Any) -> None:
    """A read-only table (cells are plain text); a missing value shows as an en dash, never as 'None'."""
    st.dataframe(data, hide_index=True, width="stretch", placeholder=NA, **kwargs)


PREVIEW_COLUMNS = 60  # columns a preview shows; the rest are counted in its last header


def preview_table(rows: Sequence[Mapping[str, str]]) -> None:
    """A file's first rows as a plain, escaped HTML table in a scrolling box: one HTML block (text_block's way),
    every line end a <br>, so no Markdown is read in it. Not st.dataframe: its grid is the heaviest thing on a
    first Evaluate page (pandas, Arrow and the grid's code), and a preview of five rows needs none of it.
    Every cell and column name is text, escaped; Arabic reads right to left."""
    if not rows:
        return
    every = [str(c) for c in rows[0]]
    columns = every[:PREVIEW_COLUMNS]  # a file of a million columns must not become a page of a million cells
    cell = ('<td dir="{way}" style="padding:4px 8px;border-bottom:1px solid rgba(128,128,128,.25);'
            'vertical-align:top;max-width:28em;overflow-wrap:anywhere">{text}</td>')
    def text(value: Any) -> str:  # escaped, its line ends as <br>: one HTML block, where Markdown is not read
        return html.escape(_LINE_END.sub("\n", str(value))).replace("\n", "<br>")

    head = "".join(f'<th style="padding:4px 8px;text-align:start;position:sticky;top:0;'
                   f'background:var(--st-background-color,#fff)">{text(c)}</th>' for c in columns)
    if len(every) > len(columns):
        head += f"<th>{text(f'… and {len(every) - len(columns):,} more columns')}</th>"
    body = "".join("<tr>" + "".join(cell.format(way=direction(str(row.get(c, ""))), text=text(row.get(c, "")))
                                    for c in columns) + "</tr>" for row in rows)
    st.markdown(f'<div class="ragmeter-preview" style="max-height:360px;overflow:auto;font-size:0.85rem">'
                f'<table style="border-collapse:collapse;width:max-content;min-width:100%"><thead><tr>{head}</tr>'
                f'</thead><tbody>{body}</tbody></table></div>', unsafe_allow_html=True)


def band_legend() -> None:
    """The score bands with their colours."""
    ranges = service.band_ranges()
    parts = [f'<span style="color:{color}">■</span> {name} ({ranges[name]})' for name, color in service.BAND_COLORS.items()]
    st.caption("Bands: " + " · ".join(parts), unsafe_allow_html=True)
