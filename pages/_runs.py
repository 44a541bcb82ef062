"""Runs from the dashboard: submit one as a job, follow it live, stop it, open its report when it ends.

A run is a job in the history (service.submit_run): submitting writes it, a worker scores it
(this process's `local_worker`, a child process, on a laptop; `ragmeter worker`s when the team config says
`[runs] workers = "external"`), heartbeating a small progress record. Session state holds only the
run id. `live_progress` is an st.fragment the browser reruns every POLL seconds: one small read
(`service.job`, the job row and its progress record, a few hundred bytes), never the rows, so a
watched run scores as fast as an unwatched one. When the job has ended the page opens the run's
report from the history and reruns. Any tab or replica reads the same record: `active_runs`
lists every queued and running job, with Stop for its owner and admins (`service.stop_run` checks
again at the write).
"""
from __future__ import annotations

import threading
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional

import streamlit as st
from streamlit import config as st_config

from evaluator import service
from evaluator.model import EvalReport, EvalSample

from pages import _errors as errors
from pages import _state as state
from pages import _team as team
from pages._views import format_duration

UI_INTERVAL = 0.25  # seconds between redraws of progress held in this process (the Generate page's)
POLL = 0.5  # seconds between progress reads of the run this session follows (a worker heartbeats as often)
LIST_POLL = 1.0  # seconds between reads of every queued and running job (History, Evaluate, Report)
WAIT_NO_BROWSER = 300.0  # AppTest has no browser to rerun the fragment: it waits this long for the run to end


def history_path() -> str:
    """The history: [server].history in team mode (never typed); on a laptop the sidebar's file when it
    may be used, else $RAGMETER_HISTORY or ~/.ragmeter."""
    return service.history_location(team.config(), state.get(state.HISTORY_PATH))


def open_store() -> service.RunStore:
    """The run history; raises HistoryError with a fix when the path cannot be used. In team mode it
    is named by a label in every message: the database URL (user, host, port) is the operator's."""
    return _store(history_path(), team.config().team)


@st.cache_resource(show_spinner=False, max_entries=8)
def _store(location: str, shared: bool) -> service.RunStore:
    """One history handle per location for the whole server (its connections are per thread): a progress
    poll then costs one query, not a migration check and a new handle."""
    return service.open_history(location, shared)


def runs_settings() -> Any:
    """The config's [runs] table: caps, and whether this process or `ragmeter worker`s score runs."""
    return team.config().runs


def limits() -> service.Limits:
    """The caps of [runs] (0 = none) for submitting and claiming."""
    return runs_settings().limits


def external_workers() -> bool:
    """`[runs] workers = "external"`: `ragmeter worker` processes score runs, not this dashboard."""
    return runs_settings().workers == "external"


def queue() -> Any:
    """The job queue under the team's caps (scripts and tests read a job's progress through it)."""
    return service.job_queue(open_store(), limits())


_hooked: List[bool] = []  # whether the process's exit stops the local workers (hooked once)
_hook_lock = threading.Lock()


def ensure_worker(run_id: Optional[str] = None) -> None:
    """Start this process's worker for the history (not when workers are external): a worker process
    scores unpinned runs (runs/child.py; one that died is started again), a thread here the pinned
    ones. The process's exit stops them: runs in flight end "interrupted" with every finished row saved.

    WorkerError when the worker process cannot start; run `run_id`, when only that process could score
    it, is stopped then rather than left waiting in line for nobody."""
    if external_workers():
        return
    with _hook_lock:
        if not _hooked:
            _hooked.append(True)
            _on_exit(service.stop_workers)
    service.start_worker(open_store(), history_path(), run_id)


def _on_exit(stop: Callable[[], Any]) -> None:
    """Call `stop` when the interpreter shuts down, before it waits for non-daemon threads.

    Streamlit handles SIGTERM itself (it stops its server and the main thread returns); a signal
    handler can only be set from the main thread, which page code never runs on. The scoring pool of
    a run would then keep the process alive until the run ends. threading's own exit hooks run
    first, on the main thread, newest first (concurrent.futures joins its pools from an older one).
    """
    register = getattr(threading, "_register_atexit", None)
    if register is None:  # not CPython 3.9+: atexit runs later, after non-daemon threads are joined
        import atexit
        atexit.register(stop)
        return
    register(stop)


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
    name: str = ""  # the run's name as every list shows it (RunInfo.label: given, or "dataset · scorer · date")
    project: Optional[str] = None

    @property
    def scorer(self) -> str:
        """Who scored the run: "MODEL at HOST", or "offline heuristics (default | jaccard | embedding)"."""
        return service.scorer_label(self.settings)

    @property
    def title(self) -> str:
        """The run's name as the Report's header and its files show it."""
        return service.run_title(self.dataset_name, self.settings or {}, self.created_at, self.name or None)


