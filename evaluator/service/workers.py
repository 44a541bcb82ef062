"""The workers that score queued jobs (runs and test-set generations), as a door starts them: this process's
own worker claiming the job it just queued (the command line drives its run here), and a `ragmeter worker`
scoring whatever is queued until it is stopped. The queue and the workers are evaluator/runs/worker.py's;
nothing here prints: a door passes a function for the lines it wants to show."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Optional, Tuple

from ..config import current
from ..errors import HistoryError
from ..runs.child import watch_parent
from ..runs.worker import Task, Worker, install_sigterm
from ..store.history import RunStore
from ..store.jobs import JobQueue

WAIT_POLL = 1.0  # seconds between two looks at a job held in the queue by a cap


def queue_limits() -> Any:
    """The team's caps on queued and running jobs ([runs] in the team file; none on a laptop)."""
    return current().runs.limits


def claim_own(store: RunStore, job_id: str, on_wait: Callable[[str], None] = lambda line: None,
              on_event: Optional[Callable[[str], None]] = None, **engine: Any) -> Tuple[Worker, Optional[Task]]:
    """This process's worker (on `engine`: Worker's engine options, none for the local one) and the job it
    claimed: waits while a cap holds the job in the queue, telling `on_wait` where it stands whenever that
    changes. The task is None when it failed to start (job_failure says why). Ctrl-C takes it out of the queue."""
    worker = Worker(store, slots=1, limits=queue_limits(), on_event=on_event or (lambda line: None), **engine)
    queue, said = JobQueue(store), None
    try:
        while True:
            task = worker.take(job_id)
            job = queue.get(job_id)
            if task is not None or job is None or job.state != "queued":
                return worker, task
            line = (f"run {job_id} is queued at place {job.position}: you have as many runs running as the "
                    "team allows ([runs] max_running_per_user); it starts when one of them ends "
                    "(Ctrl-C takes it out of the queue)")
            if line != said:
                on_wait(line)
            said = line
            time.sleep(WAIT_POLL)
    except KeyboardInterrupt:
        queue.request_stop(job_id)
        raise


def job_failure(store: RunStore, job_id: str, default: str = "the run could not start") -> str:
    """Why a claimed job could not start (its worker stored it in the job's progress)."""
    progress = JobQueue(store).progress(job_id)
    return progress.error if progress is not None and progress.error else default


def stop_requested(store: RunStore, job_id: Optional[str]) -> bool:
    """Whether someone asked this job to stop (`ragmeter runs stop`, a dashboard's Stop button)."""
    try:
        return bool(job_id) and JobQueue(store).stop_requested(str(job_id))
    except HistoryError:
        return False


def queue_place(store: RunStore, job_id: str) -> Optional[int]:
    """The job's place in the queue (1 is next), or None when it is not waiting."""
    job = JobQueue(store).get(job_id)
    return job.position if job is not None and job.position else None


@dataclass(frozen=True)
class WorkerStart:
    """A `ragmeter worker` as started: the worker, where it scores and how many runs at once."""

    worker: Worker
    slots: int
    ray_where: Optional[str] = None  # the Ray cluster's address with the Ray engine
    ray_workers: int = 0


def start_worker(store: RunStore, *, slots: int, engine: str, on_event: Callable[[str], None],
                 parent: Optional[int] = None, **ray: Any) -> WorkerStart:
    """A worker scoring `slots` queued runs at once on `engine`, stopped by SIGTERM; with `parent` (a dashboard's
    process id) it ends when that process does, even one killed with -9. HistoryError for fewer than one slot."""
    if slots < 1:
        raise HistoryError(f"--slots {slots}: give 1 or more runs at once")
    worker = Worker(store, slots=slots, limits=queue_limits(), engine=engine, on_event=on_event, **ray)
    install_sigterm(worker)
    if parent:
        watch_parent(parent)
    found = worker.ray
    return WorkerStart(worker, worker.slots, found.where if found is not None else None,
                       found.workers if found is not None else 0)


__all__ = ["WorkerStart", "claim_own", "job_failure", "queue_limits", "queue_place", "start_worker",
           "stop_requested", "watch_parent"]
