"""Test-set generations in the history database: the `generations` table (migration m011 in history.py).

A generation is a job of kind "generate" (store/jobs.py): its row holds what a worker anywhere needs to
run it and what a page in any tab shows when it ends, never a key or a server path:

    settings  the generation's settings and its judge's (no key: the NAME of the variable holding it)
    chunks    the documents' chunks it writes from (capped by the submitter, as the page caps uploads)
    items     the items kept so far, saved with each heartbeat, so an interrupted generation resumes
    outcome   when it ends: rejection reasons, attempts, judge calls and tokens, shortfall, error, coverage

This layer stores plain JSON (dicts and lists); evaluator/runs/generation.py turns them into chunks,
items and a Generation. A worker writes items and outcome only while the job is still its own (its
lease not taken by another worker), so a worker that stalled cannot overwrite a newer one's items.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Dict, List, Optional, Sequence

from ..errors import HistoryError
from ..io.redact import redacted_json, sanitize_settings
from .history import RunStore

GENERATION_STATUSES = ("queued", "running", "finished", "short", "stopped", "failed", "interrupted")
ENDED = ("finished", "short", "stopped", "failed", "interrupted")
_HELD = "EXISTS (SELECT 1 FROM jobs WHERE run_id = ? AND worker = ? AND state = 'running')"
_COLUMNS = "gen_id, name, owner, created_at, finished_at, status, target, n_items, settings, outcome"

GEN_PREFIX = "gen-"  # a generation's id starts so; a run's id is bare hex


@dataclass
class GenerationInfo:
    """One generation as pages list it: never its chunks or items (read those with `items`, `chunks`)."""

    gen_id: str
    name: str
    owner: str
    created_at: str
    finished_at: Optional[str]
    status: str
    target: int  # items wanted in all (those it started from included)
    n_items: int  # items kept so far
    settings: Dict[str, Any] = field(default_factory=dict)
    outcome: Dict[str, Any] = field(default_factory=dict)

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    @property
    def label(self) -> str:
        return f"{self.name} · {self.created_at.replace('T', ' ')[:16]} · {self.n_items}/{self.target} items"


def _info(row: Sequence[Any]) -> GenerationInfo:
    return GenerationInfo(gen_id=row[0], name=row[1], owner=row[2], created_at=row[3], finished_at=row[4],
                          status=row[5], target=int(row[6]), n_items=int(row[7]), settings=json.loads(row[8] or "{}"),
                          outcome=json.loads(row[9]) if row[9] else {})


def _dumps(value: Any) -> str:
    return redacted_json(value)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Generations:
    """The generations of the history `store`."""

    def __init__(self, store: RunStore) -> None:
        self.store = store

    def create(self, *, name: str, owner: str, settings: Dict[str, Any], chunks: List[Dict[str, Any]],
               target: int, items: Sequence[Dict[str, Any]] = ()) -> str:
        """Store a new generation ("queued"; runs/generation.py queues its job); its id. `items` are those it
        starts from (a test set whose gaps it fills)."""
        gen_id = GEN_PREFIX + uuid.uuid4().hex[:12]  # never a run's id (those are bare hex): one jobs table holds both
        self.store.write(
            "INSERT INTO generations (gen_id, name, owner, created_at, status, target, n_items, settings, chunks, "
            "items) VALUES (?, ?, ?, ?, 'queued', ?, ?, ?, ?, ?)",
            (gen_id, name, owner, _now(), int(target), len(items), _dumps(sanitize_settings(settings)),
             _dumps(chunks), _dumps(list(items))))
        return gen_id

    def get(self, gen_id: str) -> GenerationInfo:
        """One generation; HistoryError naming the id when it is unknown."""
        rows = self.store.query(f"SELECT {_COLUMNS} FROM generations WHERE gen_id = ?", (gen_id,))
        if not rows:
            raise HistoryError(f"No generation with id {gen_id!r} in {self.store.shown}.")
        return _info(rows[0])

    def list(self, *, owner: Optional[str] = None, limit: int = 50) -> List[GenerationInfo]:
        """The newest generations (only `owner`'s when given), newest first."""
        where, params = ("WHERE owner = ? ", (owner,)) if owner is not None else ("", ())
        rows = self.store.query(f"SELECT {_COLUMNS} FROM generations {where}ORDER BY created_at DESC, gen_id "
                                f"LIMIT {int(limit)}", params)
        return [_info(r) for r in rows]

    def items(self, gen_id: str) -> List[Dict[str, Any]]:
        return self._json(gen_id, "items")

    def chunks(self, gen_id: str) -> List[Dict[str, Any]]:
        return self._json(gen_id, "chunks")

    def _json(self, gen_id: str, column: str) -> List[Dict[str, Any]]:
        rows = self.store.query(f"SELECT {column} FROM generations WHERE gen_id = ?", (gen_id,))
        if not rows:
            raise HistoryError(f"No generation with id {gen_id!r} in {self.store.shown}.")
        return list(json.loads(rows[0][0] or "[]"))

    # -- written by the worker that holds the job -----------------------------------------------
    def save_items(self, gen_id: str, items: Sequence[Dict[str, Any]], *, worker: str) -> bool:
        """Replace the kept items; False (nothing written) when `worker` no longer holds the job."""
        return self.store.write(f"UPDATE generations SET items = ?, n_items = ? WHERE gen_id = ? AND {_HELD}",
                                (_dumps(list(items)), len(items), gen_id, gen_id, worker)) == 1

    def save_outcome(self, gen_id: str, items: Sequence[Dict[str, Any]], outcome: Dict[str, Any], *,
                     worker: str) -> bool:
        """The items and outcome of an ended generation, in one write; False when `worker` lost the job."""
        return self.store.write(
            f"UPDATE generations SET items = ?, n_items = ?, outcome = ?, finished_at = ? WHERE gen_id = ? AND {_HELD}",
            (_dumps(list(items)), len(items), _dumps(outcome), _now(), gen_id, gen_id, worker)) == 1

    def delete(self, gen_id: str) -> None:
        """Delete the generation and its job."""
        with self.store.transaction() as db:
            db.execute("DELETE FROM jobs WHERE run_id = ?", (gen_id,))
            if not db.rowcount("DELETE FROM generations WHERE gen_id = ?", (gen_id,)):
                raise HistoryError(f"No generation with id {gen_id!r} in {self.store.shown}.")
