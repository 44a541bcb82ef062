"""An on-disk cache of judge replies, so re-running an unchanged dataset costs no judge calls.

One SQLite file, one table. The key is the SHA-256 of (base_url, model, temperature, prompt, and
the repeat index / logprobs request when non-zero): change any of them and the reply is fetched again. Only the key's digest and the reply text
are stored — never the API key, the base URL or the prompt itself. A reply the metric could not read a
score from is forgotten (`forget`, through the judge's `reply_unusable`), so it is never replayed.

The file is opened in WAL mode through one connection guarded by a lock: a lookup takes
microseconds next to a judge call, so evaluation workers share it safely, and WAL lets several
processes share one cache file. A cache
that cannot be written during a run (disk full, file locked too long) logs a warning and
carries on: losing a cache entry must never lose an evaluation.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Optional

from ..errors import JudgeConfigError
from ..io.redact import redact_text
from ..environment import variables

log = logging.getLogger("ragmeter")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_replies (
    key TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)
"""


CACHE_ENV = "RAGMETER_JUDGE_CACHE"
DEFAULT_CACHE_NAME = Path(".ragmeter") / "judge-cache.sqlite3"  # under the home folder


def default_cache_path() -> Path:
    """$RAGMETER_JUDGE_CACHE, else ~/.ragmeter/judge-cache.sqlite3: the library's default, for callers that
    pass no file. Programs take the file team/settings.py resolves (--cache, then this chain); this module
    sits below it, so the chain's last two steps are spelled here too (tests/test_settings.py holds them equal)."""
    return Path(variables().get(CACHE_ENV) or Path.home() / DEFAULT_CACHE_NAME).expanduser()


def cache_key(base_url: str, model: str, temperature: float, prompt: str, *, repeat: int = 0,
              top_logprobs: int = 0) -> str:
    """The cache key of one judge call: hex SHA-256 of its identifying parts.

    `repeat` (the index of a repeated judgement) and `top_logprobs` join the parts only when
    non-zero, so a first judgement keeps the key it always had and old caches still hit.
    """
    key = [base_url.rstrip("/"), model, float(temperature), prompt]
    if repeat or top_logprobs:
        key += [int(repeat), int(top_logprobs)]
    parts = json.dumps(key, ensure_ascii=False)
    return hashlib.sha256(parts.encode("utf-8")).hexdigest()


class JudgeCache:
    """A thread-safe SQLite cache of judge replies: `get(key)` / `put(key, reply)`.

    Raises `JudgeConfigError` at construction when the file cannot be created or is not a
    SQLite database, saying which file and what to do.
    """

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path).expanduser()
        self._lock = threading.Lock()
        self._db: Optional[sqlite3.Connection] = None
        self.hits = 0
        self.misses = 0
        self.write_errors = 0
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            with self._db:
                self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise JudgeConfigError(
                f"Cannot use judge cache file {self.path}: {exc}. Delete or move the file, fix its "
                "permissions, or pass another cache path (cache=None turns the cache off).") from exc

    def get(self, key: str) -> Optional[str]:
        """The cached reply for `key`, or None (a read error counts as a miss)."""
        row, problem = None, None
        with self._lock:
            try:
                row = self._open().execute("SELECT reply FROM judge_replies WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                problem = exc
            if row is None:
                self.misses += 1
            else:
                self.hits += 1
        if problem is not None:
            log.warning("judge cache %s could not be read (%s); calling the judge instead", self.path, problem)
        return None if row is None else row[0]

    def put(self, key: str, reply: str) -> None:
        """Store a reply, secrets masked (a judge may echo its key); empty replies are not cached
        (they are failures, not answers)."""
        if not (reply or "").strip():
            return
        reply = redact_text(reply)
        with self._lock:
            try:
                with self._open() as db:
                    db.execute("INSERT OR REPLACE INTO judge_replies (key, reply, created) VALUES (?, ?, ?)",
                               (key, reply, time.time()))
                return
            except sqlite3.Error as exc:
                self.write_errors += 1
                problem = exc
        log.warning("judge cache %s could not be written (%s); the reply was not cached", self.path, problem)

    def forget(self, key: str) -> None:
        """Drop one reply (it held no usable score); a write error is logged, never raised."""
        with self._lock:
            try:
                with self._open() as db:
                    db.execute("DELETE FROM judge_replies WHERE key = ?", (key,))
                return
            except sqlite3.Error as exc:
                self.write_errors += 1
                problem = exc
        log.warning("judge cache %s could not drop an unusable reply (%s)", self.path, problem)

    def _open(self) -> sqlite3.Connection:
        if self._db is None:
            raise sqlite3.ProgrammingError("the cache was closed")
        return self._db

    def __len__(self) -> int:
        with self._lock:
            return self._open().execute("SELECT COUNT(*) FROM judge_replies").fetchone()[0]

    def clear(self) -> None:
        """Forget every cached reply."""
        with self._lock, self._open() as db:
            db.execute("DELETE FROM judge_replies")

    def stats(self) -> dict:
        with self._lock:
            return {"path": str(self.path), "hits": self.hits, "misses": self.misses,
                    "write_errors": self.write_errors}

    def close(self) -> None:
        """Close the file; later lookups miss and later writes are dropped (with a warning)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()

    def __repr__(self) -> str:
        return f"JudgeCache({str(self.path)!r})"

    def __bool__(self) -> bool:
        return True  # an empty cache is still a cache (__len__ would make it falsy)
