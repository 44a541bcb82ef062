"""Starting runs as jobs: `submit_new`, `submit_resume`, `submit_rescore` write the run (status "queued",
its rows stored) and its job (store/jobs.py); a worker (runs/worker.py) claims and scores it.

    run_id = submit_new(store, RunConfig(), samples, dataset_name="faq.csv")   # any worker may take it
    run_id = submit_new(store, config, samples, dataset_name="faq.csv", api_key=key)  # only this process

What must never reach the database (an API key, a judge object, target header values, a judge chosen
for one resume) stays in this process, in `HANDOFF`, keyed by run id, and the job is pinned to this
process (`PROCESS_TOKEN`): only its own worker claims it. Without them the job is not pinned: any
worker builds the judge from the stored settings and its own environment (the key from the judge's
`api_key_env`); a worker lacking the key fails the run with the message that names the variable.
"""
from __future__ import annotations

import os
import socket
import threading
import uuid
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Optional, Sequence, Tuple

from ..metrics.retrieval import parse_name  # a retrieval run needs no answers
from ..environment import require_key
from ..errors import DatasetError, HistoryError, QueueFull, RagmeterError
from ..io.versions import ROWS_KEY, VERSION_KEY, version_settings
from ..judges.base import Judge, close_judge
from ..model import EvalSample
from ..scoring.run_config import RunConfig
from ..store.history import RunStore, default_owner
from ..store.naming import clean_name
from ..store.jobs import JobInfo, JobQueue, Limits
from ..targets import TargetConfig
from ..targets.replay import row_target
from .run import Run

# Who this process is, for pinned jobs: host, pid and a random part (a pid is reused after a restart).
PROCESS_TOKEN = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


@dataclass
class Handoff:
    """What a pinned job's worker needs that the database never holds."""

    api_key: str = ""
    judge: Optional[Judge] = None
    config: Optional[RunConfig] = None  # a judge named for this resume only
    target: Optional[TargetConfig] = None
    target_headers: Tuple[str, ...] = ()

    @property
    def needed(self) -> bool:
        return bool(self.api_key or self.judge is not None or self.config is not None or self.target_headers
                    or (self.target is not None and self.target.headers))


HANDOFF: Dict[str, Handoff] = {}
# The stored settings drop every field whose name says "key" (io/redact.py), `api_key_env` among them;
# a worker elsewhere needs the variable's NAME (never its value) to find the key: it is kept under this one.
KEY_VARIABLE = "judge_env_var"
_handoff_lock = threading.Lock()


def take_handoff(run_id: str) -> Handoff:
    """The run's handoff (an empty one for an unpinned job); it stays until `drop_handoff`."""
    with _handoff_lock:
        return HANDOFF.get(run_id) or Handoff()


def put_handoff(run_id: str, handoff: Handoff) -> None:
    """Keep `handoff` in this process for the job `run_id` (pinned to it) until `drop_handoff`."""
    with _handoff_lock:
        HANDOFF[run_id] = handoff


def drop_handoff(run_id: str) -> None:
    with _handoff_lock:
        HANDOFF.pop(run_id, None)


def build_run(store: RunStore, run_id: str) -> Run:
    """The Run a worker scores for a claimed job: always the resume path (rows with no stored result)."""
    h = take_handoff(run_id)
    config = job_config(store.get_run(run_id).settings, h)
    if not h.api_key and h.judge is None:
        require_key(config.api_key_env, "this run's judge", "in the worker's environment, then resume the run")
    run = Run.resume(store, run_id, api_key=h.api_key, judge=h.judge, config=config, target=h.target,
                     target_headers=h.target_headers)
    run.keep_rows = False  # every row is in the history: readers (pages, the CLI's outputs) read it from there
    return run


def job_config(settings: Dict[str, Any], handoff: Handoff) -> RunConfig:
    """How a claimed job scores: the config handed off for it, else its stored settings (with the name of
    the key's variable, which the stored settings keep under KEY_VARIABLE)."""
    config = handoff.config or RunConfig.from_settings(settings)
    if not config.api_key_env and settings.get(KEY_VARIABLE):
        config = replace(config, api_key_env=str(settings[KEY_VARIABLE]))
    return config


def queue_job(store: RunStore, run_id: str, *, kind: str, owner: str, handoff: Handoff, limits: Limits,
              pin: bool, forget: Optional[Callable[[], Any]] = None) -> str:
    """Queue the job of run (or generation) `run_id`, pinned to this process when its handoff holds what
    the database must not; `forget` drops a record created for it when the queue has no place for it."""
    pinned = PROCESS_TOKEN if pin or handoff.needed else None
    if pinned:
        put_handoff(run_id, handoff)
    try:
        JobQueue(store, limits).submit(run_id, kind=kind, owner=owner, pinned=pinned)
    except QueueFull:
        drop_handoff(run_id)
        if forget is not None:
            forget()  # one that never got a place in the queue is not kept
        raise
    return run_id


def _judge_settings(config: RunConfig, api_key: str, judge: Optional[Judge]) -> Dict[str, Any]:
    """The run's settings with its judge's own (model, endpoint...): the judge is built here when it can
    be (a worker elsewhere may hold the key this process lacks: then only the config's are kept)."""
    variable = {KEY_VARIABLE: config.api_key_env} if config.api_key_env else {}
    if judge is not None:
        return {**config.settings(judge), **variable}
    try:
        built = config.build_judge(api_key)
    except RagmeterError:
        return {**config.settings(None), **variable}
    try:
        return {**config.settings(built), **variable}
    finally:
        close_judge(built)


