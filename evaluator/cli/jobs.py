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
from typing import Any, Callable, Dict, Optional, Tuple

from .args import UsageError
from ..model import plural
from ..service import history, workers
from ..service.history import RunStore
from ..service.options import Flags, run_setting

DELETE_WAIT = 5.0  # seconds `runs delete` waits for a running run to stop before deleting it


def claim_own(store: RunStore, run_id: str, quiet: bool, on_event: Optional[Callable[[str], None]] = None,
              **engine: Any) -> Tuple[Any, Optional[Any]]:
    """This process's worker and the run it claimed (None when it failed to start), saying on stderr where the
    run stands while a cap holds it in the queue."""
    on_wait = (lambda line: None) if quiet else (lambda line: print(line, file=sys.stderr))
    return workers.claim_own(store, run_id, on_wait, on_event, **engine)


def failed_to_start(store: RunStore, run_id: str) -> str:
    return workers.job_failure(store, run_id)


def stopped_elsewhere(store: RunStore, run_id: Optional[str]) -> bool:
    return workers.stop_requested(store, run_id)


def submitted_line(store: RunStore, run_id: str) -> str:
    place = workers.queue_place(store, run_id)
    return (f"queued run {run_id}{f' at place {place}' if place else ''}: a 'ragmeter worker' on this history "
            "scores it (it reads the judge key from its own environment); follow it with 'ragmeter runs', stop it "
            f"with 'ragmeter runs stop {run_id}'")


def worker_command(args: argparse.Namespace, store: RunStore) -> int:
    """`ragmeter worker`: claim and score queued runs until SIGTERM/Ctrl-C (or, with --once, until idle)."""
    if args.slots < 1:  # said before the engine's flags are read
        raise UsageError(f"--slots {args.slots}: give 1 or more runs at once")
    engine = str(run_setting("engine", Flags.of(args)).value)  # --engine, else [runs] engine, else local
    # --parent: started by a dashboard, which may be killed with -9 and must not leave it scoring
    started = workers.start_worker(store, slots=args.slots, engine=engine, parent=args.parent,
                                   on_event=lambda line: print(f"ragmeter worker: {line}", flush=True),
                                   **ray_options(args, engine))
    worker = started.worker
    where = f", on {started.ray_where}, {plural(started.ray_workers, 'Ray worker')} a run" \
        if started.ray_where is not None else ""
    print(f"ragmeter worker {worker.worker_id}: waiting for runs in {store.shown} ({started.slots} at once{where}; "
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
    job = history.stop_run(store, run_id, access=history.LAPTOP_ACCESS)
    if job is None:
        print(f"run {run_id} is not a job (it ran before runs were queued, or without a history): "
              "nothing to stop")
    elif job.state == "running":
        print(f"asked run {run_id} to stop: its worker ({job.worker}) stops it within about a second, "
              "every finished row kept")
    elif job.kind == history.GENERATE:
        print(f"generation {run_id} is {job.status}: it will not run (resume it from the Generate page)")
    else:
        print(f"run {run_id} is {job.status}: it will not run "
              f"(resume it with: ragmeter evaluate --resume {run_id})")
    return 0


def delete_command(store: RunStore, run_id: str) -> int:
    """Stop the run first (waiting a few seconds for its worker), then delete it with its rows."""
    deleted = history.delete_job(store, run_id, access=history.LAPTOP_ACCESS, wait=DELETE_WAIT)
    print(f"deleted {deleted.noun} {run_id}" + (" (it was stopped first)" if deleted.had_job else ""))
    return 0
