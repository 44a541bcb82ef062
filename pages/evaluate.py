"""Evaluate: pick the data, check how columns are read, choose a judge, run with live progress."""
import json
from dataclasses import replace
from typing import Any, Dict, List, Optional

import streamlit as st

from evaluator.io.datasets import FIELDS, REQUIRED, DatasetPreview
from evaluator.analysis import judging
from evaluator.errors import DatasetError
from evaluator.targets import TargetConfig
from evaluator.runs import RunConfig
from evaluator.verdict import verdict

from pages import _chat_view as chat
from pages import _rubrics as rubric_ui
from pages import _target
from pages import _team as team
from pages import _ui as ui

ui.page_setup("Evaluate")
team.require("evaluator")  # team mode: viewers open reports and history, but do not upload or run
UPLOAD_LIMIT_MB = team.config().server.max_upload_mb


def bundled_files() -> List[str]:
    """The bundled sample files, the default first."""
    names = sorted(p.name for p in ui.SAMPLE_DIR.glob("*") if p.suffix in (".csv", ".jsonl", ".json"))
    return sorted(names, key=lambda n: n != ui.DEFAULT_SAMPLE)


def remember_upload() -> None:
    """file_uploader on_change: keep the upload's bytes (or forget them when the user clears it)."""
    upload = st.session_state.get("upload_file")
    if upload is None:
        st.session_state.pop(ui.UPLOAD, None)
    elif upload.size > UPLOAD_LIMIT_MB * 1_000_000:  # checked before the bytes are read or parsed
        st.session_state.pop(ui.UPLOAD, None)
        st.session_state["eval_upload_refused"] = upload.size
    else:
        st.session_state.pop("eval_upload_refused", None)
        st.session_state[ui.UPLOAD] = (upload.name, upload.getvalue())


SAMPLE, UPLOAD = "Bundled sample", "Upload a file"


def read_source() -> Optional[tuple]:
    """(file name, bytes) of the bundled sample or the upload; None while nothing is uploaded.

    The choice and the upload's bytes outlive page switches (the uploader widget itself comes back
    empty), so coming back to this page scores the same file, never the sample in its place.
    """
    if "eval_source" not in st.session_state and ui.UPLOAD in st.session_state:
        st.session_state["eval_source"] = UPLOAD
    source = st.radio("Data source", [SAMPLE, UPLOAD], key="eval_source", horizontal=True, persist_state="session")
    if source == SAMPLE:
        name = st.selectbox("Sample file", bundled_files(), key="eval_sample_file", persist_state="session")
        return (name, (ui.SAMPLE_DIR / name).read_bytes()) if name else None
    st.file_uploader("CSV, JSONL, JSON or Parquet file", type=["csv", "tsv", "jsonl", "ndjson", "json", "parquet"],
                     key="upload_file", on_change=remember_upload,
                     help="Columns: question, answer, contexts, optional ground_truth, sample_id, category, "
                          "human_<metric> labels. Mapping below if yours are named differently. Files from "
                          "ragas, deepeval, Phoenix and TruLens are recognised.")
    held = st.session_state.get(ui.UPLOAD)
    refused = st.session_state.get("eval_upload_refused")
    if refused:
        st.error(f"This file is {refused / 1e6:,.1f} MB; this server accepts uploads up to {UPLOAD_LIMIT_MB} MB.",
                 icon=":material/block:")
    if held is None:
        st.info("Upload a file to continue, or switch back to the bundled sample.")
    elif st.session_state.get("upload_file") is None:
        st.caption(f"Using **{held[0]}**, uploaded earlier in this session. Upload another file to replace it.")
    return held


def preview_rows(pre: DatasetPreview) -> List[Dict[str, str]]:
    """The preview's first rows as text (JSON cells may hold lists or objects)."""
    def cell(value: Any) -> str:
        if isinstance(value, str):
            return value if len(value) <= 300 else value[:297] + "…"
        return "" if value is None else json.dumps(value, ensure_ascii=False, default=str)[:300]

    return [{str(k): cell(v) for k, v in row.items()} for row in pre.rows]