def submit_new(store: RunStore, config: RunConfig, samples: Sequence[EvalSample], *, dataset_name: str,
               owner: Optional[str] = None, project: Optional[str] = None, target: Optional[TargetConfig] = None,
               api_key: str = "", judge: Optional[Judge] = None, limits: Limits = Limits(),
               settings: Optional[Dict[str, Any]] = None, pin: bool = False, name: Optional[str] = None) -> str:
    """Queue a new run of `samples`; its id. `settings` adds to what is stored (the CLI's output files);
    `pin` keeps it for this process's worker even when nothing needs handing off (the CLI runs its own);
    `name` is the run's name (None: "dataset · scorer · date", store/naming.py)."""
    name = clean_name(name)  # a name too long is refused before anything is stored
    chosen = config.chosen_metrics()  # MetricError now, not on a worker
    if target is None and samples and not all(parse_name(m.name) for m in chosen) \
            and not any(s.answer.strip() for s in samples):
        raise DatasetError("has no answers (the answer is empty on every row), so there is nothing to score; "
                           "fill in the answers, or give a target that answers each question", file=dataset_name)
    stored = _judge_settings(config, api_key, judge)
    if target is not None:
        stored["target"] = target.settings(row_target(target, list(samples)))
    stored.update(version_settings(samples))
    stored.update(settings or {})
    owner = (owner or "").strip() or default_owner()
    run_id = store.create_run(dataset_name=dataset_name, samples=list(samples), settings=stored, owner=owner,
                              project=project, status="queued", name=name)
    handoff = Handoff(api_key=api_key, judge=judge, target=target if target is not None and target.headers else None)
    return queue_job(store, run_id, kind="new", owner=owner, handoff=handoff, limits=limits, pin=pin,
                     forget=lambda: store.delete_run(run_id))


def submit_resume(store: RunStore, run_id: str, *, api_key: str = "", judge: Optional[Judge] = None,
                  config: Optional[RunConfig] = None, target: Optional[TargetConfig] = None,
                  target_headers: Sequence[str] = (), limits: Limits = Limits(), pin: bool = False) -> str:
    """Queue the rest of run `run_id` (only rows with no stored result are scored); HistoryError when it
    is unknown or already queued or running."""
    info = store.get_run(run_id)
    queue = JobQueue(store)
    queue.expire()
    busy = queue.get(run_id)
    if busy is not None and busy.state == "running" and _dead_here(busy.worker) and queue.abandon(run_id):
        busy = queue.get(run_id)  # its process was killed (kill -9, a closed terminal): no need to wait its lease
    if busy is not None and busy.state != "ended":
        raise HistoryError(f"run {run_id} is already {busy.state}"
                           f"{' on ' + busy.worker if busy.worker else ''}; stop it first with "
                           f"'ragmeter runs stop {run_id}', or wait for it to end")
    if config is not None:
        config.chosen_metrics()
    handoff = Handoff(api_key=api_key, judge=judge, config=config, target=target,
                      target_headers=tuple(target_headers))
    return queue_job(store, run_id, kind="resume", owner=info.owner or default_owner(), handoff=handoff,
                     limits=limits, pin=pin)


def _dead_here(worker: Optional[str]) -> bool:
    """Whether a worker id (host:pid:…) names a process of this machine that no longer exists."""
    host, _, rest = (worker or "").partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except OSError:  # alive, someone else's
        return False
    return False


def submit_rescore(store: RunStore, run_id: str, config: RunConfig, *, owner: Optional[str] = None,
                   api_key: str = "", judge: Optional[Judge] = None, limits: Limits = Limits(),
                   pin: bool = False, name: Optional[str] = None) -> str:
    """Queue a new run scoring the answers saved in run `run_id` with `config`'s judge (no target call), named
    `name` (None: "dataset · scorer · date")."""
    name = clean_name(name)
    info = store.get_run(run_id)
    samples = store.answered_samples(run_id)
    config.chosen_metrics()
    stored = _judge_settings(config, api_key, judge)
    stored["rescored_from"] = run_id
    stored.update({k: info.settings[k] for k in (VERSION_KEY, ROWS_KEY) if k in info.settings})
    if info.settings.get("target"):
        stored["target"] = info.settings["target"]  # where the answers came from
    owner = (owner or "").strip() or default_owner()
    new_id = store.create_run(dataset_name=info.dataset_name, samples=samples, settings=stored, owner=owner,
                              project=info.project, status="queued", name=name)
    return queue_job(store, new_id, kind="rescore", owner=owner, handoff=Handoff(api_key=api_key, judge=judge),
                     limits=limits, pin=pin, forget=lambda: store.delete_run(new_id))


def stop_run(store: RunStore, run_id: str) -> Optional[JobInfo]:
    """Ask the run's (or a generation's) worker to stop it (a queued one ends at once); None when it has no job."""
    queue = JobQueue(store)
    if queue.get(run_id) is None:
        store.get_run(run_id)  # HistoryError naming the id when unknown
        return None
    return queue.request_stop(run_id)
