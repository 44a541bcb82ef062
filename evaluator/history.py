"""Run history in SQLite: every run's settings, samples and results, saved as they finish.

One short transaction per write, in WAL mode, so a killed process loses at most the samples that
were in flight; `pending_samples` tells a resumed run what is left. Each thread gets its own
connection, so one RunStore can serve the dashboard's threads while a CLI process writes too.

Each sample is stored once, in `samples`; a result row keeps only its scores and metric details
(the compact record) and is joined back to its sample when read. Rows written before that
(m003) hold the whole record, sample included, and still load as they are.

The schema evolves through MIGRATIONS, applied in order and recorded in the `_migrations` table.
Settings are sanitised before they are stored: no key, secret, token, password or authorization
ever reaches the file.
"""
from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from .errors import HistoryError
from .io.records import (
    result_from_compact_record,
    result_from_record,
    result_to_compact_record,
    sample_from_record,
    sample_to_record,
)
from .io.redact import redact_value, sanitize_settings
from .model import EvalReport, EvalResult, EvalSample

ENV_VAR = "RAGMETER_HISTORY"
DEFAULT_HISTORY_PATH = Path.home() / ".ragmeter" / "history.sqlite3"

RUN_STATUSES = ("running", "stopped", "finished", "failed")

MIGRATIONS: List[Callable[[sqlite3.Connection], None]] = []
migration = MIGRATIONS.append


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute(
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            name TEXT,
            dataset_name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL,
            n_samples INTEGER NOT NULL,
            settings TEXT NOT NULL,
            total_time REAL,
            usage TEXT
        )"""
    )
    db.execute(
        """CREATE TABLE samples (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (run_id, idx)
        )"""
    )
    db.execute(
        """CREATE TABLE results (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            sample_id TEXT,
            overall REAL NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (run_id, idx)
        )"""
    )


@migration
def m002_finished_at(db: sqlite3.Connection) -> None:
    db.execute("ALTER TABLE runs ADD COLUMN finished_at TEXT")


@migration
def m003_compact_results(db: sqlite3.Connection) -> None:
    # A 31,734-row run took ~199 MB when every result repeated its sample's contexts. Rows written
    # from now on are compact (1); older rows, and rows an older ragmeter still writes, stay full (0).
    db.execute("ALTER TABLE results ADD COLUMN compact INTEGER NOT NULL DEFAULT 0")


def default_history_path() -> Path:
    """$RAGMETER_HISTORY when set, else ~/.ragmeter/history.sqlite3."""
    env = os.environ.get(ENV_VAR, "").strip()
    return Path(env).expanduser() if env else DEFAULT_HISTORY_PATH


def _dumps(value: Any) -> str:
    """Every row's JSON, with known and secret-shaped values masked (a target's 401 body may echo its key)."""
    # default=str keeps odd metadata values (dates, paths) instead of failing the whole write.
    return json.dumps(redact_value(value), ensure_ascii=False, default=str)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class RunInfo:
    """One run as listed on the History page."""

    run_id: str
    name: Optional[str]
    dataset_name: str
    created_at: str
    status: str
    n_samples: int
    n_done: int
    total_time: Optional[float]
    settings: Dict[str, Any] = field(default_factory=dict)
    overall_mean: Optional[float] = None
    finished_at: Optional[str] = None

    @property
    def label(self) -> str:
        """A human label: the name when set, else dataset and date."""
        return self.name or f"{self.dataset_name} · {self.created_at.replace('T', ' ')[:16]}"


_RUN_COLUMNS = """r.run_id, r.name, r.dataset_name, r.created_at, r.status, r.n_samples, r.total_time,
    r.settings, r.finished_at, COUNT(res.idx), AVG(res.overall)"""


def _run_info(row: Tuple) -> RunInfo:
    return RunInfo(
        run_id=row[0], name=row[1], dataset_name=row[2], created_at=row[3], status=row[4],
        n_samples=row[5], total_time=row[6], settings=json.loads(row[7] or "{}"), finished_at=row[8],
        n_done=row[9], overall_mean=None if row[10] is None else round(row[10], 4),
    )


class RunStore:
    """The run-history database at `path` (default: $RAGMETER_HISTORY or ~/.ragmeter/history.sqlite3)."""

    def __init__(self, path: Optional[os.PathLike | str] = None) -> None:
        self.path = Path(path).expanduser() if path is not None else default_history_path()
        self._local = threading.local()  # one connection per thread: sqlite3 connections are not shared
        self._open_or_explain()

    # -- connection and schema ------------------------------------------------------------
    def _open_or_explain(self) -> None:
        try:
            if not self.path.parent.exists():
                self.path.parent.mkdir(parents=True, mode=0o700)
            with self._connect() as db:
                # A sample row with a few contexts is 2-4 KB: in SQLite's default 4 KB pages most rows
                # take a page of their own. 8 KB pages cut the file by a fifth. Only a new, empty file
                # takes the setting (it must precede WAL mode); older files keep their page size.
                db.execute("PRAGMA page_size=8192")
                db.execute("PRAGMA journal_mode=WAL")
                self._migrate(db)
        except (OSError, sqlite3.Error) as exc:
            raise HistoryError(
                f"Cannot use the run history at {self.path}: {exc}. Choose a writable location with "
                f"the {ENV_VAR} environment variable, e.g. {ENV_VAR}=/tmp/ragmeter-history.sqlite3"
            ) from exc

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (opening one per write costs ~1 ms)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30)
            db.execute("PRAGMA foreign_keys=ON")
            # NORMAL is durable against a killed process in WAL mode; only power loss could drop a commit.
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection; the block is one transaction, committed on success."""
        db = self._db()
        with db:
            yield db

    def close(self) -> None:
        """Close the calling thread's connection (others close when their thread ends)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None

    @staticmethod
    def _migrate(db: sqlite3.Connection) -> None:
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in db.execute("SELECT name FROM _migrations")}
        for step in MIGRATIONS:
            if step.__name__ not in done:
                step(db)
                db.execute("INSERT INTO _migrations VALUES (?, ?)", (step.__name__, _now()))

    def _write(self, sql: str, params: Tuple) -> int:
        try:
            with self._connect() as db:
                return db.execute(sql, params).rowcount
        except sqlite3.Error as exc:
            raise HistoryError(f"Could not write to the run history at {self.path}: {exc}") from exc

    def _unknown(self, run_id: str) -> HistoryError:
        return HistoryError(
            f"No run with id {run_id!r} in {self.path}. Copy the id from the History page, or point "
            f"{ENV_VAR} at the history file that holds the run."
        )

    # -- writing a run --------------------------------------------------------------------
    def create_run(self, *, dataset_name: str, samples: List[EvalSample], settings: Dict[str, Any],
                   name: Optional[str] = None, n_samples: Optional[int] = None) -> str:
        """Start a run: store its sanitised settings and its samples; return the new run id.

        `n_samples` sets the run's size when its samples are not known yet (a distributed run
        reads them on its workers; `record_results` then stores each sample with its result).
        """
        run_id = uuid.uuid4().hex[:12]
        sample_rows = [(run_id, i, _dumps(sample_to_record(s, i))) for i, s in enumerate(samples)]
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT INTO runs (run_id, name, dataset_name, created_at, status, n_samples, settings) "
                    "VALUES (?, ?, ?, ?, 'running', ?, ?)",
                    (run_id, name, dataset_name, _now(), len(samples) if n_samples is None else n_samples,
                     _dumps(sanitize_settings(settings or {}))),
                )
                db.executemany("INSERT INTO samples VALUES (?, ?, ?)", sample_rows)
        except sqlite3.Error as exc:
            raise HistoryError(f"Could not save the run in the run history at {self.path}: {exc}") from exc
        return run_id

    def record_result(self, run_id: str, index: int, result: EvalResult) -> None:
        """Persist one finished sample now. Writing the same (run, index) again replaces it."""
        sample_text = None if result.sample is None else _dumps(sample_to_record(result.sample, index))
        try:
            with self._connect() as db:
                stored = db.execute("SELECT record FROM samples WHERE run_id = ? AND idx = ?",
                                    (run_id, index)).fetchone()
                # The run's own sample is joined back when read; any other sample (or none) is embedded.
                own = stored is not None and stored[0] == sample_text
                record = _dumps(result_to_compact_record(result, with_sample=not own))
                db.execute(
                    "INSERT OR REPLACE INTO results (run_id, idx, sample_id, overall, record, compact) "
                    "VALUES (?, ?, ?, ?, ?, 1)", (run_id, index, result.sample_id, result.overall(), record),
                )
        except sqlite3.IntegrityError as exc:  # the run does not exist
            raise self._unknown(run_id) from exc
        except sqlite3.Error as exc:
            raise HistoryError(f"Could not write to the run history at {self.path}: {exc}") from exc

    def record_results(self, run_id: str, pairs: Sequence[Tuple[int, EvalResult]]) -> None:
        """Persist many finished samples, and the samples themselves, in one transaction.

        For runs created with `n_samples` only (the Ray engine): one write per batch of rows keeps
        a million-row run from spending its time in SQLite commits.
        """
        # Each sample is stored once, in `samples`; its result's compact record is joined to it when read.
        samples = [(run_id, i, _dumps(sample_to_record(r.sample, i))) for i, r in pairs if r.sample is not None]
        results = [(run_id, i, r.sample_id, r.overall(),
                    _dumps(result_to_compact_record(r, with_sample=r.sample is None))) for i, r in pairs]
        try:
            with self._connect() as db:
                db.executemany("INSERT OR REPLACE INTO samples VALUES (?, ?, ?)", samples)
                db.executemany("INSERT OR REPLACE INTO results (run_id, idx, sample_id, overall, record, compact) "
                               "VALUES (?, ?, ?, ?, ?, 1)", results)
        except sqlite3.IntegrityError as exc:  # the run does not exist
            raise self._unknown(run_id) from exc
        except sqlite3.Error as exc:
            raise HistoryError(f"Could not write to the run history at {self.path}: {exc}") from exc

    def record_answer(self, run_id: str, index: int, sample: EvalSample) -> None:
        """Save a target's answer for one row as it arrives, so a resumed run never calls the target for it again."""
        if not self._write("UPDATE samples SET record = ? WHERE run_id = ? AND idx = ?",
                           (_dumps(sample_to_record(sample, index)), run_id, index)):
            raise self._unknown(run_id)

    def answered_samples(self, run_id: str) -> List[EvalSample]:
        """The run's rows with the answers they were scored on (a target's included), to score them again.

        Rows that never got an answer (a run stopped before the target answered them) are left out.
        """
        results = dict(self.indexed_results(run_id))
        rows = self._query("SELECT idx, record FROM samples WHERE run_id = ? ORDER BY idx", (run_id,))
        samples = [(idx, results[idx].sample if idx in results else _sample_from_json(text)) for idx, text in rows]
        asked = bool(self.get_run(run_id).settings.get("target"))
        return [s for idx, s in samples if s is not None and (idx in results or not asked or _answered(s))]

    def finish_run(self, run_id: str, *, status: str = "finished", total_time: Optional[float] = None,
                   usage: Optional[Dict[str, Any]] = None) -> None:
        """Mark the run running/stopped/finished/failed and store its total time and judge usage."""
        if status not in RUN_STATUSES:
            raise ValueError(f"status must be one of {', '.join(RUN_STATUSES)}, not {status!r}")
        changed = self._write(
            "UPDATE runs SET status = ?, total_time = COALESCE(?, total_time), usage = COALESCE(?, usage), "
            "finished_at = ? WHERE run_id = ?",
            (status, total_time, None if usage is None else _dumps(sanitize_settings(usage)), _now(), run_id),
        )
        if not changed:
            raise self._unknown(run_id)

    def update_settings(self, run_id: str, changes: Dict[str, Any]) -> Dict[str, Any]:
        """Merge `changes` (sanitised) into the run's stored settings; returns the new settings.

        How a run keeps what it learns while running, e.g. the ids of the batches it submitted.
        """
        settings = dict(self.get_run(run_id).settings, **sanitize_settings(changes))
        self._write("UPDATE runs SET settings = ? WHERE run_id = ?", (_dumps(settings), run_id))
        return settings

    def rename_run(self, run_id: str, name: str) -> None:
        """Give the run a name (an empty name clears it)."""
        if not self._write("UPDATE runs SET name = ? WHERE run_id = ?", ((name or "").strip() or None, run_id)):
            raise self._unknown(run_id)

    def delete_run(self, run_id: str) -> None:
        """Delete the run with its samples and results."""
        if not self._write("DELETE FROM runs WHERE run_id = ?", (run_id,)):
            raise self._unknown(run_id)

    # -- reading --------------------------------------------------------------------------
    def _query(self, sql: str, params: Tuple = ()) -> List[Tuple]:
        try:
            with self._connect() as db:
                return db.execute(sql, params).fetchall()
        except sqlite3.Error as exc:
            raise HistoryError(f"Could not read the run history at {self.path}: {exc}") from exc

    def list_runs(self) -> List[RunInfo]:
        """Every run, newest first."""
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs r LEFT JOIN results res ON res.run_id = r.run_id "
            "GROUP BY r.run_id ORDER BY r.created_at DESC, r.rowid DESC"
        )
        return [_run_info(row) for row in rows]

    def get_run(self, run_id: str) -> RunInfo:
        """One run; HistoryError when the id is unknown."""
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs r LEFT JOIN results res ON res.run_id = r.run_id "
            "WHERE r.run_id = ? GROUP BY r.run_id", (run_id,)
        )
        if not rows:
            raise self._unknown(run_id)
        return _run_info(rows[0])

    def completed_indices(self, run_id: str) -> Set[int]:
        """Indices of the samples whose results are stored."""
        self.get_run(run_id)
        return {row[0] for row in self._query("SELECT idx FROM results WHERE run_id = ?", (run_id,))}

    def pending_samples(self, run_id: str) -> List[Tuple[int, EvalSample]]:
        """(index, sample) of every sample a resumed run still has to score, in index order."""
        self.get_run(run_id)
        rows = self._query(
            "SELECT s.idx, s.record FROM samples s LEFT JOIN results r ON r.run_id = s.run_id AND r.idx = s.idx "
            "WHERE s.run_id = ? AND r.idx IS NULL ORDER BY s.idx", (run_id,)
        )
        return [(idx, _sample_from_json(text)) for idx, text in rows]

    def samples(self, run_id: str) -> List[EvalSample]:
        """Every sample of the run, in index order (to re-run it without the original file)."""
        self.get_run(run_id)
        rows = self._query("SELECT record FROM samples WHERE run_id = ? ORDER BY idx", (run_id,))
        return [_sample_from_json(text) for (text,) in rows]

    def indexed_results(self, run_id: str) -> List[Tuple[int, EvalResult]]:
        """(index, result) of every stored result, in index order."""
        self.get_run(run_id)
        rows = self._query(
            "SELECT r.idx, r.compact, r.record, s.record FROM results r "
            "LEFT JOIN samples s ON s.run_id = r.run_id AND s.idx = r.idx WHERE r.run_id = ? ORDER BY r.idx",
            (run_id,),
        )
        return [(idx, _result_from_row(compact, text, sample_text)) for idx, compact, text, sample_text in rows]

    def load_report(self, run_id: str) -> EvalReport:
        """The run's report: stored results in index order, total time and judge usage."""
        info = self.get_run(run_id)
        usage_rows = self._query("SELECT usage FROM runs WHERE run_id = ?", (run_id,))
        usage = json.loads(usage_rows[0][0]) if usage_rows and usage_rows[0][0] else {}
        results = [result for _, result in self.indexed_results(run_id)]
        return EvalReport(results=results, total_time=info.total_time or 0.0, usage=usage)


def _answered(sample: EvalSample) -> bool:
    return sample.target_latency_ms is not None or sample.target_error is not None


def _result_from_row(compact: int, text: str, sample_text: Optional[str]) -> EvalResult:
    """A stored result: a compact row joined to its run's sample, or an older full record as it is."""
    if not compact:
        return result_from_record(json.loads(text))
    sample = sample_from_record(json.loads(sample_text)) if sample_text else None
    return result_from_compact_record(json.loads(text), sample)


def _sample_from_json(text: str) -> EvalSample:
    sample = sample_from_record(json.loads(text))
    return sample if sample is not None else EvalSample("", "", [])
