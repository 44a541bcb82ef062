"""The two databases a run history can live in: a SQLite file (the embedded default) or PostgreSQL.

RunStore (history.py) writes one SQL text for both: `?` placeholders, `INSERT ... ON CONFLICT`
upserts and types both accept. What differs lives here, in two small classes:

- placeholders (`?` for sqlite3, `%s` for psycopg), REAL's precision (PostgreSQL's REAL is 4 bytes:
  it becomes DOUBLE PRECISION), and the insertion order used to list runs created in the same
  second (SQLite's rowid, a `seq` column on PostgreSQL);
- how a migration is kept to one process at a time: `BEGIN IMMEDIATE` takes SQLite's write lock
  before the applied steps are read, `pg_advisory_xact_lock` does the same on PostgreSQL, so
  several processes opening a new database at once apply each step exactly once;
- connections: one per thread (sqlite3 connections are not shared; psycopg's are thread-safe but
  serialise their users), each block one transaction.

Why not SQLAlchemy Core: the store's SQL is fifteen statements that are already portable but for
the points above; a ~150-line layer keeps the hot paths (one upsert per scored sample, one
executemany per Ray batch) on the drivers themselves and adds no dependency to the core package.
psycopg 3 comes with the `postgres` extra.
"""
from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence, Tuple, Type
from urllib.parse import urlsplit, urlunsplit

from ..errors import HistoryError, MissingExtra

POSTGRES_SCHEMES = ("postgresql://", "postgres://")
_MIGRATION_LOCK = 0x7261676D  # "ragm": the advisory lock every ragmeter process takes to migrate


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and location.strip().lower().startswith(POSTGRES_SCHEMES)


def shown_url(url: str) -> str:
    """The URL without its password (what error messages and the dashboard show)."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = user.partition(":")[0] + "@" + host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


class Database:
    """What RunStore needs from a database: transactions, a migration lock, its errors."""

    dialect = ""
    order_column = ""  # insertion order, to list runs created in the same second newest first
    errors: Tuple[Type[BaseException], ...] = ()
    integrity_errors: Tuple[Type[BaseException], ...] = ()
    location = ""  # what messages show: the file path, or the URL without its password
    _local: threading.local  # this thread's connection, as `_local.db`

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator["Session"]:
        """One transaction; `write=False` for blocks that only read."""
        raise NotImplementedError
        yield  # pragma: no cover

    @contextmanager
    def migration(self) -> Iterator["Session"]:
        """A transaction that holds the database's migration lock from its first statement."""
        raise NotImplementedError
        yield  # pragma: no cover

    def close(self) -> None:
        """Close this thread's connection (each thread has its own, in `_local.db`)."""
        db = getattr(self._local, "db", None)
        if db is not None:
            db.close()
            self._local.db = None


class Session:
    """One transaction's statements, SQL written with `?` placeholders."""

    def __init__(self, raw: Any, dialect: str) -> None:
        self.raw, self.dialect = raw, dialect

    def _sql(self, sql: str) -> str:
        if self.dialect != "postgresql":
            return sql
        return sql.replace("%", "%%").replace("?", "%s")

    @property
    def real(self) -> str:
        """The type of a float column: PostgreSQL's REAL has only 6 digits."""
        return "DOUBLE PRECISION" if self.dialect == "postgresql" else "REAL"

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.raw.execute(self._sql(sql), tuple(params))

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            if self.dialect == "postgresql":
                with self.raw.cursor() as cursor:
                    cursor.executemany(self._sql(sql), list(rows))
            else:
                self.raw.executemany(sql, rows)

    def rowcount(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self.execute(sql, params).rowcount)

    def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list:
        return list(self.execute(sql, params).fetchall())


def _switch_to_wal(db: sqlite3.Connection, attempts: int = 50) -> None:
    """WAL mode, retried: several processes opening one new file at once make the switch answer
    "database is locked" at once (SQLite's busy timeout does not cover it)."""
    for attempt in range(attempts):
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == attempts - 1:
                raise
            time.sleep(0.05 + 0.01 * attempt)


