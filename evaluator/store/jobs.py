"""Runs as jobs: the `jobs` table (migration m008_jobs in history.py) and the queue workers share.

A run waits as a "queued" job until a worker claims it; the worker holds a lease it renews with
each heartbeat (every ~0.5 s, with the run's small progress record), and ends the job when the
run ends. A job whose lease passed (its worker was killed, or lost the database) is expired: the
run becomes "interrupted", and when it is not pinned to one process and has been tried fewer than
MAX_ATTEMPTS times it is queued again, so another worker resumes it (only rows with no result).

    queue = JobQueue(store, Limits(max_running_per_user=2))
    queue.submit(run_id, kind="new", owner="alice")
    job = queue.claim("worker-1")          # None when nothing may be claimed now
    queue.heartbeat(job.run_id, "worker-1", Progress(done=10, total=100))
    queue.request_stop(run_id)             # from any process: the worker stops within ~1 s
    queue.finish(run_id, "worker-1", "finished")

A job executes an evaluation run (kinds new, resume, rescore) or a test-set generation (kind generate, whose
row lives in `generations`, store/generations.py); the statuses a job sets go to whichever table holds its id.

Every time is the DATABASE's clock (PostgreSQL's clock_timestamp(), SQLite's julianday('now')),
in seconds since the epoch, so workers on machines with skewed clocks agree on who holds a lease.
Claims are atomic: SQLite's BEGIN IMMEDIATE takes the write lock first; on PostgreSQL a transaction
advisory lock serialises claimers (the per-user cap counts running jobs, which row locks alone
cannot protect) and the candidate row is read `FOR UPDATE SKIP LOCKED`.
"""
from __future__ import annotations

import json
import threading
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import QueueFull, RagmeterError
from .db import Session
from .history import RunStore

JOB_STATES = ("queued", "running", "ended")
GENERATE = "generate"  # the kind of a test-set generation's job (store/generations.py)
JOB_KINDS = ("new", "resume", "rescore", GENERATE)
MAX_ATTEMPTS = 3  # a run re-queued after this many lost leases stays "interrupted" until a person resumes it
_QUEUE_LOCK = 0x6A6F6273  # "jobs": the advisory lock PostgreSQL claimers and submitters take


@dataclass(frozen=True)
class Limits:
    """Caps from the team config's `[runs]` (0 = no cap) and the lease a worker must renew.

    `max_queued_per_user` caps one owner's jobs queued or running together, so that one user cannot
    fill the queue and keep everyone else out; owners in `exempt` (the team's admins) are not capped."""

    max_running_per_user: int = 0
    max_queued: int = 0
    lease_s: float = 30.0
    max_queued_per_user: int = 0
    exempt: Tuple[str, ...] = ()


@dataclass
class Progress:
    """The small record a page polls (a few hundred bytes, never rows); `error` says why a run failed."""

    done: int
    total: int
    answered: int = 0
    means: Dict[str, float] = field(default_factory=dict)
    elapsed: float = 0.0
    eta: Optional[float] = None
    batch_status: Optional[str] = None
    lost_rows: int = 0
    has_target: bool = False
    error: Optional[str] = None
    # A generation's (done/total are its items kept/wanted): what it spent and threw away so far.
    attempts: int = 0
    rejected: int = 0
    calls: int = 0
    tokens: int = 0

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "Progress":
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        return cls(**{"done": 0, "total": 0, **known})


@dataclass
class JobInfo:
    """One job as pages and `ragmeter runs` show it; `position` is its 1-based place while queued."""

    run_id: str
    kind: str
    state: str
    status: str
    owner: str
    worker: Optional[str]
    stop_requested: bool
    attempts: int
    position: Optional[int]
    progress: Optional[Progress]
    dataset_name: str
    pinned: Optional[str] = None
    lost_rows: int = 0


# A job is a run's or a generation's (m011): its status and name come from whichever table holds its id.
_JOB_COLUMNS = ("j.run_id, j.kind, j.state, COALESCE(r.status, g.status), j.owner, j.worker, j.stop_requested, "
                "j.attempts, j.progress, COALESCE(r.dataset_name, g.name), j.pinned, j.lost_rows, j.queued_at")
