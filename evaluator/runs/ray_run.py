"""Runs placed on Ray: `ragmeter evaluate --engine ray`, `[runs] engine = "ray"`, `ragmeter worker --engine ray`.

    engine = RayEngine(address=None, workers=2)    # joins the cluster (None: starts a local one)
    engine.place(run)                               # a claimed Run scores on Ray from now on, when it may
    engine.close()                                  # a local cluster started here is shut down

The worker claims, heartbeats, stops and ends the run as for a local run (runs/worker.py); only the
scoring moves. The run's pending rows (the resume path: rows with no stored result) become one input
frame (`samples_frame`), a pool of `FrameScorer`s scores it (`scored`, the judge concurrency divided
among the Ray workers as for `ragmeter evaluate --engine ray`), and each results frame, in input
order, goes through the Run's own callbacks: rows to the history's batched writer, progress and means
to the heartbeat. A stop is honoured between frames: frames already scored are saved, the rest are
dropped and scored again on resume (free with the judge cache on).

What never travels stays here: a run whose API key was typed into this process, whose judge is a
Python object, that calls the user's pipeline, or that goes through the Batch API is scored in the
worker itself, and the worker's claim line says why. Ray workers build the judge from the run's plain
config and read the key from their own environment (the variable the run names).
"""
from __future__ import annotations

import logging
import threading
import time
from functools import partial
from typing import Any, Dict, List, Optional

from .. import errors
from ..store.history import RunStore
from ..engines.ray import connect, need_ray, score_on_ray
from ..errors import RagmeterError
from ..model import plural
from ..scoring.run_config import RunConfig
from .jobs import Handoff, job_config, take_handoff
from .run import Run

log = logging.getLogger("ragmeter.worker")


class RayEngine:
    """A worker's link to a Ray cluster: joined (or started) once, used by every run it places there.

    `workers` is the scoring workers of one run; a local cluster gets a CPU for each of them for each of
    the worker's `slots`, and one for reading, so runs scored at once do not wait for each other's CPUs.
    """

    def __init__(self, address: Optional[str] = None, workers: int = 2, slots: int = 1) -> None:
        if workers < 1:
            raise errors.ConfigError(f"ray_workers must be 1 or more, not {workers}")
        self.address, self.workers = address or None, workers
        self._pumps: List[threading.Thread] = []  # runs' frame readers, which end their executions when they end
        try:
            self.started = connect(self.address, workers * max(1, slots))
        except RagmeterError:  # Ray is not installed: the message names the extra
            raise
        except Exception as exc:  # ray.init's own: a cluster that cannot be reached or started
            raise RagmeterError(f"cannot use {self.where}: {type(exc).__name__}: {exc}; check [runs] ray_address "
                                "or --ray-address (a cluster is started with 'ray start --head')") from exc

    @property
    def where(self) -> str:
        return f"the Ray cluster at {self.address}" if self.address else "a local Ray cluster"

    def place(self, run: Run, config: Optional[RunConfig] = None) -> str:
        """Make `run` score on Ray when nothing it needs is pinned to this process; the words the worker's
        claim line ends with (why it stays here, when it does). `config`: how it scores, when the caller
        has it (a run with no history); else its job's."""
        if not run.pending:
            return ""
        handoff = take_handoff(str(run.run_id))
        config = config or job_config(run.settings, handoff)
        reason = local_reason(run, handoff, config)
        if reason:
            log.warning("run %s is scored in the worker, not on Ray: %s", run.run_id, reason)
            record_engine(run, {"engine": "local"})
            return f"; scored in this worker, not on Ray: {reason}"
        run.engine = partial(score_on_ray, config, self.workers, pumps=self._pumps)
        record_engine(run, {"engine": "ray", "ray_workers": self.workers})
        return f"; scored on {self.where} by {plural(self.workers, 'Ray worker')}"

    def close(self, timeout: float = 10.0) -> None:
        """Shut down the local cluster started here, once the stopped runs' executions have ended (at most
        `timeout` s: a shutdown under a running one makes Ray print its threads' tracebacks); a cluster
        joined is left running."""
        deadline = time.monotonic() + timeout
        for pump in list(self._pumps):
            pump.join(max(0.0, deadline - time.monotonic()))
        if self.started:
            self.started = False
            need_ray().shutdown()


def record_engine(run: Run, engine: Dict[str, Any]) -> None:
    """Keep in the run's settings what scores it (the latest session's), as `ragmeter evaluate --engine ray`
    does: the History and the Report's settings then say so."""
    run.settings.update(engine)
    if isinstance(run.store, RunStore) and run.run_id:
        try:
            run.store.update_settings(run.run_id, engine)
        except Exception:  # the run scores all the same; its settings just do not say where
            log.warning("could not record the engine of run %s", run.run_id, exc_info=True)


def local_reason(run: Run, handoff: Handoff, config: RunConfig) -> str:
    """Why `run` cannot be scored on Ray ("" when it can): what it needs lives only in this process."""
    if handoff.api_key:
        return ("its API key was typed into the process that queued it, and keys never travel; queue it without "
                "a typed key (the Ray workers then read it from their own environment)")
    if handoff.judge is not None:
        return "its judge is a Python object in this process, which cannot travel; use a configured judge"
    if run.target is not None:
        return "it calls your pipeline (target) for rows it has not answered yet, from this worker"
    if config.batch:
        return "its judge calls go through the Batch API, which this worker polls"
    return ""
