"""`Worker`: claims queued runs (store/jobs.py) and scores them, `slots` at a time.

    worker = Worker(RunStore(url), slots=2).start()   # background threads (pinned jobs: runs/child.py)
    Worker(RunStore(url)).run_forever()               # blocking: `ragmeter worker`
    worker.shutdown(timeout=8.0)                      # in-flight runs end "interrupted", rows saved

A claimed job of kind "generate" runs a test-set generation (runs/generation.py GenerationTask), every
other kind an evaluation run: `build_task` is the one place that tells them apart.
Each claimed run is built through the resume path (runs/jobs.py `build_run`: only rows with no stored
result), and watched by a thread of its own that every `beat` seconds renews the run's lease with its
progress record and reads its stop flag: a stop asked from anywhere (`ragmeter runs stop`, another
dashboard replica) stops the run within about a second, finishing the rows in flight. A worker whose
lease was taken (it stalled past the lease, and the run was queued again) stops that run and writes
nothing more about it. Each poll also expires other workers' dead leases (JobQueue.expire).

With `engine="ray"` the worker joins a Ray cluster (`ray_address`; None starts a local one) and each run
it claims is scored there by `ray_workers` Ray workers (runs/ray_run.py); everything else is the same.
"""
from __future__ import annotations

import logging
import os
import signal
import socket
import threading
import time
import uuid
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Union

from ..errors import ConfigError, HistoryError
from ..store.history import RunStore
from ..store.jobs import GENERATE, JobInfo, JobQueue, Limits, Progress
from .jobs import PROCESS_TOKEN, build_run, drop_handoff
from .ray_run import RayEngine
from .run import Run, describe

if TYPE_CHECKING:
    from .generation import GenerationTask

log = logging.getLogger("ragmeter.worker")
BEAT = 0.5  # seconds between heartbeats (lease + progress) and looks at the stop flag
ENGINES = ("local", "ray")
Task = Union[Run, "GenerationTask"]  # what a claimed job executes
# How the worker's lines name a job, its units and what is left of it.
_NOUNS = {GENERATE: ("generation", "items", "items to keep")}
_RUN_NOUNS = ("run", "rows", "rows to score")


# -- the one place a job's kind decides what executes it --------------------------------------------
def build_task(store: RunStore, job: JobInfo) -> Task:
    """A generation's task (runs/generation.py), else the Run of an evaluation (always the resume path)."""
    if job.kind == GENERATE:
        # Loaded when a worker first claims a generation: the generate modules cost every page ~50 ms at start.
        from .generation import GenerationTask

        return GenerationTask.build(store, job)
    return build_run(store, job.run_id)


def failed_progress(store: RunStore, job: JobInfo, error: str) -> Progress:
    """The record of a job that could not start; an evaluation run is marked failed with its counts."""
    if job.kind == GENERATE:
        return Progress(done=0, total=0, error=error)
    store.finish_run(job.run_id, status="failed")
    info = store.get_run(job.run_id)
    return Progress(done=info.n_done, total=info.n_samples, error=error)


def progress_of(run: Task) -> Progress:
    """The small record a page polls, from a live run or generation."""
    if not isinstance(run, Run):  # a generation's task keeps its own record
        return run.progress()
    eta = run.eta()
    return Progress(done=run.done, total=run.total, answered=run.answered,
                    means={k: round(v, 4) for k, v in run.means().items()}, elapsed=round(run.elapsed(), 2),
                    eta=None if eta is None else round(eta, 1), batch_status=run.batch_status,
                    lost_rows=run.lost_rows, has_target=run.target is not None, error=run.error)


