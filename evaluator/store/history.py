"""Run history in SQLite or PostgreSQL: every run's settings, samples and results, saved as they finish.

The location is a SQLite file path (the embedded default) or a `postgresql://` URL, for a history
that CI jobs and dashboard replicas share; the same SQL, schema and migrations serve both
(history_db.py holds what differs). One short transaction per write (SQLite in WAL mode), so a
killed process loses at most the samples that were in flight; `pending_samples` tells a resumed
run what is left. Each thread gets its own connection, so one RunStore can serve the dashboard's
threads while CLI processes write too. Every run records its owner (who started it) and project.

Each sample is stored once, in `samples`; a result row keeps only its scores and metric details
(the compact record) and is joined back to its sample when read. Rows written before that
(m003) hold the whole record, sample included, and still load as they are. A conversation's row
has the same two records, its turns in them (io/records.py).

The schema evolves through MIGRATIONS, applied in order and recorded in the `_migrations` table,
under a lock (SQLite's write lock, a PostgreSQL advisory lock) so processes opening a new
database at the same moment apply each step once.
Settings are sanitised before they are stored: no key, secret, token, password or authorization
ever reaches the file.
"""
from __future__ import annotations

import getpass
import json
import os
import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import AbstractSet, Any, Callable, Dict, Iterator, List, Optional, Sequence, Set, Tuple

from ..errors import HistoryError
from .naming import clean_name, default_name, scorer_label
from .db import Database, Session, is_postgres_url, location_of, open_database, shown_url
from ..io.records import (
    result_from_compact_record,
    result_from_record,
    result_to_compact_record,
    sample_from_record,
    sample_to_record,
)
from ..io.redact import redacted_json, sanitize_settings
from ..model import EvalReport, EvalResult, EvalSample, Verdict
from ..safetext import name_of
from ..environment import read

ENV_VAR = "RAGMETER_HISTORY"
DEFAULT_HISTORY_PATH = Path.home() / ".ragmeter" / "history.sqlite3"
PAGE = 1_000  # rows a bulk write encodes, or a streamed read decodes, at a time

# "queued": waiting for a worker (store/jobs.py); "interrupted": its worker died or shut down mid-run,
# every finished row kept (a worker may take it up again: only rows with no stored result are scored).
RUN_STATUSES = ("queued", "running", "stopped", "finished", "failed", "interrupted")
ENDED_STATUSES = ("stopped", "finished", "failed", "interrupted")

# A step takes the open transaction (a history_db.Session, or a bare sqlite3 connection in tests of
# old files) and runs its DDL through `execute`.
MIGRATIONS: List[Callable[[Any], None]] = []
migration = MIGRATIONS.append
USER_ENV_VAR = "RAGMETER_USER"


def _real(db: Any) -> str:
    return getattr(db, "real", "REAL")


def _dialect(db: Any) -> str:
    return getattr(db, "dialect", "sqlite")


