"""Test-set generations as jobs: `submit_generation` stores one (store/generations.py) and queues its job
(kind "generate"); a worker (runs/worker.py) claims it and runs a `GenerationTask`.

    gen_id = submit_generation(store, chunks, GenerateSettings(n=20), RunConfig(), name="bikes.md")
    resume_generation(store, gen_id)     # a stopped, short or interrupted one: carries on from its items
    stop_generation(store, gen_id)       # from any process: its worker stops within ~1 s

The task rebuilds the judge from the stored settings and the chunks and items from the database, so
any worker can run an unpinned generation and resume one whose worker died; typed keys and judge
objects never reach the database: they stay in this process's handoff (runs/jobs.py HANDOFF) and pin
the job to it, exactly as evaluation runs do. Each heartbeat saves the items kept since the last.
"""
from __future__ import annotations

import time
from dataclasses import asdict, fields, replace
from typing import Any, Dict, List, Optional, Sequence, Set

from ..environment import require_key
from ..errors import DatasetError, HistoryError
from ..generate.chunking import Chunk
from ..generate.coverage import compute_coverage
from ..generate.items import TestItem
from ..generate.plan import Section
from ..generate.runner import GenerateSettings, Generation
from ..judges.base import Judge, close_judge
from ..scoring.run_config import RunConfig
from ..store.generations import GenerationInfo, Generations
from ..store.history import RunStore, default_owner
from ..store.jobs import GENERATE, JobInfo, JobQueue, Limits, Progress
from .jobs import KEY_VARIABLE, Handoff, queue_job, take_handoff

MAX_CHARS = 200_000_000  # the documents' text a generation may store when the caller gives no cap of its own
_SETTINGS = tuple(f.name for f in fields(GenerateSettings))


def item_from_record(record: Dict[str, Any]) -> TestItem:
    known = {f.name for f in fields(TestItem)}
    return TestItem(**{k: v for k, v in record.items() if k in known})


def _record(item: TestItem) -> Dict[str, Any]:
    return asdict(item)


def _stored_settings(settings: GenerateSettings, config: RunConfig, only: Optional[Set[Section]],
                     generator: str) -> Dict[str, Any]:
    judge = {**config.settings(None), **({KEY_VARIABLE: config.api_key_env} if config.api_key_env else {})}
    return {**asdict(settings), "judge": judge, "generator": generator,
            "only": None if only is None else sorted([list(s) for s in only])}


def submit_generation(store: RunStore, chunks: Sequence[Chunk], settings: GenerateSettings, config: RunConfig, *,
                      name: str, owner: Optional[str] = None, existing: Sequence[TestItem] = (),
                      only: Optional[Set[Section]] = None, generator: str = "", api_key: str = "",
                      judge: Optional[Judge] = None, limits: Limits = Limits(), pin: bool = False,
                      max_chars: int = MAX_CHARS) -> str:
    """Store a generation of `settings.n` NEW items over `chunks` (after `existing`) and queue it; its id.
    `pin` keeps it for this process's worker (the CLI runs its own); a key or judge always pins it."""
    size = sum(len(c.text) for c in chunks)
    if size > max_chars:
        raise DatasetError(f"the documents hold {size:,} characters of text; a generation stores at most "
                           f"{max_chars:,}: generate from fewer documents at a time", file=name)
    if not chunks:
        raise DatasetError("holds no text to write questions from", file=name)
    owner = (owner or "").strip() or default_owner()
    target = len(existing) + settings.n
    gen_id = Generations(store).create(
        name=name, owner=owner, settings=_stored_settings(replace(settings, n=target), config, only, generator),
        chunks=[asdict(c) for c in chunks], items=[_record(i) for i in existing], target=target)
    return queue_job(store, gen_id, kind=GENERATE, owner=owner, handoff=Handoff(api_key=api_key, judge=judge),
                     limits=limits, pin=pin, forget=lambda: Generations(store).delete(gen_id))


def can_resume(info: GenerationInfo) -> bool:
    """Whether carrying the generation on could keep more: not when it has all it wanted, nor after an
    offline one fell short (its attempts already went over every sentence of the documents)."""
    if info.n_items >= info.target:
        return False
    offline = bool(info.outcome.get("offline"))
    return info.status in ("stopped", "interrupted") or (info.status == "short" and not offline)


def resume_generation(store: RunStore, gen_id: str, *, api_key: str = "", judge: Optional[Judge] = None,
                      limits: Limits = Limits(), pin: bool = False) -> str:
    """Queue the rest of generation `gen_id` (its stored items kept); HistoryError when it is still queued
    or running, or has nothing left to do."""
    info = Generations(store).get(gen_id)
    queue = JobQueue(store)
    queue.expire()
    job = queue.get(gen_id)
    if job is not None and job.state != "ended":
        raise HistoryError(f"generation {gen_id} is already {job.state}; stop it first, or wait for it to end")
    if not can_resume(info):
        raise HistoryError(f"generation {gen_id} cannot keep more: it is {info.status} with "
                           f"{info.n_items}/{info.target} items")
    return queue_job(store, gen_id, kind=GENERATE, owner=info.owner, handoff=Handoff(api_key=api_key, judge=judge),
                     limits=limits, pin=pin)


def stop_generation(store: RunStore, gen_id: str) -> Optional[JobInfo]:
    """Ask the generation's worker to stop it (a queued one ends at once); None when it has no job."""
    Generations(store).get(gen_id)  # HistoryError naming the id when unknown
    return JobQueue(store).request_stop(gen_id)


