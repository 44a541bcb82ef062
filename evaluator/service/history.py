"""The run history as the views see it: where it is, the runs it lists, the jobs in progress and the worker
that scores them. Every write asks the session's `Access` first, whatever button led to it."""
from __future__ import annotations

import time
from typing import List, Optional, Tuple

from ..config import Config, typed_history_path
from ..errors import ConfigError, WorkerError
from ..runs import child as run_child
from ..runs import jobs as run_jobs
from ..store.history import RunInfo, RunStore
from ..store.jobs import GENERATE, JobInfo, JobQueue, Limits, expire_stale
from ..team import settings
from ..team.access import Access

TEAM_HISTORY = "this team's shared run history"  # what team mode calls its history: never its URL or path
DELETE_WAIT = 8.0  # seconds a delete waits for a stopped run's worker to let go


def default_history() -> str:
    """The history with nothing typed: $RAGMETER_HISTORY, else the team file's [server] history, else
    ~/.ragmeter's file (the one resolver every program uses: team/settings.py)."""
    return str(settings.history().value)


def check_history_path(text: str) -> str:
    """A history file typed on a laptop, when it may be used; ConfigError saying why not."""
    return str(typed_history_path(text))


def history_location(config: Config, typed: Optional[str] = None) -> str:
    """The history, resolved as for the CLI and the workers (flag > environment > team file > default):
    on a laptop the sidebar's typed file stands for the flag, when it may be used; a team never types one."""
    untyped = str(settings.history(team=config).value)  # the page's config: no second read of the team file
    if not typed or config.team or config.server.history or typed == untyped:
        return untyped
    try:
        return check_history_path(typed)  # the flag's place in the chain: it wins
    except ConfigError:
        return untyped  # the sidebar says why under the field; the rest of the chain decides


def open_history(location: str, team: bool = False) -> RunStore:
    """The history at `location`; HistoryError with a fix when it cannot be used. A team's history is named by
    a label in every message: its database URL (user, host, port) is the operator's."""
    return RunStore(location, label=TEAM_HISTORY if team else None)


# --- runs ----------------------------------------------------------------------------------------
def list_runs(store: RunStore, owner: Optional[str] = None, project: Optional[str] = None) -> List[RunInfo]:
    """The runs, their statuses current: a run whose worker is gone past its lease reads "interrupted"."""
    expire_stale(store)
    return store.list_runs(owner=owner, project=project)


def run_info(store: RunStore, run_id: str) -> RunInfo:
    """One stored run (its status current, as list_runs); HistoryError when unknown."""
    expire_stale(store)
    return store.get_run(run_id)


def owners_and_projects(store: RunStore) -> Tuple[List[str], List[str]]:
    return store.owners_and_projects()


def rename_run(store: RunStore, info: RunInfo, name: str, *, access: Access) -> None:
    access.check("rename", info.owner)
    store.rename_run(info.run_id, name.strip())


def delete_run(store: RunStore, info: RunInfo, *, access: Access, wait: float = DELETE_WAIT) -> None:
    """Delete a run and its rows; a run in progress is stopped first (no judge call after the delete)."""
    access.check("delete", info.owner)
    if is_active(job(store, info.run_id)):
        stop_run(store, info.run_id, access=access)
        wait_ended(store, info.run_id, wait)
    store.delete_run(info.run_id)


def resumable(info: RunInfo, current: Optional[JobInfo]) -> bool:
    """Stopped, failed, interrupted, or crashed (still 'running' with no job scoring it), with samples left."""
    return (info.n_done < info.n_samples and info.status in ("stopped", "failed", "interrupted", "running")
            and not is_active(current))


# --- jobs ----------------------------------------------------------------------------------------
def job_queue(store: RunStore, limits: Limits = Limits()) -> JobQueue:
    return JobQueue(store, limits)


def job(store: RunStore, run_id: str) -> Optional[JobInfo]:
    """The job of a run or a generation (None when it has none): its state, place in line and progress."""
    expire_stale(store)
    return JobQueue(store).get(run_id)


def is_active(found: Optional[JobInfo]) -> bool:
    return found is not None and found.state in ("queued", "running")


def wait_ended(store: RunStore, run_id: str, timeout: float) -> Optional[JobInfo]:
    """The job once it is no longer queued or running (or after `timeout` seconds)."""
    deadline = time.monotonic() + timeout
    found = job(store, run_id)
    while is_active(found) and time.monotonic() < deadline:
        time.sleep(0.1)
        found = job(store, run_id)
    return found


def jobs_in_progress(store: RunStore, *, generations: bool, besides: Optional[str] = None) -> List[JobInfo]:
    """The queued and running jobs, of runs or of test-set generations (one jobs table holds both), but `besides`."""
    return [j for j in JobQueue(store).list() if (j.kind == GENERATE) == generations and j.run_id != besides]


def stop_run(store: RunStore, run_id: str, *, access: Access) -> None:
    """Ask the run's worker to stop it (a queued run ends at once); every finished row is kept. Only its owner
    and admins."""
    found = job(store, run_id)
    access.check("stop", found.owner if found is not None else store.get_run(run_id).owner)
    run_jobs.stop_run(store, run_id)


# --- the dashboard's own worker ----------------------------------------------------------------------
def start_worker(store: RunStore, location: str, run_id: Optional[str] = None) -> None:
    """Start this process's worker for the history: a worker process scores unpinned runs (one that died is
    started again), a thread here the pinned ones. WorkerError when the process cannot start; run `run_id`,
    when only that process could score it, is stopped then rather than left waiting for nobody."""
    try:
        run_child.local_worker(location)
    except WorkerError as exc:
        found = job(store, run_id) if run_id else None
        if found is None or found.pinned:  # a pinned run is scored by this process's own thread all the same
            raise
        JobQueue(store).request_stop(found.run_id)
        raise WorkerError(f"{exc}. The run was stopped before it started: resume it from the History page "
                          "once this is fixed") from None


def stop_workers() -> bool:
    """Stop this process's workers: runs in flight end "interrupted" with every finished row saved."""
    return run_child.stop_all()
