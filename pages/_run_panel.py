"""The Evaluate page's last steps: the pre-run estimate, Run / Stop with live progress, how the run ended."""
from __future__ import annotations

import json
from typing import Any, Optional

import streamlit as st

from evaluator import service

from pages import _chat_view as chat
from pages import _errors as errors
from pages import _judge as judge_ui
from pages import _nav as nav
from pages import _report_data as report_data
from pages import _runs as runs
from pages import _state as state
from pages._data import LoadedDataset
from pages._views import format_duration


def estimate_view(dataset: LoadedDataset, config: service.RunConfig) -> None:
    """Pre-run estimate: judge calls, tokens and cost (zero for the offline judge)."""
    n, rows = len(dataset.samples), "conversations" if chat.is_conversation_rows(dataset.samples) else "samples"
    if config.offline:
        st.caption(f"Estimate: {n:,} {rows} · 0 judge calls · no cost · a few seconds per 10,000 rows.")
        return
    with errors.guard("Estimating the run"):
        est = judge_ui.estimate(dataset.token, dataset.samples, json.dumps(config.to_dict(), sort_keys=True))
        c1, c2, c3, c4 = st.columns(4)
        c1.metric("Judge calls (est.)", f"{est['calls']:,}")
        c2.metric("Prompt tokens (est.)", f"{est['prompt_tokens']:,}")
        c3.metric("Completion tokens (est.)", f"{est['completion_tokens']:,}")
        c4.metric("Cost (est.)", "give prices" if est["cost"] is None else f"{est['cost']:.4f}")
        st.caption("Estimated from the prompts' text (~4 characters a token); cached replies cost nothing. "
                   + _MODE_NOTE.get(est.get("judge_mode", ""), ""))


# What the estimate assumed about the judge's calls (metrics/combined.py): auto is estimated as grouped.
_MODE_NOTE = {"grouped": "Judge calls grouped (the contexts sent once a sample), as on a server that bills every "
                         "prompt token; a server that reuses a cached prompt prefix (llama.cpp, vLLM, Ollama, "
                         "LM Studio) gets one call per metric instead."}


def run_step(dataset: Optional[LoadedDataset], config: service.RunConfig, step: int = 4, *,
             target: Optional[service.TargetConfig] = None, needs_target: bool = False) -> None:
    st.subheader(f"{step} · Run")
    busy = state.running()
    if not config.metrics:
        errors.warning("Choose at least one metric to score.", icon=":material/warning:")
    if dataset is not None:
        c1, c2 = st.columns(2)
        c1.text_input("Name", key=state.EVAL_NAME, max_chars=service.MAX_NAME_CHARS,
                      placeholder=service.default_run_name(dataset.name, config),
                      help="How History, compare and the reports name this run (empty: dataset · scorer · date).")
        c2.text_input("Project", key=state.EVAL_PROJECT, placeholder=dataset.name,
                      help="Runs are listed by project on the History page (empty: the dataset's name).")
    clicked = st.button("Run evaluation", type="primary", key="btn_run", icon=":material/play_arrow:",
                        disabled=busy or dataset is None or not config.metrics or (needs_target and target is None))
    if clicked and not busy and dataset is not None:  # a click sent while still enabled must not start a second run
        with errors.guard("Starting the run"):
            runs.start_run(dataset.samples, config, dataset_name=dataset.name, key=judge_ui.api_key("eval"),
                           target=target)
            st.rerun()  # redraw with Run disabled while the run goes on
    if state.live_run() is not None:
        runs.live_progress()  # reruns the page when the run ends
    else:
        run_outcome()
    runs.active_runs("eval")  # other tabs' and users' runs, live


def run_outcome() -> None:
    """How the last run ended, with the full progress bar and the way to its report: read from the run's stored
    summary (a few KB), never its rows; from the report in memory only when the history could not keep it."""
    view = report_data.any_view(state.run_meta(), state.report())
    if view is None:
        return
    meta, summary = view.meta, view.summary
    trust = summary.trust
    n = summary.n_rows
    total = meta.total or n
    st.progress(n / total if total else 1.0, text=f"{n:,}/{total:,} samples scored")
    saved = errors.fmt(" Saved to the history as run {id}.", id=errors.code_span(meta.run_id)) if meta.run_id else ""
    stopped = trust.stopped
    fallback, judged = trust.fallback, trust.judged
    cause = trust.main_cause or "see each score"
    ending = service.verdict_of(summary)
    if stopped:
        errors.error("**The run stopped: the judge failed.** {hint}\n\n{n:,} finished rows were kept.{saved} Fix the "
                     "judge settings, then resume it from the History page.", hint=judge_ui.dashboard_hint(stopped),
                     n=n, saved=saved, icon=":material/error:")
    elif meta.error:
        errors.error("The run failed: {problem}. {n:,} finished rows were kept.{saved}",
                     problem=meta.error.rstrip("."), n=n, saved=saved)
    elif meta.status == "interrupted":
        errors.warning("Interrupted: the worker scoring this run shut down or lost it. {n:,} of {total:,} samples "
                       "scored, all kept.{saved} Resume it from the History page.", n=n, total=total, saved=saved)
    elif meta.status == "stopped":
        errors.warning("Stopped: {n:,} of {total:,} samples scored, all kept.{saved} Resume it from the History "
                       "page.", n=n, total=total, saved=saved)
    elif ending is not None and ending.ok and not meta.warning:
        errors.success("Done: {n:,} {rows} of **{name}** in {time}, overall {mean:.3f}.{saved}", n=n,
                       rows="conversations" if summary.conversations else "samples",
                       name=meta.dataset_name, time=format_duration(summary.total_time),
                       mean=summary.overall_mean or 0.0, saved=saved)
    elif ending is not None:  # the same verdict as the CLI's exit code and last line (evaluator/verdict.py)
        verdict_box(ending, saved)
    if fallback and (ending is None or ending.kind != "judge_failed"):
        errors.warning("{fallback:,} of {judged:,} judged scores fell back to the heuristic after a judge failure "
                       "({cause}).", fallback=fallback, judged=judged, cause=cause)
    target = summary.target
    if target is not None and target.failures:
        errors.warning("{failures} of {calls} calls to your pipeline failed: those rows are kept with the reason "
                       "(target_error) and their metrics skipped. See the report.", failures=target.failures,
                       calls=target.calls, icon=":material/error:")
    if meta.warning:
        errors.warning("{warning}", warning=meta.warning)
    if n:
        nav.button_link("Open report", nav.REPORT_PAGE, key="btn_open_report", type="primary",
                        icon=":material/bar_chart:")


def verdict_box(ending: Any, saved: str = "") -> None:
    """A run's verdict when it is not ok: red for an error, amber for a warning (Evaluate and Report)."""
    box = errors.error if ending.severity == "error" else errors.warning
    box("**{label}:** {cause}.{saved}", label=ending.label.capitalize(),
        cause=ending.cause.replace("--max-fallback-rate", "the allowed share"), saved=saved, icon=":material/error:")
