"""The command line's side of runs as jobs (evaluator/runs/jobs.py, runs/worker.py):

    ragmeter evaluate DATA --history H     the run is queued, then claimed and scored by this process's
                                           own worker ('ragmeter runs stop RUN_ID' elsewhere stops it)
    ragmeter evaluate DATA --submit        queued for `ragmeter worker` processes; prints the run id
    ragmeter worker [--history URL] [--slots N] [--engine local|ray [--ray-address A] [--ray-workers N]] [--once]
                    [--parent PID]
    ragmeter runs stop RUN_ID | ragmeter runs delete RUN_ID

command.py prepares the run; this module waits for its place, runs workers, stops and deletes.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Dict, Optional, Tuple

from .args import UsageError
from ..config import current
from ..errors import HistoryError
from ..model import plural
from ..runs.child import watch_parent
from ..runs.jobs import stop_run
from ..runs.worker import Task, Worker, install_sigterm
from ..store.generations import GEN_PREFIX, Generations
from ..store.history import RunStore
from ..store.jobs import GENERATE, JobQueue
from ..team.settings import Flags, run_setting

DELETE_WAIT = 5.0  # seconds `runs delete` waits for a running run to stop before deleting it


def claim_own(store: RunStore, run_id: str, quiet: bool, on_event: Optional[Callable[[str], None]] = None,
              **engine: Any) -> Tuple[Worker, Optional[Task]]:
    """This process's worker (on `engine`: Worker's engine options, none for the local one) and the run it
    claimed: waits (saying where it stands) while a cap holds the run in the queue. The run is None when it
    failed to start (the job's progress says why). `on_event` gets the worker's lines."""
    worker = Worker(store, slots=1, limits=current().runs.limits, on_event=on_event or (lambda line: None),
                    **engine)
    queue, said = JobQueue(store), None
    try:
        while True:
            run = worker.take(run_id)
            job = queue.get(run_id)
            if run is not None or job is None or job.state != "queued":
                return worker, run
            line = (f"run {run_id} is queued at place {job.position}: you have as many runs running as the "
                    "team allows ([runs] max_running_per_user); it starts when one of them ends "
                    "(Ctrl-C takes it out of the queue)")
            if line != said and not quiet:
                print(line, file=sys.stderr)
            said = line
            time.sleep(1.0)
    except KeyboardInterrupt:
        queue.request_stop(run_id)
        raise


def failed_to_start(store: RunStore, run_id: str) -> str:
    """Why a claimed run could not start (the worker stored it in the run's progress)."""
    progress = JobQueue(store).progress(run_id)
    return progress.error if progress is not None and progress.error else "the run could not start"


def stopped_elsewhere(store: RunStore, run_id: Optional[str]) -> bool:
    """Whether someone asked this run to stop (`ragmeter runs stop`, a dashboard's Stop button)."""
    try:
        return bool(run_id) and JobQueue(store).stop_requested(str(run_id))
    except HistoryError:
        return False


def submitted_line(store: RunStore, run_id: str) -> str:
    job = JobQueue(store).get(run_id)
    place = f" at place {job.position}" if job is not None and job.position else ""
    return (f"queued run {run_id}{place}: a 'ragmeter worker' on this history scores it (it reads the judge key "
            f"from its own environment); follow it with 'ragmeter runs', stop it with 'ragmeter runs stop {run_id}'")


def worker_command(args: argparse.Namespace, store: RunStore) -> int:
    """`ragmeter worker`: claim and score queued runs until SIGTERM/Ctrl-C (or, with --once, until idle)."""
    runs = current().runs
    if args.slots < 1:
        raise HistoryError(f"--slots {args.slots}: give 1 or more runs at once")
    engine = str(run_setting("engine", Flags.of(args)).value)  # --engine, else [runs] engine, else local
    worker = Worker(store, slots=args.slots, limits=runs.limits, engine=engine, **ray_options(args, engine),
                    on_event=lambda line: print(f"ragmeter worker: {line}", flush=True))
    install_sigterm(worker)
    if args.parent:  # started by a dashboard: a dashboard killed with -9 must not leave it scoring
        watch_parent(args.parent)
    ray = worker.ray
    where = f", on {ray.where}, {plural(ray.workers, 'Ray worker')} a run" if ray is not None else ""
    print(f"ragmeter worker {worker.worker_id}: waiting for runs in {store.shown} ({worker.slots} at once{where}; "
          "SIGTERM or Ctrl-C stops it, runs in flight end interrupted and resumable)", flush=True)
    try:
        worker.run_forever(once=args.once)
    finally:
        worker.shutdown(8.0)
    return 0


def ray_options(args: argparse.Namespace, engine: str) -> Dict[str, Any]:
    """The worker's Ray address and workers: the flags, else the team config's [runs] keys; flags that
    only Ray reads are refused with the local engine rather than ignored."""
    if engine != "ray":
        given = [flag for flag, value in (("--ray-address", args.ray_address), ("--ray-workers", args.ray_workers))
                 if value is not None]
        if given:
            raise UsageError(f"{given[0]} needs --engine ray (this worker scores runs locally)")
        return {}
    workers = run_setting("ray_workers", Flags.of(args)).value
    if workers < 1:
        raise UsageError(f"--ray-workers {workers}: give 1 or more Ray workers a run")
    return {"ray_address": run_setting("ray_address", Flags.of(args)).value or None, "ray_workers": workers}


def stop_command(store: RunStore, run_id: str) -> int:
    job = stop_run(store, run_id)
    if job is None:
        print(f"run {run_id} is not a job (it ran before runs were queued, or without a history): "
              "nothing to stop")
    elif job.state == "running":
        print(f"asked run {run_id} to stop: its worker ({job.worker}) stops it within about a second, "
              "every finished row kept")
    elif job.kind == GENERATE:
        print(f"generation {run_id} is {job.status}: it will not run (resume it from the Generate page)")
    else:
        print(f"run {run_id} is {job.status}: it will not run "
              f"(resume it with: ragmeter evaluate --resume {run_id})")
    return 0


def delete_command(store: RunStore, run_id: str) -> int:
    """Stop the run first (waiting a few seconds for its worker), then delete it with its rows."""
    job = stop_run(store, run_id)
    deadline = time.monotonic() + DELETE_WAIT
    queue = JobQueue(store)
    while job is not None and job.state == "running" and time.monotonic() < deadline:
        time.sleep(0.2)
        job = queue.get(run_id)
    generation = run_id.startswith(GEN_PREFIX)
    if generation:  # a test-set generation shares the jobs table, not the runs table
        Generations(store).delete(run_id)
    else:
        store.delete_run(run_id)
    noun = "generation" if generation else "run"
    print(f"deleted {noun} {run_id}" + (" (it was stopped first)" if job is not None else ""))
    return 0