class SqliteDatabase(Database):
    dialect = "sqlite"
    order_column = "rowid"
    errors = (sqlite3.Error,)
    integrity_errors = (sqlite3.IntegrityError,)

    def __init__(self, path: Path) -> None:
        self.path, self.location = path, str(path)
        self._local = threading.local()
        if not path.parent.exists():
            path.parent.mkdir(parents=True, mode=0o700)
        db = self._db()
        # A sample row with a few contexts is 2-4 KB: in SQLite's default 4 KB pages most rows take a
        # page of their own. 8 KB pages cut the file by a fifth. Only a new, empty file takes the
        # setting (it must precede WAL mode); older files keep their page size.
        db.execute("PRAGMA page_size=8192")
        _switch_to_wal(db)

    def _db(self) -> sqlite3.Connection:
        """This thread's connection, opened on first use (opening one per write costs ~1 ms)."""
        db = getattr(self._local, "db", None)
        if db is None:
            # isolation_level=None: transactions are the explicit BEGINs below, DDL included (the
            # module's implicit transactions leave CREATE TABLE outside any, which let two processes
            # both create the tables of a new file).
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
            db.execute("PRAGMA foreign_keys=ON")
            # NORMAL is durable against a killed process in WAL mode; only power loss could drop a commit.
            db.execute("PRAGMA synchronous=NORMAL")
            self._local.db = db
        return db

    @contextmanager
    def _begin(self, how: str) -> Iterator[Session]:
        db = self._db()
        db.execute(how)
        try:
            yield Session(db, self.dialect)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Session]:
        # A write takes the write lock at BEGIN: a deferred transaction that reads first and then
        # writes fails at once ("database is locked") when another writer got in between.
        with self._begin("BEGIN IMMEDIATE" if write else "BEGIN") as session:
            yield session

    @contextmanager
    def migration(self) -> Iterator[Session]:
        with self._begin("BEGIN IMMEDIATE") as session:  # the write lock, before anything is read
            yield session


class PostgresDatabase(Database):
    dialect = "postgresql"
    order_column = "seq"

    def __init__(self, url: str) -> None:
        try:
            import psycopg
        except ImportError:
            raise MissingExtra("A PostgreSQL history needs psycopg: pip install 'ragmeter[postgres]'") from None
        self._psycopg = psycopg
        self.url, self.location = url, shown_url(url)
        self.errors = (psycopg.Error,)
        self.integrity_errors = (psycopg.errors.IntegrityError,)
        self._local = threading.local()
        try:
            self._db()  # connect now: a wrong URL or a server that is down is reported when the store opens
        except psycopg.Error as exc:
            raise HistoryError(f"Cannot connect to the run history at {self.location}: {exc}".strip() +
                               ". Check the URL (--history, RAGMETER_HISTORY or [server].history) and that "
                               "the server accepts connections") from None

    def _db(self) -> Any:
        db = getattr(self._local, "db", None)
        if db is None or db.closed:
            db = self._psycopg.connect(self.url, autocommit=True, connect_timeout=10,
                                       application_name="ragmeter")
            self._local.db = db
        return db

    @contextmanager
    def transaction(self, write: bool = True) -> Iterator[Session]:
        db = self._db()
        with db.transaction():
            yield Session(db, self.dialect)

    @contextmanager
    def migration(self) -> Iterator[Session]:
        with self.transaction() as session:
            session.execute("SELECT pg_advisory_xact_lock(?)", (_MIGRATION_LOCK,))
            yield session


def open_database(location: os.PathLike | str) -> Database:
    """The database at a SQLite path or a postgresql:// URL."""
    if is_postgres_url(location):
        return PostgresDatabase(str(location).strip())
    return SqliteDatabase(Path(location).expanduser())


def location_of(value: os.PathLike | str) -> Path | str:
    """A history location as typed: a URL stays a string, anything else is a path."""
    if is_postgres_url(value):
        return str(value).strip()
    return Path(value).expanduser()