def show_report(report: Optional[EvalReport], meta: RunMeta) -> None:
    """Make the run `meta` names the one the Report page shows; `report` is its rows held in memory, None for
    a stored run (the Report pages through the history instead)."""
    if report is None:
        state.drop(state.REPORT)
    else:
        state.put(state.REPORT, report)
    state.put(state.RUN, meta)


def stored_meta(info: service.RunInfo, *, error: Optional[str] = None, warning: Optional[str] = None) -> RunMeta:
    """What the Report needs to show a stored run: never its rows."""
    return RunMeta(info.dataset_name, info.settings, info.status, info.run_id, info.created_at, total=info.n_samples,
                   error=error, warning=warning, n_rows=info.n_done, overall=info.overall_mean, name=info.label,
                   project=info.project)


def open_run(run_id: str, *, error: Optional[str] = None, warning: Optional[str] = None) -> None:
    """Make the stored run `run_id` the report shown (a share link's target); HistoryError if unknown."""
    show_report(None, stored_meta(service.run_info(open_store(), run_id), error=error, warning=warning))


def open_latest() -> bool:
    """Open the newest finished run (a Report opened with none chosen); False when the history has none."""
    found = service.latest_finished_run(open_store())
    if found is None:
        return False
    show_report(None, stored_meta(found))
    return True


LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "0.0.0.0")


def is_loopback(url: str) -> bool:
    """Whether `url` names this machine only (a link that works nowhere else)."""
    host = url.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0] if "://" in url else ""
    return host.lower() in LOOPBACK or host.startswith("127.")


def share_url(path: str) -> str:
    """`path` (e.g. /report?run=ID) on this dashboard's own address, as the browser sees it."""
    url = str(getattr(st.context, "url", "") or "")
    parts = url.split("/", 3)
    origin = "/".join(parts[:3]) if url.startswith(("http://", "https://")) and len(parts) >= 3 else ""
    return origin + path


# --- submitting -----------------------------------------------------------------------------------
def _secret(key: str) -> str:
    """An API key goes to this process's worker only: external workers read their own environment."""
    return "" if external_workers() else key


def start_run(samples: List[EvalSample], config: service.RunConfig, *, dataset_name: str, key: str = "",
              judge: Any = None, target: Any = None) -> str:
    """Queue `samples` as a new run in the history; the session follows it. Returns the run id.

    `key` is the API key for this run only (kept in this process's memory, never stored); `judge`
    overrides the one `config` describes (tests pass a slow one); `target` (a TargetConfig) answers
    each question first. NotAllowed when this session's user may not run; QueueFull at the team's cap.
    """
    run_id = service.submit_run(open_store(), config, samples, dataset_name=dataset_name, access=team.access(),
                                owner=team.owner(), project=str(state.get(state.EVAL_PROJECT) or "").strip() or None,
                                target=target, api_key=_secret(key), judge=judge, limits=limits(),
                                name=str(state.get(state.EVAL_NAME) or "") or None)
    ensure_worker(run_id)
    return follow(run_id)


def resume_run(info: service.RunInfo, *, api_key: str = "", config: Optional[service.RunConfig] = None,
               target_headers: Optional[List[str]] = None) -> str:
    """Queue the rest of stored run `info` (only rows without a result); the session follows it."""
    run_id = service.resume_run(open_store(), info, access=team.access(), api_key=_secret(api_key), config=config,
                                target_headers=target_headers or [], limits=limits(), external=external_workers())
    ensure_worker(run_id)
    return follow(run_id)


