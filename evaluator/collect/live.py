"""The live run: sampled traces appended to one rolling run per project and day, scored as they arrive.

    live = LiveRuns(RunStore(), project="shop-bot", config=RunConfig()).start()
    run_id, indices = live.append(samples)   # stored before the receiver answers 200
    live.close()                              # queue no more; the workers (runs/worker.py) score the jobs

The day's run is found by its settings (`live = {"project": ..., "day": "YYYY-MM-DD"}`, the receiver's
UTC day) or created empty; `RunStore.append_samples` grows it. A trace sent again (an exporter retrying
after a restart) is not stored twice: the day's sample ids are read when its run is opened.
Scoring goes through `score_pending`, the one place that decides how a run's pending rows are scored,
started `settle` seconds after the first row waiting arrived (late children have that long to join
it; a steady stream does not put scoring off) and never twice at once for a run.
"""
from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Dict, List, Optional, Protocol, Sequence, Set, Tuple

from ..model import EvalSample
from ..runs.jobs import KEY_VARIABLE, submit_resume
from ..runs.run import RunConfig
from ..store.history import RunStore
from ..store.jobs import JobQueue

log = logging.getLogger("ragmeter.collect")
LIVE_KEY = "live"  # run settings key: {"project": ..., "day": ...}


class Scoring(Protocol):
    """What score_pending hands back: something that is running or has ended."""

    @property
    def running(self) -> bool: ...

    def stop(self) -> None: ...

    def join(self, timeout: Optional[float] = None) -> bool: ...


class RunJob:
    """A live run's job in the queue (store/jobs.py): running while it is queued or running."""

    def __init__(self, store: RunStore, run_id: str) -> None:
        self.queue, self.run_id = JobQueue(store), run_id

    @property
    def running(self) -> bool:
        job = self.queue.get(self.run_id)
        return job is not None and job.state != "ended"

    def stop(self) -> None:
        """Nothing: a worker (this process's or a `ragmeter worker`) goes on with the rows it has."""

    def join(self, timeout: Optional[float] = None) -> bool:
        end = time.monotonic() + (timeout if timeout is not None else 1e9)
        while self.running and time.monotonic() < end:
            time.sleep(0.1)
        return not self.running


def score_pending(store: RunStore, run_id: str, config: RunConfig) -> Scoring:
    """Queue the rows of `run_id` that have no result yet as a job; a worker scores them.

    The job is not pinned: the run's stored settings name its judge (and the variable holding its key),
    so this process's worker or any `ragmeter worker` on the history may take it. The in-process form,
    without workers, is `Run.resume(store, run_id, config=config).start()`.
    """
    job = RunJob(store, run_id)
    if not job.running:  # another receiver on this history may have queued it already
        submit_resume(store, run_id)
    return job


def utc_day() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