class Worker:
    """Runs the queued jobs of `store` it may claim: unpinned ones, and those pinned to this process."""

    def __init__(self, store: Union[RunStore, str, "os.PathLike[str]"], *, slots: int = 2,
                 worker_id: Optional[str] = None, limits: Limits = Limits(), engine: str = "local",
                 poll: float = 0.5, on_event: Optional[Callable[[str], None]] = None,
                 ray_address: Optional[str] = None, ray_workers: int = 2) -> None:
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {', '.join(ENGINES)}, not {engine!r}")
        if ray_address and engine != "ray":  # refused, not ignored: the operator meant runs to go to Ray
            raise ConfigError(f"a Ray address ({ray_address}) was given to a worker whose engine is {engine!r}: "
                              "set [runs] engine = \"ray\" (or --engine ray), or drop the address")
        self.store = store if isinstance(store, RunStore) else RunStore(store)
        self.queue = JobQueue(self.store, limits)
        self.slots, self.engine, self.poll, self.beat = max(1, slots), engine, poll, BEAT
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.on_event = on_event or (lambda line: log.info("%s", line))
        self.runs: Dict[str, Task] = {}
        self._watchers: Dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._thread: Optional[threading.Thread] = None
        # Joined now: a wrong address or a missing Ray is said when the worker starts, not at each run.
        self.ray = RayEngine(ray_address, ray_workers, self.slots) if engine == "ray" else None

    # -- the loop ------------------------------------------------------------------------------------
    def start(self) -> "Worker":
        """Claim and run jobs on a background thread; returns self."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run_forever, name="ragmeter-worker", daemon=True)
            self._thread.start()
        return self

    def run_forever(self, once: bool = False) -> None:
        """Claim jobs until `shutdown` (with `once`: until no job is queued or running here)."""
        while not self._closing.is_set():
            self.tick()
            if once and not self.active() and not self._claimable():
                return
            self._closing.wait(self.poll)

    def tick(self) -> List[str]:
        """One poll: expire dead leases, then claim jobs while a slot is free; the run ids claimed."""
        claimed: List[str] = []
        try:
            self.queue.expire()
            while len(self.active()) < self.slots and not self._closing.is_set():
                job = self._next_job()
                if job is None:
                    break
                self._launch(job)
                claimed.append(job.run_id)
        except HistoryError as exc:  # the database is away: try again at the next poll
            self.on_event(f"cannot reach the history: {exc}")
        return claimed

    def _next_job(self) -> Optional[JobInfo]:
        """Claim the next job this worker may run (runs/child.py's PinnedWorker narrows it)."""
        return self.queue.claim(self.worker_id, pinned=PROCESS_TOKEN)

    def take(self, run_id: str) -> Optional[Task]:
        """Claim run `run_id` now and start it here (the CLI runs its own run); None while a cap holds it."""
        job = self.queue.claim(self.worker_id, run_id=run_id, pinned=PROCESS_TOKEN)
        return self._launch(job) if job is not None else None

    def _claimable(self) -> bool:
        return any(j.pinned in (None, PROCESS_TOKEN) for j in self.queue.list(("queued",)))

    def active(self) -> List[str]:
        """Run ids in flight here."""
        with self._lock:
            return list(self._watchers)

    # -- one run -------------------------------------------------------------------------------------
    def _launch(self, job: JobInfo) -> Optional[Task]:
        try:
            run = build_task(self.store, job)
            where = self.ray.place(run) if self.ray is not None and isinstance(run, Run) else ""
            run.start()
        except Exception as exc:  # no judge key here, a target that cannot start: the run fails, saying why
            self._fail(job, describe(exc))
            return None
        noun, _, left = _NOUNS.get(job.kind, _RUN_NOUNS)
        self.on_event(f"claimed {noun} {job.run_id} ({job.dataset_name}, {len(run.pending)} {left}{where})")
        watcher = threading.Thread(target=self._watch, args=(job, run), name=f"ragmeter-job-{job.run_id}",
                                   daemon=True)
        with self._lock:
            self.runs[job.run_id] = run
            self._watchers[job.run_id] = watcher
        watcher.start()
        return run

    def _fail(self, job: JobInfo, error: str) -> None:
        self.on_event(f"{_NOUNS.get(job.kind, _RUN_NOUNS)[0]} {job.run_id} failed: {error}")
        try:
            self.queue.heartbeat(job.run_id, self.worker_id, failed_progress(self.store, job, error))
            self.queue.finish(job.run_id, self.worker_id, "failed")
        except HistoryError:
            log.warning("could not record run %s as failed", job.run_id, exc_info=True)
        drop_handoff(job.run_id)

    def _watch(self, job: JobInfo, run: Task) -> None:
        """Heartbeat the run's lease and progress until it ends; stop it when asked or when the lease is lost."""
        try:
            while not run.join(self.beat):
                self._beat(job, run)
            self._end(job, run)
        except Exception:
            log.exception("watching run %s failed", job.run_id)
        finally:
            with self._lock:
                self.runs.pop(job.run_id, None)
                self._watchers.pop(job.run_id, None)
            drop_handoff(job.run_id)
            self.store.close()  # this thread's connection

    def _beat(self, job: JobInfo, run: Task) -> None:
        if self._closing.is_set():
            run.stop()
        try:
            mine = self.queue.heartbeat(job.run_id, self.worker_id, progress_of(run))
            if mine and not run.stopping and self.queue.stop_requested(job.run_id):
                self.on_event(f"stopping run {job.run_id}: a stop was asked for")
                run.stop()
        except HistoryError:  # the database is away: the run goes on; its rows are retried by Run
            return
        if not mine and not run.detached:
            self.on_event(f"lost the lease of run {job.run_id}: another worker took it; stopping here")
            run.detach()

    def _end(self, job: JobInfo, run: Task) -> None:
        if run.detached:
            return
        status = run.status
        if self._closing.is_set() and status == "stopped" and not self._stop_asked(job.run_id):
            status = "interrupted"  # shut down mid-run: any worker may take it up again
        try:
            self.queue.heartbeat(job.run_id, self.worker_id, progress_of(run))
            self.queue.finish(job.run_id, self.worker_id, status)
        except HistoryError:
            log.warning("could not end the job of run %s", job.run_id, exc_info=True)
        noun, unit, _ = _NOUNS.get(job.kind, _RUN_NOUNS)
        self.on_event(f"{noun} {job.run_id} ended: {status} ({run.done}/{run.total} {unit})")

    def _stop_asked(self, run_id: str) -> bool:
        try:
            return self.queue.stop_requested(run_id)
        except HistoryError:
            return False

    # -- stopping --------------------------------------------------------------------------------------
    def drain(self, timeout: float = 5.0) -> bool:
        """Wait (at most `timeout` s) for the runs in flight to end and their jobs to be closed."""
        deadline = time.monotonic() + timeout
        with self._lock:
            watchers = list(self._watchers.values())
        for watcher in watchers:
            watcher.join(max(0.0, deadline - time.monotonic()))
        return not self.active()

    def shutdown(self, timeout: float = 8.0) -> bool:
        """Claim no more; stop the runs in flight (rows in flight finished and saved) and mark them
        "interrupted". True when every run ended within `timeout` seconds."""
        deadline = time.monotonic() + timeout
        self._closing.set()
        with self._lock:
            runs, watchers = list(self.runs.values()), list(self._watchers.values())
        for run in runs:
            run.stop()
        for watcher in watchers:
            watcher.join(max(0.0, deadline - time.monotonic()))
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(max(0.0, deadline - time.monotonic()))
        if self.ray is not None:
            self.ray.close(max(1.0, deadline - time.monotonic()))
        return not self.active()


def install_sigterm(worker: Worker, timeout: float = 8.0) -> bool:
    """SIGTERM and SIGINT shut `worker` down (within `timeout` s), then the process exits as the earlier
    handler would. False when signals cannot be set from here (not the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    for signum in (signal.SIGTERM, signal.SIGINT):
        earlier = signal.getsignal(signum)

        def handler(num: int, frame: Any, earlier: Any = earlier) -> None:
            worker.shutdown(timeout)
            if callable(earlier) and earlier not in (signal.default_int_handler,):
                earlier(num, frame)
            raise SystemExit(128 + num if num == signal.SIGINT else 0)

        signal.signal(signum, handler)
    return True