def rescore_run(info: service.RunInfo, config: service.RunConfig, *, api_key: str = "", name: str = "") -> str:
    """Queue a new run scoring run `info`'s saved answers with `config`'s judge, named `name` (empty: the default
    name); the session follows it."""
    run_id = service.rescore_run(open_store(), info, config, access=team.access(), owner=team.owner(),
                                 api_key=_secret(api_key), limits=limits(), name=name.strip() or None)
    ensure_worker(run_id)
    return follow(run_id)


def follow(run_id: str) -> str:
    """Make run `run_id` (queued, resumed or re-scored) the one this session follows live."""
    state.put(state.LIVE, run_id)
    return run_id


# --- stopping -------------------------------------------------------------------------------------
def stop_run(run_id: str) -> None:
    """Ask the run's worker to stop it (a queued run ends at once); every finished row is kept.

    Only the run's owner and admins: checked by the service, at the write, whatever button led here."""
    service.stop_run(open_store(), run_id, access=team.access())


def job(run_id: str) -> Optional[service.JobInfo]:
    """The job of a run or a generation: its state, place in line and progress (one small read)."""
    return service.job(open_store(), run_id)


def active(found: Optional[service.JobInfo]) -> bool:
    return service.is_active(found)


def wait_ended(run_id: str, timeout: float) -> Optional[service.JobInfo]:
    """The run's job once it is no longer queued or running (or after `timeout` seconds)."""
    return service.wait_ended(open_store(), run_id, timeout)


# --- following ------------------------------------------------------------------------------------
def collect(run_id: str, ended: Optional[service.JobInfo]) -> None:
    """Make an ended run's report the current one, once: whoever sees it end first collects it."""
    if state.live_run() != run_id:
        return
    state.drop(state.LIVE)
    progress = ended.progress if ended is not None else None
    error = getattr(progress, "error", None) if progress is not None else None
    lost = (ended.lost_rows or (progress.lost_rows if progress else 0)) if ended is not None else 0
    warning = (f"{lost:,} finished row{'' if lost == 1 else 's'} could not be saved to the history; "
               "resume the run to score them again.") if lost else None
    open_run(run_id, error=error, warning=warning)


def finish(run_id: str, timeout: float = WAIT_NO_BROWSER) -> None:
    """Wait for run `run_id` to end, then collect it (scripts and AppTest that need the report now)."""
    collect(run_id, wait_ended(run_id, timeout))


def no_browser() -> bool:
    """Under AppTest no browser asks for the fragment's reruns, so it waits for the run instead."""
    return bool(st_config.get_option("global.appTest"))  # st.get_option does not see AppTest's patch


@st.fragment(run_every=POLL)
def live_progress(stoppable: bool = True) -> None:
    """This session's run: its progress (Stop for its owner and admins); reruns the page when it ends.

    The browser may still ask for this fragment after the page has moved on (its timer outlives the
    run); with no live run it then draws nothing, rather than rerunning the page again and again.
    """
    run_id = state.live_run()
    if run_id is None:
        return
    found = wait_ended(run_id, WAIT_NO_BROWSER) if no_browser() else job(run_id)
    if not active(found):
        collect(run_id, found)
        st.rerun()  # the whole page: it shows the finished run, the sidebar its report
    assert found is not None
    if found.state == "queued" and not found.pinned:  # queued again: its worker process died mid-run
        with errors.guard("Starting the dashboard's worker"):
            ensure_worker()
    job_view(found, stoppable=stoppable, key="live")