def mapping_widgets(pre: DatasetPreview, token: str, needs_answer: bool = True) -> Dict[str, Optional[str]]:
    """One selectbox per field, pre-filled with the detected column; returns field -> column."""
    required = REQUIRED if needs_answer else ("question",)
    none = "(not used)"
    options = [none] + list(pre.columns) + [p for p in pre.paths if p not in pre.columns]  # nested: inputs.question
    mapping: Dict[str, Optional[str]] = {}
    cols = st.columns(4)
    for i, name in enumerate(FIELDS):
        detected = pre.mapping.get(name)
        choice = cols[i % 4].selectbox(name + (" *" if name in required else ""), options, key=f"map_{name}_{token}",
                                       index=options.index(detected) if detected in options else 0,
                                       persist_state="session")
        mapping[name] = None if choice == none else choice
    return mapping


def dataset_step(needs_answer: bool = True) -> Optional[ui.LoadedDataset]:
    st.subheader("1 · Data")
    with st.expander("Upload limits"):
        c1, c2 = st.columns(2)
        max_rows = int(c1.number_input("Max rows", 1, 10_000_000, ui.DEFAULT_MAX_ROWS, key="eval_max_rows",
                                       persist_state="session"))
        limit = min(ui.DEFAULT_MAX_MB, UPLOAD_LIMIT_MB)
        max_mb = min(limit, c2.number_input("Max file size (MB)", 1, limit, limit, key="eval_max_mb",
                                            persist_state="session"))
    picked = read_source()
    if picked is None:
        return None
    name, data = picked
    if chat.is_conversation_file(data, name, int(max_mb * 1_000_000)):  # previewed as conversations
        return chat.dataset_step(data, name, int(max_mb * 1_000_000))
    try:
        pre = ui.preview(data, name, int(max_mb * 1_000_000))
        st.caption(f"**{name}** · {pre.format.upper()} · {pre.row_count:,} rows · {len(pre.columns)} columns"
                   + (f" · human labels: {', '.join(pre.label_columns)}" if pre.label_columns else ""))
        for note in pre.notes:
            st.info(note, icon=":material/info:")
        ui.records_table(preview_rows(pre))
        missing = [f for f in pre.missing if needs_answer or f != "answer"]
        with st.expander("Column mapping", expanded=bool(missing)):
            mapping = mapping_widgets(pre, ui.digest(data), needs_answer)
        dataset = ui.load_bytes(data, name, mapping, max_rows=max_rows, max_bytes=int(max_mb * 1_000_000),
                                needs_answer=needs_answer)
    except DatasetError as exc:
        st.error(f"Cannot use this file. {exc}", icon=":material/block:")
        return None
    return dataset


def estimate_view(dataset: ui.LoadedDataset, config: RunConfig) -> None:
    """Pre-run estimate: judge calls, tokens and cost (zero for the offline judge)."""
    n = len(dataset.samples)
    if chat.is_conversation_rows(dataset.samples):
        chat.estimate_caption(dataset, config.offline)
        return
    if config.offline:
        st.caption(f"Estimate: {n:,} samples · 0 judge calls · no cost · a few seconds per 10,000 rows.")
        return
    with ui.guard("Estimating the run"):
        est = ui.estimate(dataset.token, dataset.samples, json.dumps(config.to_dict(), sort_keys=True))
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Judge calls (est.)", f"{est['calls']:,}")
        c2.metric("Prompt tokens (est.)", f"{est['prompt_tokens']:,}")
        c3.metric("Completion tokens (est.)", f"{est['completion_tokens']:,}")
        c4.metric("Cost (est.)", "give prices" if est["cost"] is None else f"{est['cost']:.4f}")
        st.caption("Estimated from the prompts' text (~4 characters a token); cached replies cost nothing.")


def run_step(dataset: Optional[ui.LoadedDataset], config: RunConfig, step: int = 4, *,
             target: Optional[TargetConfig] = None, needs_target: bool = False) -> None:
    st.subheader(f"{step} · Run")
    live = st.session_state.get(ui.LIVE)
    busy = live is not None and live.running
    if not config.metrics:
        st.warning("Choose at least one metric to score.", icon=":material/warning:")
    if dataset is not None:
        st.text_input("Project", key="eval_project", placeholder=dataset.name,
                      help="Runs are listed by project on the History page (empty: the dataset's name).")
    clicked = st.button("Run evaluation", type="primary", key="btn_run", icon=":material/play_arrow:",
                        disabled=busy or dataset is None or not config.metrics or (needs_target and target is None))
    if clicked and not busy:  # a click sent while the button was still enabled must not start a second run
        with ui.guard("Starting the run"):
            ui.start_run(dataset.samples, config, dataset_name=dataset.name, key=ui.api_key("eval"), target=target)
            st.rerun()  # redraw with Run disabled while the run goes on
    if live is not None:
        controls = st.empty()
        with controls.container():
            if st.button("Stop run", key="btn_stop", icon=":material/stop:",
                         help="Finish the samples in flight, keep every finished row."):
                live.stop()
            if live.stopping:
                st.caption("Stopping: finishing the samples in flight. Every finished row is kept.")
        ui.watch(live)
        controls.empty()
        # Run was drawn disabled (and the sidebar said "in progress") before the run ended: redraw.
        st.rerun()
    run_outcome()


