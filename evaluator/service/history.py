"""The run history as the views see it: where it is, the runs it lists, the jobs in progress and the worker
that scores them. Every write asks the session's `Access` first, whatever button led to it."""
from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Dict, List, Optional, Tuple

from ..config import Config, typed_history_path
from ..errors import ConfigError, WorkerError
from ..runs import child as run_child
from ..runs import jobs as run_jobs
from ..errors import RagmeterError
from ..store.generations import GEN_PREFIX, GenerationInfo, Generations
from ..store.history import RunInfo, RunStore, default_owner
from ..store.naming import MAX_NAME_CHARS, clean_name, default_name, scorer_label  # noqa: F401  (the doors use these)
from ..scoring.run_config import RunConfig
from ..store.jobs import GENERATE, JobInfo, JobQueue, Limits, expire_stale
from ..team import settings
from ..team.access import LAPTOP_ACCESS, Access

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


def history_for(flag: Optional[str]) -> str:
    """The history a program's --history flag leaves: the flag, else the environment, else the team file's,
    else ~/.ragmeter's (team/settings.py decides, for every program)."""
    return str(settings.history_location(flag))


def open_history(location: str, team: bool = False) -> RunStore:
    """The history at `location`; HistoryError with a fix when it cannot be used. A team's history is named by
    a label in every message: its database URL (user, host, port) is the operator's."""
    return RunStore(location, label=TEAM_HISTORY if team else None)


# --- runs ----------------------------------------------------------------------------------------
def list_runs(store: RunStore, owner: Optional[str] = None, project: Optional[str] = None) -> List[RunInfo]:
    """The runs, their statuses current: a run whose worker is gone past its lease reads "interrupted"."""
    expire_stale(store)
    return store.list_runs(owner=owner, project=project)


def latest_finished_run(store: RunStore) -> Optional[RunInfo]:
    """The newest run that finished with rows (what the Report opens when no run is chosen); None when none has."""
    return next((r for r in list_runs(store) if r.status == "finished" and r.n_done), None)


def run_info(store: RunStore, run_id: str) -> RunInfo:
    """One stored run (its status current, as list_runs); HistoryError when unknown."""
    expire_stale(store)
    return store.get_run(run_id)


def owners_and_projects(store: RunStore) -> Tuple[List[str], List[str]]:
    return store.owners_and_projects()


def default_run_name(dataset_name: str, config: RunConfig) -> str:
    """The name a run of `config` started now gets when given none ("dataset · scorer · YYYY-MM-DD HH:MM")."""
    return default_name(dataset_name, config.to_dict(), datetime.now(timezone.utc).isoformat())


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


@dataclass(frozen=True)
class Deleted:
    """What `delete_job` deleted: a run or a test-set generation, and whether it had a job (stopped first)."""

    job_id: str
    generation: bool
    had_job: bool

    @property
    def noun(self) -> str:
        return "generation" if self.generation else "run"


def delete_job(store: RunStore, job_id: str, *, access: Access, wait: float = DELETE_WAIT) -> Deleted:
    """Delete a run or a generation (one jobs table holds both) with its rows; one in progress is asked to stop
    first and given `wait` seconds to let go. HistoryError when unknown; NotAllowed but for its owner and admins."""
    found = stop_run(store, job_id, access=access, verb="delete")
    if found is not None and found.state == "running":
        wait_ended(store, job_id, wait)
    generation = job_id.startswith(GEN_PREFIX)
    if generation:
        Generations(store).delete(job_id)
    else:
        store.delete_run(job_id)
    return Deleted(job_id, generation, found is not None)


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


def stop_run(store: RunStore, run_id: str, *, access: Access, verb: str = "stop") -> Optional[JobInfo]:
    """Ask the run's (or a generation's) worker to stop it (a queued one ends at once); every finished row is
    kept. Its job as it stands then, None when it has none. Only its owner and admins (`verb`: what for)."""
    found = job(store, run_id)
    access.check(verb, found.owner if found is not None else _owner(store, run_id))
    return run_jobs.stop_run(store, run_id)


def _owner(store: RunStore, job_id: str) -> Optional[str]:
    """The owner of a run or a generation with no job; HistoryError naming the id when unknown."""
    if job_id.startswith(GEN_PREFIX):
        return Generations(store).get(job_id).owner
    return store.get_run(job_id).owner


def queued_places(store: RunStore) -> Dict[str, int]:
    """Each queued job's place in line (1 is next); the expired leases first expired, when this user may."""
    try:
        JobQueue(store).expire()  # runs whose worker died show as interrupted (or queued again), not running
    except RagmeterError:
        pass  # a history this user cannot write: read as it is
    return {j.run_id: j.position for j in JobQueue(store).list(("queued",)) if j.position}


def generations_of(store: RunStore, owner: Optional[str] = None) -> List[GenerationInfo]:
    """The latest test-set generations (only `owner`'s when given), newest first."""
    return Generations(store).list(owner=owner)


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


__all__ = [
    "DELETE_WAIT", "Deleted", "GENERATE", "LAPTOP_ACCESS", "RunInfo", "RunStore", "TEAM_HISTORY", "check_history_path", "default_history", "default_owner",
    "delete_job", "delete_run", "generations_of", "history_for", "history_location", "is_active", "job",
    "job_queue", "jobs_in_progress", "list_runs", "open_history", "owners_and_projects", "queued_places",
    "rename_run", "resumable", "run_info", "start_worker", "stop_run", "stop_workers", "wait_ended",
]