def job_view(job: service.JobInfo, *, stoppable: bool, key: str) -> None:
    """One queued or running job: where it stands, its progress, and Stop when this user may stop it."""
    slot = st.empty()  # the Stop button, gone once it has been pressed
    if stoppable and not job.stop_requested and team.may("stop", job.owner):
        if slot.button("Stop run", key=f"btn_stop_{key}_{job.run_id}", icon=":material/stop:",
                       help="Finish the samples in flight, keep every finished row."):
            with errors.guard("Stopping the run"):
                stop_run(job.run_id)
                slot.empty()
                job = service.job(open_store(), job.run_id) or job
                if not active(job):  # it was queued: it ended at once
                    errors.caption("Stopped before it started.")
                    return
    if job.stop_requested:
        st.caption("Stopping: finishing the samples in flight. Every finished row is kept.")
    if job.state == "queued":
        again = " It was interrupted and will resume where it stopped." if job.attempts else ""
        errors.info("Queued: {place} in line, waiting for a free worker.{again}",
                    place=ordinal(job.position or 1), again=again, icon=":material/schedule:")
        return
    progress_view(job.progress or service.Progress(done=0, total=0))


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, 11th, 21st ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def progress_view(p: service.Progress) -> None:
    """Progress bar with done/total, elapsed, ETA and the running means, from the job's record."""
    frac = min(p.done / p.total, 1.0) if p.total else 0.0
    if p.has_target:  # two stages: the pipeline answers, the judge scores each answer as it comes
        asked = min(p.answered / p.total, 1.0) if p.total else 0.0
        st.progress(asked, text=f"{p.answered:,}/{p.total:,} questions answered by your pipeline ({asked:.0%})")
    st.progress(frac, text=f"{p.done:,}/{p.total:,} samples scored ({frac:.0%})")
    cells = st.columns(4 if p.has_target else 3)
    if p.has_target:
        cells[0].metric("Answered", f"{p.answered:,}/{p.total:,}")
    c1, c2, c3 = cells[-3:]
    c1.metric("Scored", f"{p.done:,}/{p.total:,}")
    c2.metric("Elapsed", format_duration(p.elapsed))
    c3.metric("ETA", format_duration(p.eta) if p.eta is not None else "–")
    if p.batch_status and not p.done:
        errors.info("Batch API: {status}. Stopping or closing the page is safe: resume this run from the History "
                    "page to pick the batch up.", status=p.batch_status, icon=":material/schedule:")
    if p.lost_rows:
        errors.warning("{n:,} finished rows could not be saved to the history so far.", n=p.lost_rows)
    if p.means:
        errors.caption("Running means: {means}", means=" · ".join(f"{n} {v:.3f}" for n, v in p.means.items()))


# --- every run in progress ------------------------------------------------------------------------
def in_progress(generations: bool, besides: Optional[str]) -> List[service.JobInfo]:
    """The queued and running jobs of the history, runs or test-set generations (one jobs table holds both),
    but the session's own (`besides`); the dashboard's worker started when one waits for it. [] with a
    warning saying why when the queue cannot be read (the page itself still works)."""
    try:
        jobs = service.jobs_in_progress(open_store(), generations=generations, besides=besides)
    except Exception as exc:
        errors.warning("{what} in progress cannot be read now: {problem}",
                       what="Generations" if generations else "Runs", problem=exc)
        return []
    if any(j.state == "queued" for j in jobs):
        with errors.guard("Starting the dashboard's worker"):
            ensure_worker()  # a laptop dashboard restarted, or jobs queued by a script: this process scores them
    return jobs


@st.fragment(run_every=LIST_POLL)
def active_runs(key: str) -> None:
    """Every queued and running run of the history, live, whoever started it (any tab, any replica).

    Stop shows for the run's owner and admins only; the session's own run is left to live_progress.
    """
    jobs = in_progress(generations=False, besides=state.live_run())
    if not jobs:
        return
    st.subheader("Runs in progress")
    for found in jobs:
        with st.container(border=True):
            errors.markdown("**{name}** · started by {owner} · run {run_id}", name=found.dataset_name,
                            owner=found.owner, run_id=errors.code_span(found.run_id))
            job_view(found, stoppable=True, key=key)


def watch(run_id: str) -> bool:
    """A shared run (/report?run=ID) that is still queued or running: say so and show its progress live,
    whoever started it; the page opens its report when it ends. False when it is not in progress."""
    try:
        found = job(run_id)
    except Exception:  # an unknown history or id: the Report page's own opening says why
        return False
    if not active(found):
        return False
    assert found is not None
    errors.info("This run of **{name}** (started by {owner}) is in progress; its report opens here when it ends.",
                name=found.dataset_name, owner=found.owner, icon=":material/hourglass_top:")
    _watched(run_id)
    return True


@st.fragment(run_every=POLL)
def _watched(run_id: str) -> None:
    found = wait_ended(run_id, WAIT_NO_BROWSER) if no_browser() else job(run_id)
    if not active(found):
        st.rerun()  # the whole page: the run has ended, so it opens as a report
    assert found is not None
    job_view(found, stoppable=True, key="watch")
