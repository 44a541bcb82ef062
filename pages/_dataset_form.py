"""The Evaluate page's data step: bundled sample or upload, the preview, the column mapping."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import streamlit as st

from evaluator import service

from pages import _chat_view as chat
from pages import _data as data
from pages import _errors as errors
from pages import _state as state
from pages import _team as team
from pages import _views as views

SAMPLE, UPLOAD = "Bundled sample", "Upload a file"
# Every file the CLI reads is taken (.ods, .txt, .gz, .zip too), and no type filter is given to the uploader: its
# own refusal names a MIME type and no fix, while the reader's names the extension and the types it reads.
UPLOAD_LABEL = ("CSV, TSV, JSONL, JSON, Parquet, Excel (.xlsx), OpenDocument (.ods), Unicode Text (.txt) or inspect_ai "
                ".eval file, or one of these compressed (.gz, .zip)")


def upload_limit_mb() -> int:
    """The largest upload this server accepts ([server].max_upload_mb in team mode)."""
    return int(team.config().server.max_upload_mb)


def remember_upload() -> None:
    """file_uploader on_change: keep the upload's bytes (or forget them when the user clears it)."""
    upload = state.get(state.UPLOAD_FILE)
    if upload is None:
        state.drop(state.UPLOAD)
    elif upload.size > upload_limit_mb() * 1_000_000:  # checked before the bytes are read or parsed
        state.drop(state.UPLOAD)
        state.put(state.UPLOAD_REFUSED, upload.size)
    else:
        state.drop(state.UPLOAD_REFUSED)
        state.put(state.UPLOAD, (upload.name, upload.getvalue()))


def read_source() -> Optional[Tuple[str, bytes]]:
    """(file name, bytes) of the bundled sample or the upload; None while nothing is uploaded.

    The choice and the upload's bytes outlive page switches (the uploader widget itself comes back
    empty), so coming back to this page scores the same file, never the sample in its place.
    """
    if not state.has(state.EVAL_SOURCE) and state.has(state.UPLOAD):
        state.put(state.EVAL_SOURCE, UPLOAD)
    source = st.radio("Data source", [SAMPLE, UPLOAD], key=state.EVAL_SOURCE, horizontal=True,
                      persist_state=state.KEEP)
    if source == SAMPLE:
        name = st.selectbox("Sample file", data.bundled_files(), key="eval_sample_file", persist_state=state.KEEP)
        return (name, (data.SAMPLE_DIR / name).read_bytes()) if name else None
    st.file_uploader(UPLOAD_LABEL, key=state.UPLOAD_FILE, on_change=remember_upload,
                     help="Columns: question, answer, contexts, optional ground_truth, sample_id, category, "
                          "human_<metric> labels; headers such as Question, Model answer, Retrieved contexts, "
                          "Expected answer and ID are read too. Mapping below if yours are named differently. "
                          "Files from ragas, deepeval, Phoenix and TruLens are recognised.")
    held = state.get(state.UPLOAD)
    refused = state.get(state.UPLOAD_REFUSED)
    if refused:
        errors.error("This file is {mb:,.1f} MB; this server accepts uploads up to {limit} MB.", mb=refused / 1e6,
                     limit=upload_limit_mb(), icon=":material/block:")
    if held is None:
        errors.info("Upload a file to continue, or switch back to the bundled sample.")
    elif state.get(state.UPLOAD_FILE) is None:
        errors.caption("Using **{name}**, uploaded earlier in this session. Upload another file to replace it.",
                       name=held[0])
    return held


MAX_OPTIONS = 2_000  # columns a mapping select offers