def stored_items(store: RunStore, gen_id: str) -> List[TestItem]:
    """The items a generation kept (those it started from included), in order."""
    return [item_from_record(r) for r in Generations(store).items(gen_id)]


def stored_chunks(store: RunStore, gen_id: str) -> List[Chunk]:
    return [Chunk(**c) for c in Generations(store).chunks(gen_id)]


def judge_config(info: GenerationInfo) -> RunConfig:
    """The judge config a stored generation was started with (the key's variable name included)."""
    stored = info.settings.get("judge") or {}
    config = RunConfig.from_settings(stored)
    if not config.api_key_env and stored.get(KEY_VARIABLE):
        config = replace(config, api_key_env=str(stored[KEY_VARIABLE]))
    return config


def _judge(info: GenerationInfo, handoff: Handoff) -> Judge:
    """The generation's judge: the handed-off one, else built from the stored settings and the key handed
    off or found in this worker's environment."""
    if handoff.judge is not None:
        return handoff.judge
    config = judge_config(info)
    if not config.offline and not handoff.api_key:
        require_key(config.api_key_env, "this generation's model",
                    "in the worker's environment, then resume the generation")
    return config.build_judge(handoff.api_key)


class GenerationTask:
    """A claimed generation job, with what runs/worker.py drives: start, join, stop, detach, status, progress."""

    def __init__(self, store: RunStore, job: JobInfo, gen: Generation, existing: List[TestItem], target: int,
                 own_judge: Optional[Judge]) -> None:
        self.store, self.job, self.gen, self.existing, self.target = store, job, gen, existing, target
        self.run_id = job.run_id  # the job's id, as a Run's
        self.pending = range(max(0, target - len(existing)))  # what the worker's log line counts
        self.stopping = self.detached = False
        self._own_judge = own_judge  # built here from the settings: closed when the generation ends
        self._saved = len(existing)

    @classmethod
    def build(cls, store: RunStore, job: JobInfo) -> "GenerationTask":
        """The task for claimed job `job` (its worker id in `job.worker`): the items it still has to keep."""
        info = Generations(store).get(job.run_id)
        handoff = take_handoff(job.run_id)
        judge = _judge(info, handoff)
        existing = stored_items(store, job.run_id)
        s = info.settings
        settings = GenerateSettings(**{k: s[k] for k in _SETTINGS if k in s})
        only = None if s.get("only") is None else {(str(t), str(sec)) for t, sec in s["only"]}
        gen = Generation(judge, stored_chunks(store, job.run_id),
                         replace(settings, n=max(0, info.target - len(existing))), existing=existing, only=only,
                         generator=str(s.get("generator") or ""))
        return cls(store, job, gen, existing, info.target, None if handoff.judge is not None else judge)

    # -- what the worker drives ------------------------------------------------------------------
    def start(self) -> "GenerationTask":
        self.gen.start()
        return self

    def join(self, timeout: Optional[float] = None) -> bool:
        """Wait at most `timeout` s; True once the generation has ended (its thread included)."""
        self.gen.join(timeout)
        if self.gen.status in ("ready", "running"):
            return False
        self.gen.join()  # its last report is on the way: the figures are final after it
        return True

    def stop(self) -> None:
        self.stopping = True
        self.gen.stop()

    def detach(self) -> None:
        """Another worker took the job (this one's lease passed): stop, and write nothing more."""
        self.detached = True
        self.stop()

    @property
    def status(self) -> str:
        return self.gen.status if self.gen.status in ("finished", "short", "stopped", "failed") else "running"

    @property
    def items(self) -> List[TestItem]:
        return self.existing + list(self.gen.items)

    @property
    def done(self) -> int:
        return len(self.existing) + len(self.gen.items)

    @property
    def total(self) -> int:
        return self.target

    def progress(self) -> Progress:
        """The record a page polls; saves the items kept since the last call (the whole outcome once ended)."""
        g = self.gen
        self._save()
        elapsed = time.monotonic() - g.started if g.running and g.started is not None else g.elapsed
        return Progress(done=self.done, total=self.total, elapsed=round(elapsed, 2), error=g.error,
                        attempts=g.attempts, rejected=sum(g.rejected.values()), calls=g.calls, tokens=g.tokens)

    def _save(self) -> None:
        if self.detached:
            return
        worker = str(self.job.worker or "")
        store = Generations(self.store)
        ended = self.gen.status in ("finished", "short", "stopped", "failed")
        items = self.items  # one read: the generation's threads append to it
        if ended:
            store.save_outcome(self.run_id, [_record(i) for i in items], self.outcome(items), worker=worker)
            if self._own_judge is not None:
                close_judge(self._own_judge)
                self._own_judge = None
        elif len(items) != self._saved:
            store.save_items(self.run_id, [_record(i) for i in items], worker=worker)
        self._saved = len(items)

    def outcome(self, items: Sequence[TestItem]) -> Dict[str, Any]:
        """What the page and the CLI show of an ended generation (its coverage read from its own index)."""
        g = self.gen
        return {"rejected": dict(g.rejected.most_common()), "attempts": g.attempts, "calls": g.calls,
                "tokens": g.tokens, "shortfall": g.shortfall(), "error": g.error, "offline": g.offline,
                "elapsed": round(g.elapsed, 2), "status": g.status,
                "coverage": compute_coverage(g.chunks, list(items), g.index).summary()}

