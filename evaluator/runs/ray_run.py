"""Runs a worker hands to Ray: `[runs] engine = "ray"`, `ragmeter worker --engine ray`.

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
import queue
import re
import threading
import time
from functools import partial
from typing import Any, Callable, Dict, Iterator, List, Optional

from .. import errors
from ..engines.partition import frame_metrics
from ..store.history import RunStore
from ..engines.ray import batch_size, connect, history_rows, need_ray, samples_frame, scored
from ..engines.summary import RunTally
from ..errors import RagmeterError
from ..model import EvalReport, EvalResult, EvalSample, plural
from ..scoring.run_config import RunConfig
from .jobs import Handoff, job_config, take_handoff
from .run import Run

log = logging.getLogger("ragmeter.worker")
POLL = 0.2  # seconds between looks at the stop flag while the next frame is on its way
_END = object()  # the pump's last item: every frame was read


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

    def place(self, run: Run) -> str:
        """Make `run` score on Ray when nothing it needs is pinned to this process; the words the worker's
        claim line ends with (why it stays here, when it does)."""
        if not run.pending:
            return ""
        handoff = take_handoff(str(run.run_id))
        config = job_config(run.settings, handoff)
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


def score_on_ray(config: RunConfig, workers: int, samples: List[EvalSample], *,
                 on_progress: Callable[[int, int, EvalResult], None], on_result: Callable[[int, EvalResult], None],
                 stop: threading.Event, pumps: Optional[List[threading.Thread]] = None) -> EvalReport:
    """Score `samples` on the cluster as `evaluate_dataset` would here: the same callbacks per finished row
    (its position in `samples`), the same stop flag (checked between frames), a report in input order.
    `pumps` gets the thread reading the cluster while it runs (see `frames`)."""
    ray = need_ray()
    start = time.perf_counter()
    batch = batch_size(config, workers)
    frame = samples_frame(samples)  # numbered 1..n: each results row's index is its position in `samples`
    metrics = frame_metrics(config, any(s.conversation is not None for s in samples))
    ds = ray.data.from_pandas([frame.iloc[i:i + batch] for i in range(0, len(frame), batch)])
    tally = RunTally()  # the judge usage, summed from the frames' columns
    results: Dict[int, EvalResult] = {}
    try:
        for out in frames(scored(ds, config, None, workers, batch, metrics), stop, pumps=pumps):
            tally.add(out)
            for j, result in history_rows(out):
                result.sample = samples[j]  # the row as stored, not its round trip through the frame
                results[j] = result
                on_result(j, result)
                on_progress(len(results), len(samples), result)
    except ray.exceptions.RayError as exc:  # a worker's traceback in its text: logged, the user reads one line
        raise ray_failure(exc) from exc
    usage: Dict[str, Any] = {} if config.offline else dict(tally.judge_usage())
    return EvalReport([results[j] for j in sorted(results)], total_time=time.perf_counter() - start, usage=usage)


def frames(ds: Any, stop: threading.Event, poll: float = POLL,
           pumps: Optional[List[threading.Thread]] = None) -> Iterator[Any]:
    """The scored frames in input order, until every one is read or `stop` is set.

    A pump thread reads the cluster, so a stop is seen within `poll` s even while the next frame is
    minutes away; frames already scored when it comes are still given (their judge calls are paid).
    The pump closes the dataset's iterator, which ends its execution, when it gets its next frame; it is
    in `pumps` until then.
    """
    items: "queue.Queue[Any]" = queue.Queue()
    gone = threading.Event()

    def pump() -> None:
        batches = iter(ds.iter_batches(batch_format="pandas", batch_size=None))
        try:
            for item in batches:
                items.put(item)
                if gone.is_set():
                    break
            items.put(_END)
        except BaseException as exc:  # handed to the reading thread, which raises it
            items.put(exc)
        finally:
            close = getattr(batches, "close", None)
            if callable(close):
                close()
            if pumps is not None:
                pumps.remove(reader)

    reader = threading.Thread(target=pump, name="ragmeter-ray-frames", daemon=True)
    if pumps is not None:
        pumps.append(reader)
    reader.start()
    try:
        while True:
            try:
                item = items.get(block=not stop.is_set(), timeout=poll)
            except queue.Empty:
                if stop.is_set():
                    return
                continue
            if item is _END:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        gone.set()


# A Ray error's text carries the worker's traceback; its last line of ragmeter's own says what to do.
_OWN_ERROR = re.compile(r"evaluator\.errors\.(\w+): (.+)")


def ray_failure(exc: BaseException) -> RagmeterError:
    """A Ray error as the user reads it: the ragmeter error a Ray worker raised (a judge that cannot
    start on a node), else the error's first line."""
    found = _OWN_ERROR.findall(str(exc))
    if found:
        name, message = found[-1]
        kind = getattr(errors, name, RagmeterError)
        if not (isinstance(kind, type) and issubclass(kind, RagmeterError)):
            kind = RagmeterError
        try:
            return kind(f"on the Ray cluster: {message}")
        except TypeError:  # an error class with other arguments
            return RagmeterError(f"on the Ray cluster: {name}: {message}")
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return RagmeterError(f"the Ray cluster could not score this run: {type(exc).__name__}: {first}")