class LiveRuns:
    """The project's live runs in one history: appends, late updates, scoring, counts."""

    def __init__(self, store: RunStore, project: str, config: RunConfig, *, owner: Optional[str] = None,
                 settle: float = 2.0, day: Callable[[], str] = utc_day,
                 scorer: Callable[[RunStore, str, RunConfig], Scoring] = score_pending) -> None:
        self.store, self.project, self.config, self.owner = store, project, config, owner
        self.settle, self._day, self._scorer = settle, day, scorer
        self._lock = threading.Lock()
        self._runs: Dict[str, str] = {}  # day -> run id
        self._seen: Dict[str, Set[str]] = {}  # run id -> sample ids stored
        self._dirty: Dict[str, float] = {}  # run id -> monotonic time its first unscored new row arrived
        self._scoring: Dict[str, Scoring] = {}
        self._counts: Dict[str, int] = {"total": 0, "scored": 0}
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self.error: Optional[str] = None  # the last scoring start that failed, for the status line

    # -- writing ------------------------------------------------------------------------------
    def append(self, samples: Sequence[EvalSample]) -> Tuple[str, List[Tuple[EvalSample, int]]]:
        """Store new samples in today's run (those already there are skipped); (run id, [(sample, index)])."""
        with self._lock:
            run_id = self._run_for(self._day())
            seen = self._seen[run_id]
            fresh = [s for s in _unique(samples) if s.sample_id not in seen]
            indices = self.store.append_samples(run_id, fresh)
            seen.update(s.sample_id for s in fresh if s.sample_id)
            if fresh:  # the first row waiting sets the time: a steady stream must not put scoring off forever
                self._dirty.setdefault(run_id, time.monotonic())
        return run_id, list(zip(fresh, indices))

    def update(self, run_id: str, index: int, sample: EvalSample) -> None:
        """A stored trace's late children: its row is rewritten (scored rows keep the score they have)."""
        self.store.record_answer(run_id, index, sample)
        with self._lock:
            self._dirty.setdefault(run_id, time.monotonic())

    def _run_for(self, day: str) -> str:
        if day in self._runs:
            return self._runs[day]
        found = [r for r in self.store.list_runs(project=self.project)
                 if (r.settings.get(LIVE_KEY) or {}).get("day") == day]
        if found:
            run_id = found[-1].run_id  # the oldest, should two receivers have raced to create one
            self._seen[run_id] = {s.sample_id for s in self.store.samples(run_id) if s.sample_id}
            if len(self._seen[run_id]) > self.store.get_run(run_id).n_done:
                self._dirty[run_id] = 0.0  # rows a stopped receiver left unscored
        else:
            run_id = self.store.create_run(dataset_name=f"{self.project} live {day}", samples=[],
                                           settings=self._settings(day), project=self.project, owner=self.owner)
            self._seen[run_id] = set()
        self._runs[day] = run_id
        return run_id

    def _settings(self, day: str) -> Dict[str, Any]:
        from ..judges.base import close_judge

        judge = self.config.build_judge()  # its settings (model, endpoint) are the run's; the key is not kept
        try:
            settings = self.config.settings(judge)
        finally:
            close_judge(judge)
        settings[LIVE_KEY] = {"project": self.project, "day": day}
        if self.config.api_key_env:  # a worker elsewhere finds the key by the variable's name (never its value)
            settings[KEY_VARIABLE] = self.config.api_key_env
        return settings

    # -- scoring ------------------------------------------------------------------------------
    def start(self) -> "LiveRuns":
        self._thread = threading.Thread(target=self._loop, name="ragmeter-live", daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(0.2):
            try:
                self.tick()
            except Exception as exc:  # the receiver goes on storing; the status line says why scoring waits
                self.error = f"{type(exc).__name__}: {exc}"
                log.warning("live scoring failed to start", exc_info=True)

    def tick(self) -> None:
        """Start scoring each run with rows that settled and no scoring under way; refresh the counts."""
        now = time.monotonic()
        with self._lock:
            due = [run_id for run_id, at in self._dirty.items() if now - at >= self.settle
                   and not (run_id in self._scoring and self._scoring[run_id].running)]
            for run_id in due:
                del self._dirty[run_id]
        for run_id in due:
            self._scoring[run_id] = self._scorer(self.store, run_id, self.config)
            self.error = None
        self._refresh_counts()

    def _refresh_counts(self) -> None:
        run_id = self._runs.get(self._day())
        if run_id is not None:
            info = self.store.get_run(run_id)
            self._counts = {"total": info.n_samples, "scored": info.n_done}

    def counts(self) -> Dict[str, int]:
        """Today's run: rows stored and rows scored (refreshed by the scoring thread, never by a caller)."""
        return dict(self._counts)

    @property
    def idle(self) -> bool:
        """No rows waiting to be scored and no scoring under way."""
        with self._lock:
            return not self._dirty and not any(s.running for s in self._scoring.values())

    def close(self, timeout: float = 8.0) -> None:
        """Queue no more scoring. Jobs already queued stay for the workers; rows stored and not yet
        queued are queued by the next start (it finds the day's run with unscored rows)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)


def _unique(samples: Sequence[EvalSample]) -> List[EvalSample]:
    seen: Set[Optional[str]] = set()
    out = []
    for sample in samples:
        if sample.sample_id not in seen:
            seen.add(sample.sample_id)
            out.append(sample)
    return out