@migration
def m001_initial(db: Any) -> None:
    db.execute(
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            name TEXT,
            dataset_name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL,
            n_samples INTEGER NOT NULL,
            settings TEXT NOT NULL,
            total_time """ + _real(db) + """,
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
            overall """ + _real(db) + """ NOT NULL,
            record TEXT NOT NULL,
            PRIMARY KEY (run_id, idx)
        )"""
    )


@migration
def m002_finished_at(db: Any) -> None:
    db.execute("ALTER TABLE runs ADD COLUMN finished_at TEXT")


@migration
def m003_compact_results(db: Any) -> None:
    # A 31,734-row run took ~199 MB when every result repeated its sample's contexts. Rows written
    # from now on are compact (1); older rows, and rows an older ragmeter still writes, stay full (0).
    db.execute("ALTER TABLE results ADD COLUMN compact INTEGER NOT NULL DEFAULT 0")


@migration
def m004_owner_project(db: Any) -> None:
    # Team mode: who started each run, and the project it belongs to (older runs have neither).
    db.execute("ALTER TABLE runs ADD COLUMN owner TEXT")
    db.execute("ALTER TABLE runs ADD COLUMN project TEXT")
    db.execute("CREATE INDEX runs_owner ON runs (owner)")
    db.execute("CREATE INDEX runs_project ON runs (project)")
    if _dialect(db) == "postgresql":  # SQLite lists same-second runs by rowid; PostgreSQL has none
        db.execute("ALTER TABLE runs ADD COLUMN seq BIGSERIAL")


@migration
def m005_unscored_rows(db: Any) -> None:
    # A row with no score at all (its target failed, nothing could be judged) has no overall: NULL,
    # so AVG leaves it out instead of counting a 0. Rows already stored whose target failed become NULL too.
    if _dialect(db) == "postgresql":
        db.execute("ALTER TABLE results ALTER COLUMN overall DROP NOT NULL")
        db.execute("UPDATE results SET overall = NULL WHERE EXISTS (SELECT 1 FROM samples s WHERE s.run_id = "
                   "results.run_id AND s.idx = results.idx AND (s.record::jsonb ->> 'target_error') IS NOT NULL)")
    else:  # SQLite cannot drop a NOT NULL constraint: the column is rebuilt
        db.execute("ALTER TABLE results RENAME COLUMN overall TO overall_v1")
        db.execute("ALTER TABLE results ADD COLUMN overall REAL")
        db.execute("UPDATE results SET overall = CASE WHEN EXISTS (SELECT 1 FROM samples s WHERE s.run_id = "
                   "results.run_id AND s.idx = results.idx AND json_extract(s.record, '$.target_error') IS NOT NULL) "
                   "THEN NULL ELSE overall_v1 END")
        db.execute("ALTER TABLE results DROP COLUMN overall_v1")
    db.execute("ALTER TABLE runs ADD COLUMN verdict TEXT")  # model.Verdict (decided by scoring/verdict.py), as JSON


@migration
def m006_reviews(db: Any) -> None:
    # People's reviews of a run's scores (evaluator/reviews.py): one row per reviewer, sample and
    # metric, so a second look replaces the first and several reviewers can review one sample.
    db.execute(
        """CREATE TABLE reviews (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            metric TEXT NOT NULL,
            reviewer TEXT NOT NULL,
            verdict TEXT NOT NULL,
            corrected """ + _real(db) + """,
            scale TEXT NOT NULL,
            note TEXT NOT NULL,
            judge_score """ + _real(db) + """,
            judge TEXT NOT NULL,
            sample_id TEXT,
            queue TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (run_id, idx, metric, reviewer)
        )"""
    )
    # Few-shot example sets built from reviews (evaluator/alignment.py), named and versioned.
    db.execute(
        """CREATE TABLE example_sets (
            name TEXT NOT NULL,
            version INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            body TEXT NOT NULL,
            PRIMARY KEY (name, version)
        )"""
    )


@migration
def m007_one_row_type(db: Any) -> None:
    # Conversation runs were marked `"kind": "conversations"` so that they resumed on a run path of their
    # own; every run now resumes through one Run, its rows saying what they are (a sample record with a
    # `conversation` key), so the mark, shown among a run's settings, goes. Rows keep their records.
    rows = db.execute("SELECT run_id, settings FROM runs WHERE settings LIKE ?", ('%"kind"%',)).fetchall()
    for run_id, text in rows:
        settings = json.loads(text or "{}")
        if settings.pop("kind", None) == "conversations":
            db.execute("UPDATE runs SET settings = ? WHERE run_id = ?", (_dumps(settings), run_id))


@migration
def m008_jobs(db: Any) -> None:
    # Runs as jobs (store/jobs.py): one row per run a worker executes. Times are the database's own
    # clock in seconds since the epoch, so workers on machines whose clocks disagree agree on leases.
    db.execute(
        """CREATE TABLE jobs (
            run_id TEXT PRIMARY KEY REFERENCES runs(run_id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL,
            state TEXT NOT NULL,
            pinned TEXT,
            worker TEXT,
            lease_until """ + _real(db) + """,
            heartbeat_at """ + _real(db) + """,
            stop_requested INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            queued_at """ + _real(db) + """ NOT NULL,
            started_at """ + _real(db) + """,
            progress TEXT,
            lost_rows INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX jobs_state ON jobs (state, queued_at)")


@migration
def m009_scores(db: Any) -> None:
    # Issue 28: pages read a run through aggregates and 50-row pages, never by decoding every row.
    # One narrow row per (sample, metric) so means, histograms, sorting and "metric <= x" are SQL;
    # `pos` keeps the order the metrics were chosen in; the judge's and the heuristic's parts and the judge's
    # spread are what the Review queues and the reviewers' agreement read (review/queue.py). The run's summary (analysis/summary.py: CIs,
    # verdict, agreement, noise...) is stored once, as JSON, when the run ends.
    db.execute(
        """CREATE TABLE scores (
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx INTEGER NOT NULL,
            metric TEXT NOT NULL,
            pos INTEGER NOT NULL,
            score """ + _real(db) + """,
            method TEXT NOT NULL,
            skipped INTEGER NOT NULL,
            llm_score """ + _real(db) + """,
            heuristic_score """ + _real(db) + """,
            llm_std """ + _real(db) + """,
            PRIMARY KEY (run_id, idx, metric)
        )"""
    )
    db.execute("CREATE INDEX scores_metric ON scores (run_id, metric, score)")
    db.execute("ALTER TABLE runs ADD COLUMN summary TEXT")
    _backfill_scores(db)


def _backfill_scores(db: Any) -> None:
    """Score rows for the results stored before m009 (decoded once, here, in batches)."""
    cursor = db.execute("SELECT run_id, idx, compact, record FROM results")
    while True:
        batch = cursor.fetchmany(2_000)
        if not batch:
            return
        rows = [row for run_id, idx, compact, text in batch
                for row in _score_rows(run_id, idx, _stored_scores(compact, text))]
        if rows:
            db.executemany(_UPSERT_SCORE, rows)


def _stored_scores(compact: int, text: str) -> Dict[str, Any]:
    """Metric name -> MetricScore of a stored result record (compact or full), without its sample."""
    record = json.loads(text)
    result = result_from_compact_record(record, None) if compact else result_from_record(record)
    return result.metric_scores()


def _replace_scores(db: Any, run_id: str, pairs: Sequence[Tuple[int, EvalResult]]) -> None:
    """A result written again (resumed, re-scored with other metrics) keeps no score row of its old metrics."""
    db.executemany("DELETE FROM scores WHERE run_id = ? AND idx = ?", [(run_id, i) for i, _ in pairs])
    db.executemany(_UPSERT_SCORE, [row for i, r in pairs for row in _score_rows(run_id, i, r.metric_scores())])


def _score_rows(run_id: str, idx: int, scores: Dict[str, Any]) -> List[Tuple]:
    return [(run_id, idx, name, pos, None if ms.skipped else float(ms.score), ms.method or "", int(ms.skipped),
             ms.llm_score, ms.heuristic_score, ms.llm_std) for pos, (name, ms) in enumerate(scores.items())]


@migration
def m010_alerts(db: Any) -> None:
    # Alert rules on live runs (evaluator/collect/alerts.py): each rule's state per project, so a restarted
    # collector neither refires a breach nor forgets a recovery, and every breach and recovery with its webhook
    # delivery, for the Monitor page.
    db.execute(
        """CREATE TABLE alert_state (
            project TEXT NOT NULL,
            rule TEXT NOT NULL,
            state TEXT NOT NULL,
            value """ + _real(db) + """,
            cursor TEXT,
            changed_at TEXT,
            PRIMARY KEY (project, rule)
        )"""
    )
    db.execute(
        """CREATE TABLE alert_events (
            event_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            rule TEXT NOT NULL,
            metric TEXT NOT NULL,
            state TEXT NOT NULL,
            value """ + _real(db) + """ NOT NULL,
            threshold """ + _real(db) + """ NOT NULL,
            at TEXT NOT NULL,
            run_id TEXT,
            idx INTEGER,
            created_at TEXT NOT NULL,
            delivery TEXT,
            attempts INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("CREATE INDEX alert_events_project ON alert_events (project, at)")


@migration
def m011_generations(db: Any) -> None:
    # Test-set generations as jobs (store/generations.py): the documents' chunks, the settings (no key) and the
    # items kept so far. A generation is no evaluation run: it has a table of its own, so History never lists
    # it, and `jobs` stops referencing runs(run_id) (a job's id is a run's or a generation's; deleting either
    # deletes its job, see RunStore.delete_run and Generations.delete).
    db.execute(
        """CREATE TABLE generations (
            gen_id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            owner TEXT NOT NULL,
            created_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL,
            target INTEGER NOT NULL,
            n_items INTEGER NOT NULL DEFAULT 0,
            settings TEXT NOT NULL,
            chunks TEXT NOT NULL,
            items TEXT NOT NULL,
            outcome TEXT
        )"""
    )
    db.execute("CREATE INDEX generations_owner ON generations (owner, created_at)")
    if _dialect(db) == "postgresql":
        db.execute("ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_run_id_fkey")
        return
    # SQLite cannot drop a constraint: the table is rebuilt, its rows kept.
    db.execute("ALTER TABLE jobs RENAME TO jobs_v1")
    db.execute(
        """CREATE TABLE jobs (
            run_id TEXT PRIMARY KEY,
            kind TEXT NOT NULL,
            owner TEXT NOT NULL,
            state TEXT NOT NULL,
            pinned TEXT,
            worker TEXT,
            lease_until REAL,
            heartbeat_at REAL,
            stop_requested INTEGER NOT NULL DEFAULT 0,
            attempts INTEGER NOT NULL DEFAULT 0,
            queued_at REAL NOT NULL,
            started_at REAL,
            progress TEXT,
            lost_rows INTEGER NOT NULL DEFAULT 0
        )"""
    )
    db.execute("INSERT INTO jobs SELECT run_id, kind, owner, state, pinned, worker, lease_until, heartbeat_at, "
               "stop_requested, attempts, queued_at, started_at, progress, lost_rows FROM jobs_v1")
    db.execute("DROP TABLE jobs_v1")
    db.execute("CREATE INDEX jobs_state ON jobs (state, queued_at)")


@migration
def m012_notes(db: Any) -> None:
    # People's notes on a run or on one of its samples (store/notes.py): who wrote them and when, the text as
    # typed (shown as text, never Markdown). `idx` is NULL for a note on the whole run.
    db.execute(
        """CREATE TABLE notes (
            note_id TEXT PRIMARY KEY,
            run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
            idx INTEGER,
            sample_id TEXT,
            author TEXT NOT NULL,
            created_at TEXT NOT NULL,
            body TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX notes_run ON notes (run_id, created_at)")


@migration
def m013_judge_exams(db: Any) -> None:
    # `ragmeter judge check` results (store/exams.py): one row per exam a judge sat, with the judge's settings
    # (no key), so every run scored by the same judge (its `judge_key`: model @ base URL) shows how it did.
    db.execute(
        """CREATE TABLE judge_exams (
            exam_id TEXT PRIMARY KEY,
            judge_key TEXT NOT NULL,
            created_at TEXT NOT NULL,
            owner TEXT NOT NULL,
            exam TEXT NOT NULL,
            verdict TEXT NOT NULL,
            settings TEXT NOT NULL,
            result TEXT NOT NULL
        )"""
    )
    db.execute("CREATE INDEX judge_exams_key ON judge_exams (judge_key, created_at)")


# The library's defaults, for callers that pass no history or owner (a script's RunStore()). Programs (the CLI,
# `ragmeter worker`, `ragmeter collect`, the dashboard) open the history team/settings.py resolves: --history,
# then these, with the team file's [server] history between them. The store sits below the team file, so
# the environment and default steps are spelled here too (tests/test_settings.py holds them equal).
def default_history_path() -> Path:
    """$RAGMETER_HISTORY when it is a path, else ~/.ragmeter/history.sqlite3."""
    env = read(ENV_VAR)
    return Path(env).expanduser() if env and not is_postgres_url(env) else DEFAULT_HISTORY_PATH


def default_history_location() -> Path | str:
    """$RAGMETER_HISTORY (a SQLite path or a postgresql:// URL) when set, else ~/.ragmeter/history.sqlite3."""
    env = read(ENV_VAR)
    return env if is_postgres_url(env) else default_history_path()


def default_owner() -> str:
    """Who a run started here belongs to: $RAGMETER_USER, else the login name."""
    try:
        return read(USER_ENV_VAR) or getpass.getuser()
    except (KeyError, OSError):  # no such user in the password database (some containers)
        return "unknown"


def _dumps(value: Any) -> str:
    """Every row's JSON, with known and secret-shaped values masked (a target's 401 body may echo its key)."""
    # default=str keeps odd metadata values (dates, paths) instead of failing the whole write.
    return redacted_json(value)


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
    owner: Optional[str] = None
    project: Optional[str] = None
    verdict: Optional[Verdict] = None  # how the run ended; None while running or for runs from before m004

    @property
    def label(self) -> str:
        """The run's name as every list, picker, legend and export shows it: the name given (--name, the
        Evaluate page, Rename), else "dataset · scorer · YYYY-MM-DD HH:MM" (naming.default_name)."""
        return self.name or default_name(self.dataset_name, self.settings, self.created_at)

    @property
    def scorer(self) -> str:
        """Who scored it: "MODEL at HOST", or "offline heuristics (default | jaccard | embedding)"."""
        return scorer_label(self.settings)


_RUN_COLUMNS = """r.run_id, r.name, r.dataset_name, r.created_at, r.status, r.n_samples, r.total_time,
    r.settings, r.finished_at, COUNT(res.idx), AVG(res.overall), r.owner, r.project, r.verdict"""


def _run_info(row: Tuple) -> RunInfo:
    return RunInfo(
        run_id=row[0], name=row[1], dataset_name=row[2], created_at=row[3], status=row[4],
        n_samples=row[5], total_time=row[6], settings=json.loads(row[7] or "{}"), finished_at=row[8],
        n_done=row[9], overall_mean=None if row[10] is None else round(row[10], 4), owner=row[11], project=row[12],
        verdict=Verdict.from_dict(json.loads(row[13])) if row[13] else None,
    )


class RunStore:
    """The run history at `path`: a SQLite file or a postgresql:// URL (default: $RAGMETER_HISTORY,
    else ~/.ragmeter/history.sqlite3)."""

    def __init__(self, path: Optional[os.PathLike | str] = None, *, label: Optional[str] = None) -> None:
        """`label` names the history in every message instead of its path or URL (a team server's
        users must not learn its database's user, host and port)."""
        chosen = location_of(path) if path is not None else default_history_location()
        self.path: Path | str = chosen  # a Path for SQLite, the URL for PostgreSQL
        self._label = label
        self._database: Database = self._open_or_explain(chosen)

    # -- connection and schema ------------------------------------------------------------
    @property
    def location(self) -> str:
        """Where the history is, as messages show it (a URL without its password)."""
        return self._database.location

    @property
    def shown(self) -> str:
        """How pages and messages name the history: the label when given, else the location."""
        return self._label or self.location

    @property
    def dialect(self) -> str:
        return self._database.dialect

    def _open_or_explain(self, location: os.PathLike | str) -> Database:
        try:
            database = open_database(location)
            with database.migration() as db:
                self._migrate(db)
            return database
        except HistoryError:
            raise
        except Exception as exc:
            if not isinstance(exc, OSError) and not _is_database_error(exc):
                raise
            shown = self._label or (shown_url(str(location)) if is_postgres_url(location) else location)
            raise HistoryError(
                f"Cannot use the run history at {shown}: {exc}. Choose a writable location with "
                f"the {ENV_VAR} environment variable, e.g. {ENV_VAR}=/tmp/ragmeter-history.sqlite3"
            ) from exc

    @contextmanager
    def _connect(self, write: bool = True) -> Iterator[Session]:
        """This thread's connection; the block is one transaction, committed on success."""
        with self._database.transaction(write) as db:
            yield db

    def close(self) -> None:
        """Close the calling thread's connection (others close when their thread ends)."""
        self._database.close()

    @staticmethod
    def _migrate(db: Session) -> None:
        """Apply the missing steps; the caller holds the migration lock (history_db.Database.migration)."""
        db.execute("CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in db.fetchall("SELECT name FROM _migrations")}
        for step in MIGRATIONS:
            if step.__name__ not in done:
                step(db)
                db.execute("INSERT INTO _migrations VALUES (?, ?)", (step.__name__, _now()))

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Session]:
        """One transaction on this thread's connection, for modules with tables of their own (store/jobs.py)
        that need several statements to be atomic; HistoryError when the database fails."""
        try:
            with self._connect(write) as db:
                yield db
        except self._database.errors as exc:
            raise HistoryError(f"Could not use the run history at {self.shown}: {exc}") from exc

    def _write(self, sql: str, params: Tuple) -> int:
        try:
            with self._connect() as db:
                return db.rowcount(sql, params)
        except self._database.errors as exc:
            raise HistoryError(f"Could not write to the run history at {self.shown}: {exc}") from exc

    def _unknown(self, run_id: str) -> HistoryError:
        return HistoryError(
            f"No run with id {run_id!r} in {self.shown}. Copy the id from the History page, or point "
            f"{ENV_VAR} at the history that holds the run."
        )

    # -- writing a run --------------------------------------------------------------------
    def create_run(self, *, dataset_name: str, samples: List[EvalSample], settings: Dict[str, Any],
                   name: Optional[str] = None, n_samples: Optional[int] = None,
                   owner: Optional[str] = None, project: Optional[str] = None,
                   status: str = "running") -> str:
        """Start a run: store its sanitised settings and its samples; return the new run id.

        `n_samples` sets the run's size when its samples are not known yet (a distributed run
        reads them on its workers; `record_results` then stores each sample with its result).
        `owner` defaults to `default_owner()`, `project` to the dataset name; `status` is "queued" for a
        run that waits for a worker (runs/jobs.py).
        """
        if status not in RUN_STATUSES:
            raise ValueError(f"status must be one of {', '.join(RUN_STATUSES)}, not {status!r}")
        run_id = uuid.uuid4().hex[:12]
        # Names are stored clean (safetext.name_of): a file name can hold any character but / and NUL.
        dataset_name, name = name_of(dataset_name), (name_of(name) or None) if name else name
        project = name_of(project) if project else project
        try:
            with self._connect() as db:
                db.execute(
                    "INSERT INTO runs (run_id, name, dataset_name, created_at, status, n_samples, settings, "
                    "owner, project) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (run_id, clean_name(name), dataset_name, _now(), status, len(samples) if n_samples is None else n_samples,
                     _dumps(sanitize_settings(settings or {})), (owner or "").strip() or default_owner(),
                     (project or "").strip() or dataset_name),
                )
                for start in range(0, len(samples), PAGE):  # encoded a page at a time: one copy of the file at most
                    db.executemany("INSERT INTO samples VALUES (?, ?, ?)",
                                   [(run_id, i, _dumps(sample_to_record(samples[i], i)))
                                    for i in range(start, min(start + PAGE, len(samples)))])
        except self._database.errors as exc:
            raise HistoryError(f"Could not save the run in the run history at {self.shown}: {exc}") from exc
        return run_id

    def record_result(self, run_id: str, index: int, result: EvalResult) -> None:
        """Persist one finished sample now. Writing the same (run, index) again replaces it."""
        sample_text = None if result.sample is None else _dumps(sample_to_record(result.sample, index))
        try:
            with self._connect() as db:
                stored = db.fetchall("SELECT record FROM samples WHERE run_id = ? AND idx = ?", (run_id, index))
                # The run's own sample is joined back when read; any other sample (or none) is embedded.
                own = bool(stored) and stored[0][0] == sample_text
                record = _dumps(result_to_compact_record(result, with_sample=not own))
                db.execute(_UPSERT_RESULT, (run_id, index, result.sample_id, result.overall_score(), record))
                _replace_scores(db, run_id, [(index, result)])
        except self._database.integrity_errors as exc:  # the run does not exist
            raise self._unknown(run_id) from exc
        except self._database.errors as exc:
            raise HistoryError(f"Could not write to the run history at {self.shown}: {exc}") from exc

    def record_results(self, run_id: str, pairs: Sequence[Tuple[int, EvalResult]],
                       stored: AbstractSet[int] = frozenset(), usage: Optional[Dict[str, Any]] = None) -> None:
        """Persist many finished samples, and the samples themselves, in one transaction.

        One write per batch of rows keeps a long run from spending its time in commits (the Ray
        engine's frames, Run's batches). `stored` holds the indices whose result's sample is already
        the one stored with the run: only their results are written (encoding the sample again
        cost as much as the result). `usage`, the run's judge usage so far, is stored in the same
        transaction: a process killed after a batch never keeps its rows without the calls they cost.
        """
        # Each sample is stored once, in `samples`; its result's compact record is joined to it when read.
        samples = [(run_id, i, _dumps(sample_to_record(r.sample, i))) for i, r in pairs
                   if r.sample is not None and i not in stored]
        results = [(run_id, i, r.sample_id, r.overall_score(),
                    _dumps(result_to_compact_record(r, with_sample=r.sample is None))) for i, r in pairs]
        try:
            with self._connect() as db:
                db.executemany(_UPSERT_SAMPLE, samples)
                db.executemany(_UPSERT_RESULT, results)
                _replace_scores(db, run_id, pairs)
                if usage is not None:
                    db.execute("UPDATE runs SET usage = ? WHERE run_id = ?", (_dumps(sanitize_settings(usage)), run_id))
        except self._database.integrity_errors as exc:  # the run does not exist
            raise self._unknown(run_id) from exc
        except self._database.errors as exc:
            raise HistoryError(f"Could not write to the run history at {self.shown}: {exc}") from exc

    def append_samples(self, run_id: str, samples: Sequence[EvalSample]) -> List[int]:
        """Add `samples` to the end of an existing run (its n_samples grows); their new indices.

        How a live run (evaluator/collect/live.py) grows as traces arrive: a resumed run then scores
        them as pending rows. The run's row is updated first, in the same transaction, so two writers
        appending at once (threads, processes, PostgreSQL sessions) each get their own indices.
        """
        if not samples:
            return []
        try:
            with self._connect() as db:
                rows = db.fetchall("UPDATE runs SET n_samples = n_samples + ? WHERE run_id = ? RETURNING n_samples",
                                   (len(samples), run_id))
                if not rows:
                    raise self._unknown(run_id)
                first = int(rows[0][0]) - len(samples)
                indices = list(range(first, first + len(samples)))
                db.executemany("INSERT INTO samples VALUES (?, ?, ?)",
                               [(run_id, i, _dumps(sample_to_record(s, i))) for i, s in zip(indices, samples)])
        except self._database.errors as exc:
            raise HistoryError(f"Could not add samples to the run history at {self.shown}: {exc}") from exc
        return indices

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
        return [s for idx, s in samples if s is not None and (idx in results or not asked or s.answered)]

    def finish_run(self, run_id: str, *, status: str = "finished", total_time: Optional[float] = None,
                   usage: Optional[Dict[str, Any]] = None, verdict: Optional[Verdict] = None) -> None:
        """Mark the run (one of RUN_STATUSES) and store its total time, judge usage and verdict."""
        if status not in RUN_STATUSES:
            raise ValueError(f"status must be one of {', '.join(RUN_STATUSES)}, not {status!r}")
        changed = self._write(
            "UPDATE runs SET status = ?, total_time = COALESCE(?, total_time), usage = COALESCE(?, usage), "
            "finished_at = ?, verdict = COALESCE(?, verdict) WHERE run_id = ?",
            (status, total_time, None if usage is None else _dumps(sanitize_settings(usage)), _now(),
             None if verdict is None else _dumps(verdict.to_dict()), run_id),
        )
        if not changed:
            raise self._unknown(run_id)

    def save_summary(self, run_id: str, summary: Optional[Dict[str, Any]]) -> None:
        """Store the run's summary (analysis/summary.py), or clear it (None) so the next reader rebuilds it."""
        text = None if summary is None else _dumps(summary)
        if not self._write("UPDATE runs SET summary = ? WHERE run_id = ?", (text, run_id)):
            raise self._unknown(run_id)

    def get_summary(self, run_id: str) -> Optional[Dict[str, Any]]:
        """The run's stored summary; None when it has none yet (an older or interrupted run)."""
        rows = self._query("SELECT summary FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise self._unknown(run_id)
        return json.loads(rows[0][0]) if rows[0][0] else None

    def update_settings(self, run_id: str, changes: Dict[str, Any]) -> Dict[str, Any]:
        """Merge `changes` (sanitised) into the run's stored settings; returns the new settings.

        How a run keeps what it learns while running, e.g. the ids of the batches it submitted.
        """
        settings = dict(self.get_run(run_id).settings, **sanitize_settings(changes))
        self._write("UPDATE runs SET settings = ? WHERE run_id = ?", (_dumps(settings), run_id))
        return settings

    def rename_run(self, run_id: str, name: str) -> None:
        """Give the run a name (an empty name clears it; naming.clean_name says what a name may be)."""
        if not self._write("UPDATE runs SET name = ? WHERE run_id = ?", (clean_name(name), run_id)):
            raise self._unknown(run_id)

    def delete_run(self, run_id: str) -> None:
        """Delete the run with its samples, results and job."""
        try:
            with self._connect() as db:
                db.execute("DELETE FROM jobs WHERE run_id = ?", (run_id,))  # no cascade since m011
                if not db.rowcount("DELETE FROM runs WHERE run_id = ?", (run_id,)):
                    raise self._unknown(run_id)
        except self._database.errors as exc:
            raise HistoryError(f"Could not write to the run history at {self.shown}: {exc}") from exc

    # -- reading --------------------------------------------------------------------------
    # Modules that keep their own tables in the history database (reviews, example sets) read and
    # write through these two, so every backend's connection, locking and errors stay in one place.
    def query(self, sql: str, params: Tuple = ()) -> List[Tuple]:
        """Rows of a read (portable SQL with `?` placeholders); HistoryError when the database fails."""
        return self._query(sql, params)

    def write(self, sql: str, params: Tuple = ()) -> int:
        """Run one write in its own transaction; the number of rows it changed."""
        return self._write(sql, params)

    def _query(self, sql: str, params: Tuple = ()) -> List[Tuple]:
        try:
            with self._connect(write=False) as db:
                return db.fetchall(sql, params)
        except self._database.errors as exc:
            raise HistoryError(f"Could not read the run history at {self.shown}: {exc}") from exc

    def list_runs(self, *, owner: Optional[str] = None, project: Optional[str] = None) -> List[RunInfo]:
        """Every run, newest first; only `owner`'s and only `project`'s when given."""
        where, params = [], []
        for column, value in (("owner", owner), ("project", project)):
            if value is not None:
                where.append(f"r.{column} = ?")
                params.append(value)
        rows = self._query(
            f"SELECT {_RUN_COLUMNS} FROM runs r LEFT JOIN results res ON res.run_id = r.run_id "
            + (f"WHERE {' AND '.join(where)} " if where else "")
            + f"GROUP BY r.run_id ORDER BY r.created_at DESC, r.{self._database.order_column} DESC", tuple(params)
        )
        return [_run_info(row) for row in rows]

    def owners_and_projects(self) -> Tuple[List[str], List[str]]:
        """The owners and the projects that have runs, sorted (the History page's filters)."""
        owners = self._query("SELECT DISTINCT owner FROM runs WHERE owner IS NOT NULL ORDER BY owner")
        projects = self._query("SELECT DISTINCT project FROM runs WHERE project IS NOT NULL ORDER BY project")
        return [o for (o,) in owners], [p for (p,) in projects]

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
        """(index, sample) of every sample a resumed run still has to score, in index order (decoded a page at a
        time: the rows' JSON text is never all held beside their samples)."""
        self.get_run(run_id)
        rows = self._pages("SELECT s.idx, s.record FROM samples s LEFT JOIN results r ON r.run_id = s.run_id "
                           "AND r.idx = s.idx WHERE s.run_id = ? AND r.idx IS NULL AND s.idx > ? ORDER BY s.idx LIMIT ?",
                           run_id, PAGE)
        return [(idx, _sample_from_json(text)) for idx, text in rows]

    def _pages(self, sql: str, run_id: str, page: int) -> Iterator[Tuple]:
        """The rows of `sql` (run id, then the last index read, then the page size; rows keyed by their first
        column, an index, in order) fetched `page` at a time: each query picks up after the last index read."""
        after = -1
        while True:
            rows = self._query(sql, (run_id, after, page))
            yield from rows
            if len(rows) < page:
                return
            after = rows[-1][0]

    def samples(self, run_id: str) -> List[EvalSample]:
        """Every sample of the run, in index order (to re-run it without the original file)."""
        self.get_run(run_id)
        rows = self._query("SELECT record FROM samples WHERE run_id = ? ORDER BY idx", (run_id,))
        return [_sample_from_json(text) for (text,) in rows]

    def indexed_results(self, run_id: str) -> List[Tuple[int, EvalResult]]:
        """(index, result) of every stored result, in index order (a conversation's turns as its run's
        language put them to the judge)."""
        language = self.get_run(run_id).settings.get("language") or "auto"
        rows = self._query(
            "SELECT r.idx, r.compact, r.record, s.record FROM results r "
            "LEFT JOIN samples s ON s.run_id = r.run_id AND s.idx = r.idx WHERE r.run_id = ? ORDER BY r.idx",
            (run_id,),
        )
        return [(idx, result_from_row(compact, text, sample_text, language))
                for idx, compact, text, sample_text in rows]

    def iter_results(self, run_id: str, page: int = 0) -> Iterator[Tuple[int, EvalResult]]:
        """(index, result) of every stored result in index order, read `page` rows at a time (PAGE by
        default): a reader that counts or writes the rows as they pass holds one page, not the run."""
        language = self.get_run(run_id).settings.get("language") or "auto"
        rows = self._pages("SELECT r.idx, r.compact, r.record, s.record FROM results r LEFT JOIN samples s ON "
                           "s.run_id = r.run_id AND s.idx = r.idx WHERE r.run_id = ? AND r.idx > ? ORDER BY r.idx "
                           "LIMIT ?", run_id, page or PAGE)
        for idx, compact, text, sample_text in rows:
            yield idx, result_from_row(compact, text, sample_text, language)

    def stored_usage(self, run_id: str) -> Dict[str, Any]:
        """The judge usage stored with the run (empty when none)."""
        rows = self._query("SELECT usage FROM runs WHERE run_id = ?", (run_id,))
        return json.loads(rows[0][0]) if rows and rows[0][0] else {}

    def load_report(self, run_id: str) -> EvalReport:
        """The run's report: stored results in index order, total time and judge usage."""
        info = self.get_run(run_id)
        results = [result for _, result in self.indexed_results(run_id)]
        return EvalReport(results=results, total_time=info.total_time or 0.0, usage=self.stored_usage(run_id))


_UPSERT_SAMPLE = ("INSERT INTO samples (run_id, idx, record) VALUES (?, ?, ?) "
                  "ON CONFLICT (run_id, idx) DO UPDATE SET record = excluded.record")
_UPSERT_SCORE = ("INSERT INTO scores (run_id, idx, metric, pos, score, method, skipped, llm_score, heuristic_score, "
                 "llm_std) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, idx, metric) DO UPDATE SET "
                 "pos = excluded.pos, score = excluded.score, method = excluded.method, skipped = excluded.skipped, "
                 "llm_score = excluded.llm_score, heuristic_score = excluded.heuristic_score, llm_std = excluded.llm_std")
_UPSERT_RESULT = ("INSERT INTO results (run_id, idx, sample_id, overall, record, compact) VALUES (?, ?, ?, ?, ?, 1) "
                  "ON CONFLICT (run_id, idx) DO UPDATE SET sample_id = excluded.sample_id, "
                  "overall = excluded.overall, record = excluded.record, compact = 1")


def _is_database_error(exc: BaseException) -> bool:
    """An error from either driver (psycopg is optional, so it is looked up by module name)."""
    import sqlite3

    return isinstance(exc, sqlite3.Error) or type(exc).__module__.startswith("psycopg")


def result_from_row(compact: int, text: str, sample_text: Optional[str], language: str) -> EvalResult:
    """A stored result: a compact row joined to its run's sample, or an older full record as it is."""
    if not compact:
        return result_from_record(json.loads(text))
    sample = _sample_from_json(sample_text) if sample_text else None
    return result_from_compact_record(json.loads(text), sample, language=language)


def _sample_from_json(text: str) -> EvalSample:
    sample = sample_from_record(json.loads(text))
    return sample if sample is not None else EvalSample("", "", [])
