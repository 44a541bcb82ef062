"""Runs in the session: start one, follow it live, collect its report, open the history.

A run is an evaluator.runs.run.Run on its own thread, so Stop keeps every finished row and leaving
the page does not kill it. Pages never wait for it: `live_progress` is an st.fragment that
Streamlit reruns every UI_INTERVAL seconds (the browser asks for it), redrawing only the progress;
when the run has ended it collects the report and reruns the whole page, which then shows how
the run ended.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import streamlit as st
from streamlit import config as st_config

from evaluator.config import ConfigError, typed_history_path
from evaluator.store.history import RunInfo, RunStore, default_history_location
from evaluator.model import EvalReport, EvalSample
from evaluator.runs.run import Run, RunConfig

from pages import _errors as errors
from pages import _state as state
from pages import _team as team
from pages._views import format_duration

UI_INTERVAL = 0.25  # seconds between progress redraws: 4 a second, however fast the judge scores


def history_path() -> str:
    """The history: [server].history in team mode (never typed); on a laptop the sidebar's file when
    config.typed_history_path accepts it, else $RAGMETER_HISTORY or ~/.ragmeter."""
    cfg = team.config()
    if cfg.server.history:
        return cfg.server.history
    default = str(default_history_location())
    typed = state.get(state.HISTORY_PATH)
    if cfg.team or not typed or typed == default:
        return default
    try:
        return str(typed_history_path(typed))
    except ConfigError:
        return default  # the sidebar shows why under the field


TEAM_HISTORY = "this team's shared run history"  # what team mode calls its history: never its URL or path


def open_store() -> RunStore:
    """The run history; raises HistoryError with a fix when the path cannot be used. In team mode it
    is named by a label in every message: the database URL (user, host, port) is the operator's."""
    return RunStore(history_path(), label=TEAM_HISTORY if team.config().team else None)


@dataclass
class RunMeta:
    """Which run the Report page shows. `token` keys the cached charts and tables of this report."""

    dataset_name: str
    settings: Dict[str, Any]
    status: str
    run_id: Optional[str] = None
    created_at: str = ""
    total: int = 0  # samples in the run (more than the report holds when it was stopped)
    error: Optional[str] = None
    warning: Optional[str] = None
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    # Whether the Report reads this run from the history (its stored summary and 50-row pages, issue 28)
    # rather than from the report held in memory: not when its rows could not all be saved.
    paged: bool = True
    n_rows: Optional[int] = None  # rows with a result, and their overall mean: the sidebar's line when the
    overall: Optional[float] = None  # report was opened from the history (no report held in memory)


def show_report(report: Optional[EvalReport], meta: RunMeta) -> None:
    """Make the run `meta` names the one the Report page shows; `report` is its rows held in memory, None for
    a stored run (the Report pages through the history instead)."""
    if report is None:
        state.drop(state.REPORT)
    else:
        state.put(state.REPORT, report)
    state.put(state.RUN, meta)


def stored_meta(info: RunInfo) -> RunMeta:
    """What the Report needs to show a stored run: never its rows."""
    return RunMeta(info.dataset_name, info.settings, info.status, info.run_id, info.created_at, total=info.n_samples,
                   n_rows=info.n_done, overall=info.overall_mean)


def open_run(run_id: str) -> None:
    """Make the stored run `run_id` the report shown (a share link's target); HistoryError if unknown."""
    show_report(None, stored_meta(open_store().get_run(run_id)))


def share_url(path: str) -> str:
    """`path` (e.g. /report?run=ID) on this dashboard's own address, as the browser sees it."""
    url = str(getattr(st.context, "url", "") or "")
    parts = url.split("/", 3)
    origin = "/".join(parts[:3]) if url.startswith(("http://", "https://")) and len(parts) >= 3 else ""
    return origin + path