def mapping_widgets(pre: service.DatasetPreview, token: str, needs_answer: bool = True) -> Dict[str, Optional[str]]:
    """One selectbox per field, pre-filled with the detected column; returns field -> column."""
    required = service.REQUIRED_FIELDS if needs_answer else ("question",)
    none = "(not used)"
    # Column names (and nested paths: inputs.question) are options: shown as plain text.
    named = list(pre.columns) + [p for p in pre.paths if p not in pre.columns]
    # a select of a million options would be a message of megabytes per widget: the first MAX_OPTIONS
    # columns, and every column the reader detected, are offered
    offered = named[:MAX_OPTIONS]
    options = [none] + list(dict.fromkeys(offered + [c for c in pre.mapping.values() if c]))
    if len(named) > MAX_OPTIONS:
        errors.caption("The lists offer the first {n:,} of the file's {total:,} columns.", n=MAX_OPTIONS,
                       total=len(named))
    mapping: Dict[str, Optional[str]] = {}
    cols = st.columns(4)
    for i, name in enumerate(service.DATASET_FIELDS):
        detected = pre.mapping.get(name)
        choice = cols[i % 4].selectbox(name + (" *" if name in required else ""), options, key=f"map_{name}_{token}",
                                       index=options.index(detected) if detected in options else 0,
                                       persist_state=state.KEEP)
        mapping[name] = None if choice == none else choice
    return mapping


def preview_view(pre: service.DatasetPreview, name: str) -> None:
    """What the file is and how it is read: format, size, human labels, the reader's notes, first rows."""
    labels = f" · human labels: {', '.join(pre.label_columns)}" if pre.label_columns else ""
    errors.caption("**{name}** · {format} · {rows:,} rows · {columns} columns{labels}", name=name,
                   format=pre.format.upper(), rows=pre.row_count, columns=len(pre.columns), labels=labels)
    for note in pre.notes:
        errors.info("{note}", note=note, icon=":material/info:")
    views.preview_table(service.preview_cells(pre))


def sheet_select(content: bytes, name: str, max_bytes: int) -> Tuple[service.DatasetPreview, Optional[str]]:
    """The preview of the sheet the user picks (a workbook with several sheets: a Sheet select, the one found first)."""
    key = f"eval_sheet_{service.digest(content)}"
    pre = data.preview(content, name, max_bytes, state.get(key))
    if len(pre.sheets) < 2:
        return pre, pre.sheet
    chosen = st.selectbox("Sheet", pre.sheets, index=pre.sheets.index(pre.sheet) if pre.sheet in pre.sheets else 0,
                          key=key, help="The workbook's sheet that holds one sample per row.")
    return (pre if chosen == pre.sheet else data.preview(content, name, max_bytes, chosen)), chosen


def warnings_view(pre: service.DatasetPreview, mapping: Dict[str, Optional[str]]) -> None:
    """A yellow box for each unread column that looks like a reference, contexts or ids (no silent drop)."""
    for warning in service.mapping_warnings(pre, mapping):
        errors.warning("{warning}", warning=warning, icon=":material/visibility_off:")


def dataset_step(needs_answer: bool = True) -> Optional[data.LoadedDataset]:
    st.subheader("1 · Data")
    with st.expander("Upload limits"):
        c1, c2 = st.columns(2)
        max_rows = int(c1.number_input("Max rows", 1, 10_000_000, data.DEFAULT_MAX_ROWS, key="eval_max_rows",
                                       persist_state=state.KEEP))
        limit = min(data.DEFAULT_MAX_MB, upload_limit_mb())
        max_mb = min(limit, c2.number_input("Max file size (MB)", 1, limit, limit, key="eval_max_mb",
                                            persist_state=state.KEEP))
    picked = read_source()
    if picked is None:
        return None
    name, content = picked
    if chat.is_conversation_file(content, name, int(max_mb * 1_000_000)):  # previewed as conversations
        return chat.dataset_step(content, name, int(max_mb * 1_000_000))
    try:
        pre, sheet = sheet_select(content, name, int(max_mb * 1_000_000))
        preview_view(pre, name)
        missing = [f for f in pre.missing if needs_answer or f != "answer"]
        with st.expander("Column mapping", expanded=bool(missing)):
            mapping = mapping_widgets(pre, service.digest(content) + (sheet or ""), needs_answer)
        warnings_view(pre, mapping)
        return data.load_bytes(content, name, mapping, max_rows=max_rows, max_bytes=int(max_mb * 1_000_000),
                               needs_answer=needs_answer, held=state.dataset(), sheet=sheet)
    except service.DatasetError as exc:
        errors.error("Cannot use this file. {problem}", problem=exc, icon=":material/block:")
        return None