_JOB_TABLES = "jobs j LEFT JOIN runs r ON r.run_id = j.run_id LEFT JOIN generations g ON g.gen_id = j.run_id"


def _job(row: Sequence[Any], position: Optional[int]) -> JobInfo:
    progress = Progress.from_dict(json.loads(row[8])) if row[8] else None
    return JobInfo(run_id=row[0], kind=row[1], state=row[2], status=row[3] or "", owner=row[4], worker=row[5],
                   stop_requested=bool(row[6]), attempts=int(row[7]), position=position, progress=progress,
                   dataset_name=row[9] or "", pinned=row[10], lost_rows=int(row[11] or 0))


def set_status(db: Session, job_id: str, status: str) -> None:
    """The status of the run or generation a job executes (one of the two statements changes a row)."""
    db.execute("UPDATE runs SET status = ? WHERE run_id = ?", (status, job_id))
    db.execute("UPDATE generations SET status = ? WHERE gen_id = ?", (status, job_id))


def now_sql(dialect: str) -> str:
    """The database clock, in seconds since the epoch, as SQL."""
    if dialect == "postgresql":
        return "EXTRACT(EPOCH FROM clock_timestamp())::double precision"
    return "((julianday('now') - 2440587.5) * 86400.0)"


class JobQueue:
    """The jobs of the history `store`, under `limits`."""

    def __init__(self, store: RunStore, limits: Limits = Limits()) -> None:
        self.store, self.limits = store, limits
        self._now = now_sql(store.dialect)
        self._pg = store.dialect == "postgresql"

    def _lock(self, db: Session) -> None:
        if self._pg:
            db.execute("SELECT pg_advisory_xact_lock(?)", (_QUEUE_LOCK,))

    # -- submitting and claiming -------------------------------------------------------------------
    def submit(self, run_id: str, *, kind: str, owner: str, pinned: Optional[str] = None) -> JobInfo:
        """Queue run `run_id` (a job that ended before is queued again); QueueFull at `max_queued`."""
        if kind not in JOB_KINDS:
            raise ValueError(f"kind must be one of {', '.join(JOB_KINDS)}, not {kind!r}")
        with self.store.transaction() as db:
            self._lock(db)
            self._check_owner(db, run_id, owner)
            queued = db.fetchall("SELECT COUNT(*) FROM jobs WHERE state = 'queued'")[0][0]
            if self.limits.max_queued and queued >= self.limits.max_queued:
                raise QueueFull(f"the run queue is full: {queued} runs are waiting (the team's cap, [runs] "
                                f"max_queued, is {self.limits.max_queued}); wait for some to start, or stop one "
                                "of yours with 'ragmeter runs stop RUN_ID'")
            # queued_at orders the queue: strictly after every job queued before (two submits within the clock's
            # resolution would tie, and a tie would be broken by the random run id, not by who came first).
            later = (f"(SELECT CASE WHEN MAX(queued_at) IS NULL OR MAX(queued_at) < {self._now} THEN {self._now} "
                     "ELSE MAX(queued_at) + 0.001 END FROM jobs)")
            db.execute(
                f"INSERT INTO jobs (run_id, kind, owner, state, pinned, queued_at) VALUES (?, ?, ?, 'queued', ?, "
                f"{later}) ON CONFLICT (run_id) DO UPDATE SET kind = excluded.kind, owner = excluded.owner, "
                "state = 'queued', pinned = excluded.pinned, worker = NULL, lease_until = NULL, "
                "stop_requested = 0, attempts = 0, queued_at = excluded.queued_at, started_at = NULL, "
                "progress = NULL, lost_rows = 0", (run_id, kind, owner, pinned))
            set_status(db, run_id, "queued")
        job = self.get(run_id)
        assert job is not None
        return job

    def _check_owner(self, db: Session, run_id: str, owner: str) -> None:
        """QueueFull when `owner` already has `max_queued_per_user` jobs queued or running (admins exempt)."""
        cap = self.limits.max_queued_per_user
        if not cap or owner in self.limits.exempt or "*" in self.limits.exempt:
            return
        rows = db.fetchall("SELECT state, COUNT(*) FROM jobs WHERE owner = ? AND state IN ('queued', 'running') "
                           "AND run_id <> ? GROUP BY state", (owner, run_id))
        held = {state: int(n) for state, n in rows}
        if sum(held.values()) >= cap:
            raise QueueFull(f"{owner} already has {held.get('queued', 0)} runs queued and {held.get('running', 0)} "
                            f"running: {owner}'s limit is {cap} at once (the team's [runs] max_queued_per_user); "
                            "wait for one to end, or stop one with 'ragmeter runs stop RUN_ID'")

    def claim(self, worker_id: str, *, run_id: Optional[str] = None, pinned: Optional[str] = None,
              only_pinned: bool = False) -> Optional[JobInfo]:
        """Take the oldest queued job this worker may run (or `run_id` only); None when there is none.

        Never a job pinned to another process, never one whose owner already runs
        `max_running_per_user` jobs; with `only_pinned`, only jobs pinned to `pinned` (the dashboard
        leaves the others to its worker process). The claimed run's status becomes "running".
        """
        where = ["j.state = 'queued'", "j.pinned = ?" if only_pinned else "(j.pinned IS NULL OR j.pinned = ?)"]
        params: List[Any] = [pinned]
        if run_id is not None:
            where.append("j.run_id = ?")
            params.append(run_id)
        if self.limits.max_running_per_user:
            where.append("(SELECT COUNT(*) FROM jobs k WHERE k.state = 'running' AND k.owner = j.owner) < ?")
            params.append(self.limits.max_running_per_user)
        sql = (f"SELECT j.run_id FROM jobs j WHERE {' AND '.join(where)} ORDER BY j.queued_at, j.run_id LIMIT 1"
               + (" FOR UPDATE SKIP LOCKED" if self._pg else ""))
        with self.store.transaction() as db:
            self._lock(db)
            rows = db.fetchall(sql, tuple(params))
            if not rows:
                return None
            chosen = rows[0][0]
            db.execute(f"UPDATE jobs SET state = 'running', worker = ?, lease_until = {self._now} + ?, "
                       f"heartbeat_at = {self._now}, started_at = {self._now} WHERE run_id = ?",
                       (worker_id, self.limits.lease_s, chosen))
            set_status(db, chosen, "running")
        return self.get(chosen)

    # -- a running job -------------------------------------------------------------------------------
    def heartbeat(self, run_id: str, worker_id: str, progress: Progress) -> bool:
        """Renew the lease and store `progress`; False when the lease is no longer this worker's."""
        text = json.dumps(progress.to_dict(), ensure_ascii=False, default=str)
        changed = self.store.write(
            f"UPDATE jobs SET lease_until = {self._now} + ?, heartbeat_at = {self._now}, progress = ?, "
            "lost_rows = ? WHERE run_id = ? AND worker = ? AND state = 'running'",
            (self.limits.lease_s, text, progress.lost_rows, run_id, worker_id))
        return changed == 1

    def stop_requested(self, run_id: str) -> bool:
        rows = self.store.query("SELECT stop_requested FROM jobs WHERE run_id = ?", (run_id,))
        return bool(rows and rows[0][0])

    def request_stop(self, run_id: str) -> Optional[JobInfo]:
        """Stop the run: a queued job ends "stopped" now, a running one is flagged for its worker
        (which stops it within ~1 s, every finished row kept). None when the run has no job."""
        with self.store.transaction() as db:
            self._lock(db)
            db.execute("UPDATE jobs SET stop_requested = 1 WHERE run_id = ? AND state = 'running'", (run_id,))
            if db.rowcount("UPDATE jobs SET state = 'ended', stop_requested = 1 WHERE run_id = ? "
                           "AND state = 'queued'", (run_id,)):
                set_status(db, run_id, "stopped")
        return self.get(run_id)

    def finish(self, run_id: str, worker_id: str, status: str) -> bool:
        """End this worker's job; the run's status becomes `status` (Run wrote its rows and verdict).
        False when the job is no longer this worker's (its lease passed): nothing is written then."""
        with self.store.transaction() as db:
            if not db.rowcount("UPDATE jobs SET state = 'ended', lease_until = NULL WHERE run_id = ? "
                               "AND worker = ? AND state = 'running'", (run_id, worker_id)):
                return False
            set_status(db, run_id, status)
        return True

    def expire(self) -> List[str]:
        """Running jobs whose lease passed: their runs become "interrupted", and the unpinned ones tried
        fewer than MAX_ATTEMPTS times are queued again (keeping their place). Their run ids."""
        with self.store.transaction() as db:
            self._lock(db)
            rows = db.fetchall(f"SELECT run_id, pinned, attempts FROM jobs WHERE state = 'running' "
                               f"AND lease_until < {self._now}" + (" FOR UPDATE" if self._pg else ""))
            for run_id, pinned, attempts in rows:
                again = pinned is None and attempts < MAX_ATTEMPTS
                db.execute("UPDATE jobs SET state = ?, worker = NULL, lease_until = NULL, attempts = attempts + 1 "
                           "WHERE run_id = ?", ("queued" if again else "ended", run_id))
                set_status(db, run_id, "queued" if again else "interrupted")
        return [r[0] for r in rows]

    def abandon(self, run_id: str) -> bool:
        """End a running job whose worker is known to be dead (its process is gone from this machine)
        without waiting for its lease: the run becomes "interrupted". False when it was not running."""
        with self.store.transaction() as db:
            self._lock(db)
            if not db.rowcount("UPDATE jobs SET state = 'ended', worker = NULL, lease_until = NULL, "
                               "attempts = attempts + 1 WHERE run_id = ? AND state = 'running'", (run_id,)):
                return False
            set_status(db, run_id, "interrupted")
        return True

    # -- reading -------------------------------------------------------------------------------------
    def get(self, run_id: str) -> Optional[JobInfo]:
        """The run's job, or None when it has none (a run from before jobs, or --no-history)."""
        rows = self.store.query(f"SELECT {_JOB_COLUMNS} FROM {_JOB_TABLES} WHERE j.run_id = ?", (run_id,))
        if not rows:
            return None
        return _job(rows[0], self._position(rows[0]) if rows[0][2] == "queued" else None)

    def _position(self, row: Sequence[Any]) -> int:
        ahead = self.store.query("SELECT COUNT(*) FROM jobs WHERE state = 'queued' AND (queued_at < ? OR "
                                 "(queued_at = ? AND run_id < ?))", (row[12], row[12], row[0]))
        return int(ahead[0][0]) + 1

    def list(self, states: Sequence[str] = ("queued", "running")) -> List[JobInfo]:
        """Jobs in `states`, queued ones first in queue order (with their positions), then the others."""
        marks = ", ".join("?" for _ in states)
        rows = self.store.query(f"SELECT {_JOB_COLUMNS} FROM {_JOB_TABLES} WHERE j.state IN ({marks}) "
                                "ORDER BY j.queued_at, j.run_id", tuple(states))
        queued = [r for r in rows if r[2] == "queued"]
        others = [r for r in rows if r[2] != "queued"]
        return [_job(r, i + 1) for i, r in enumerate(queued)] + [_job(r, None) for r in others]

    def progress(self, run_id: str) -> Optional[Progress]:
        """The run's last progress record (one small read: what a page polls)."""
        rows = self.store.query("SELECT progress FROM jobs WHERE run_id = ?", (run_id,))
        return Progress.from_dict(json.loads(rows[0][0])) if rows and rows[0][0] else None

    def lease_left(self, run_id: str) -> Optional[Tuple[str, float]]:
        """(worker, seconds its lease has left) of a running job, else None."""
        rows = self.store.query(f"SELECT worker, lease_until - {self._now} FROM jobs WHERE run_id = ? "
                                "AND state = 'running'", (run_id,))
        return (rows[0][0], float(rows[0][1])) if rows else None


_expired_at: Dict[str, float] = {}  # history location -> when this process last expired its leases
_expired_lock = threading.Lock()


def expire_stale(store: RunStore, every: float = 1.0) -> List[str]:
    """Expire the leases that passed (JobQueue.expire), at most once per `every` seconds per history in
    this process: what reads statuses for a page calls first, so that a run whose worker or dashboard is
    gone shows "interrupted" (or "queued" again) within its lease even when no worker is left to notice.
    A history this process cannot write is read as it is."""
    key, now = str(store.path), time.monotonic()
    with _expired_lock:
        if now - _expired_at.get(key, -every) < every:
            return []
        _expired_at[key] = now
    try:
        return JobQueue(store).expire()
    except RagmeterError:
        return []