def start_run(samples: List[EvalSample], config: RunConfig, *, dataset_name: str, key: str = "",
              judge: Any = None, target: Any = None) -> Run:
    """Score `samples` on a background thread, saved to the history; the run goes in session state.

    `key` is the API key for this run only; `judge` overrides the one `config` describes (tests pass a slow one);
    `target` (a TargetConfig) answers each question first. NotAllowed when this session's user may not run.
    """
    team.authorize("run")
    run = Run.new(config, samples, dataset_name=dataset_name, store=history_path(), api_key=key,
                 judge=judge, target=target, owner=team.owner(),
                 project=str(state.get(state.EVAL_PROJECT) or "").strip() or None)
    return follow(run.start())


def follow(run: Run) -> Run:
    """Make a started run (new, resumed or re-scored) the session's live run."""
    state.put(state.LIVE, run)
    return run


def collect(run: Run) -> None:
    """Make an ended run's report the current one, once: whoever sees it end first collects it."""
    if state.live_run() is not run:
        return
    state.drop(state.LIVE)
    show_report(run.report or EvalReport(), RunMeta(run.dataset_name, run.settings, run.status, run.run_id,
                                                    total=run.total, error=run.error, warning=run.warning,
                                                    paged=bool(run.run_id) and not run.history_error))


def finish(run: Run) -> None:
    """Wait for `run` to end, then collect it (for scripts that need the report now)."""
    run.join()
    collect(run)


def no_browser() -> bool:
    """Under AppTest no browser asks for the fragment's reruns, so it waits for the run instead."""
    return bool(st_config.get_option("global.appTest"))  # st.get_option does not see AppTest's patch


@st.fragment(run_every=UI_INTERVAL)
def live_progress(stoppable: bool = False) -> None:
    """The live run's progress (with a Stop button when `stoppable`); reruns the page when the run ends.

    The browser may still ask for this fragment after the page has moved on (its timer outlives the
    run); with no live run it then draws nothing, rather than rerunning the page again and again.
    """
    run = state.live_run()
    if run is None:
        return
    if no_browser():
        run.join()
    if not run.running:
        collect(run)
        st.rerun()  # the whole page: it shows the finished run, the sidebar its report
    if stoppable:
        if st.button("Stop run", key="btn_stop", icon=":material/stop:",
                     help="Finish the samples in flight, keep every finished row."):
            with errors.guard("Stopping the run"):
                team.authorize("stop", run.owner)
                run.stop()
        if run.stopping:
            st.caption("Stopping: finishing the samples in flight. Every finished row is kept.")
    progress_view(run)


def progress_view(run: Run) -> None:
    """Progress bar with done/total, elapsed, ETA and the running means."""
    frac = min(run.done / run.total, 1.0) if run.total else 1.0
    if run.target is not None:  # two stages: the pipeline answers, the judge scores each answer as it comes
        asked = min(run.answered / run.total, 1.0) if run.total else 1.0
        st.progress(asked, text=f"{run.answered:,}/{run.total:,} questions answered by your pipeline ({asked:.0%})")
    st.progress(frac, text=f"{run.done:,}/{run.total:,} samples scored ({frac:.0%})")
    cells = st.columns(4 if run.target is not None else 3)
    if run.target is not None:
        cells[0].metric("Answered", f"{run.answered:,}/{run.total:,}")
    c1, c2, c3 = cells[-3:]
    c1.metric("Scored", f"{run.done:,}/{run.total:,}")
    c2.metric("Elapsed", format_duration(run.elapsed()))
    c3.metric("ETA", format_duration(run.eta()) if run.running else "done")
    if run.batch_status and run.running and not run.done:
        errors.info("Batch API: {status}. Stopping or closing the page is safe: resume this run from the History "
                    "page to pick the batch up.", status=run.batch_status, icon=":material/schedule:")
    means = run.means()
    if means:
        errors.caption("Running means: {means}", means=" · ".join(f"{n} {v:.3f}" for n, v in means.items()))