def run_outcome() -> None:
    """How the last run ended, with the full progress bar and the way to its report."""
    report, meta = st.session_state.get(ui.REPORT), st.session_state.get(ui.RUN)
    if report is None or meta is None:
        return
    n, total = len(report.results), meta.total or len(report.results)
    st.progress(n / total if total else 1.0, text=f"{n:,}/{total:,} samples scored")
    saved = f" Saved to the history as run `{meta.run_id}`." if meta.run_id else ""
    stopped = judging.stopped_reason(report)
    fallback, judged = judging.fallback_counts(report)
    ending = verdict(report)
    if stopped:
        st.error(f"**The run stopped: the judge failed.** {ui.dashboard_hint(stopped)}\n\n{n:,} finished rows were "
                 f"kept.{saved} Fix the judge settings, then resume it from the History page.",
                 icon=":material/error:")
    elif meta.error:
        st.error(f"The run failed: {meta.error.rstrip('.')}. {n:,} finished rows were kept.{saved}",
                 icon=":material/warning:")
    elif meta.status == "stopped":
        st.warning(f"Stopped: {n:,} of {total:,} samples scored, all kept.{saved} Resume it from the History page.")
    elif ending.ok:
        chats = chat.is_conversation_rows([r.sample for r in report.results if r.sample is not None])
        rows = "conversations" if chats else "samples"
        st.success(f"Done: {n:,} {rows} of **{meta.dataset_name}** in {ui.format_duration(report.total_time)}, "
                   f"overall {report.overall_mean():.3f}.{saved}", icon=":material/check_circle:")
    else:  # the same verdict as the CLI's exit code and last line (evaluator/verdict.py)
        box = st.error if ending.severity == "error" else st.warning
        cause = ending.cause.replace("--max-fallback-rate", "the allowed share")
        box(f"**{ending.label.capitalize()}:** {ui.plain(cause)}.{saved}", icon=":material/error:")
    if fallback and ending.kind != "judge_failed":
        st.warning(f"{fallback:,} of {judged:,} judged scores fell back to the heuristic after a judge failure "
                   f"({judging.main_cause(report) or 'see each score'}).")
    target = report.target_stats()
    if target and target["failures"]:
        st.warning(f"{target['failures']} of {target['calls']} calls to your pipeline failed: those rows are kept "
                   "with the reason (target_error) and their metrics skipped. See the report.",
                   icon=":material/error:")
    if meta.warning:
        st.warning(meta.warning)
    if n:
        ui.button_link("Open report", ui.REPORT_PAGE, key="btn_open_report", type="primary",
                       icon=":material/bar_chart:")


st.title(":material/science: Evaluate")
st.caption("Score every sample on faithfulness, answer relevancy, context precision, context recall and "
           "answer correctness, or the metrics you choose and define. The bundled sample and the offline "
           "judge work with no key: just press Run.")
answers = _target.answers_source()
dataset = dataset_step(needs_answer=answers == _target.FROM_FILE)
if dataset is None:  # nothing to score: the sidebar must not go on naming the last dataset
    st.session_state.pop(ui.DATASET, None)
else:
    st.session_state[ui.DATASET] = dataset
ui.refresh_sidebar()  # drawn before this page chose its dataset
piped = answers == _target.FROM_PIPELINE
step, target = 2, None
if piped:
    st.subheader(f"{step} · Your pipeline")
    target = _target.target_form()
    _target.try_target_button(target, dataset.samples if dataset is not None else None)
    step += 1
st.subheader(f"{step} · Judge")
config = ui.judge_widgets("eval")
st.subheader(f"{step + 1} · Metrics")
config = replace(config, **rubric_ui.metric_widgets(config.offline))
if dataset is not None and config.metrics:
    estimate_view(dataset, config)
run_step(dataset, config, step + 2, target=target, needs_target=piped)
