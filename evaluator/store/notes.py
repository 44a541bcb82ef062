"""Notes on a run or on one of its samples, kept in the run-history database beside the run (history.m012_notes).

A note is data: its text is stored as typed and every surface shows it as text (the dashboard with st.text,
the HTML report escaped, the PDF as a text mark, the CLI as printed), never as Markdown or HTML. A note has an
author (the signed-in user in team mode, else $RAGMETER_USER or the login name) and a time; deleting the run
deletes its notes. Who may write one is decided above this module (service/notes.py), as for every write.
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import List, Optional, Tuple

from ..errors import RagmeterError
from ..safetext import unsafe_character
from .history import RunStore

MAX_CHARS = 10_000  # a note is a comment, not a document: longer text is refused with its length


class NoteError(RagmeterError):
    """A note that cannot be saved (empty, too long, or on a sample the run does not have)."""


@dataclass(frozen=True)
class Note:
    """One note: on the whole run (`index` None) or on one of its samples (row `index`, 0-based)."""

    note_id: str
    run_id: str
    index: Optional[int]
    sample_id: Optional[str]
    author: str
    created_at: str
    text: str

    @property
    def on(self) -> str:
        """What it is about, in words: "the run" or "sample #n (id)" (n counted from 1)."""
        if self.index is None:
            return "the run"
        return f"sample #{self.index + 1}" + (f" ({self.sample_id})" if self.sample_id else "")


def _clean(text: str) -> str:
    body = str(text or "").replace("\r\n", "\n").strip()
    if not body:
        raise NoteError("the note is empty: write what you want to say about the run or the sample")
    unsafe = unsafe_character(body)
    if unsafe:  # a NUL would fail in PostgreSQL, a U+0001 once crashed the chart renderer: say which, and where
        raise NoteError(f"the note holds {unsafe}: remove it (a note may hold any text, tabs and new lines, "
                        "but no control character)")
    if len(body) > MAX_CHARS:
        raise NoteError(f"a note is at most {MAX_CHARS:,} characters; this one has {len(body):,}. Shorten it, or "
                        "link to a longer document")
    return body


def find_sample(store: RunStore, run_id: str, sample: str) -> Tuple[int, Optional[str]]:
    """(row index, sample id) of a run's sample given by its sample id or by "#n" (its row, counted from 1)."""
    if sample.startswith("#") and sample[1:].isdigit():
        found = store.query("SELECT idx, sample_id FROM results WHERE run_id = ? AND idx = ?",
                            (run_id, int(sample[1:]) - 1))
    else:
        found = store.query("SELECT idx, sample_id FROM results WHERE run_id = ? AND sample_id = ? ORDER BY idx",
                            (run_id, sample))
    if not found:
        raise NoteError(f"run {run_id} has no sample {sample!r}: give a sample_id as in the report, or #n for its "
                        "n-th row")
    return int(found[0][0]), found[0][1]


def add_note(store: RunStore, run_id: str, text: str, *, author: str, sample: Optional[str] = None,
             index: Optional[int] = None) -> Note:
    """Save a note on run `run_id` (HistoryError for an unknown run), or on one of its samples: `sample` (its
    sample id, or "#n") or its row `index`."""
    body = _clean(text)
    store.get_run(run_id)  # HistoryError (exit 2 on the CLI) for an unknown run
    sample_id: Optional[str] = None
    if sample is not None:
        index, sample_id = find_sample(store, run_id, sample)
    elif index is not None:
        rows = store.query("SELECT sample_id FROM results WHERE run_id = ? AND idx = ?", (run_id, index))
        if not rows:
            raise NoteError(f"run {run_id} has no row #{index + 1}")
        sample_id = rows[0][0]
    note = Note(uuid.uuid4().hex[:12], run_id, index, sample_id, author or "unknown",
                datetime.now(timezone.utc).isoformat(timespec="microseconds"), body)
    store.write("INSERT INTO notes (note_id, run_id, idx, sample_id, author, created_at, body) VALUES "
                "(?, ?, ?, ?, ?, ?, ?)", (note.note_id, run_id, index, sample_id, note.author, note.created_at, body))
    return note


def notes_of(store: RunStore, run_id: str, index: Optional[int] = None) -> List[Note]:
    """A run's notes, oldest first (only those on row `index` when given)."""
    where, params = ("AND idx = ? ", (run_id, index)) if index is not None else ("", (run_id,))
    rows = store.query("SELECT note_id, run_id, idx, sample_id, author, created_at, body FROM notes WHERE "
                       f"run_id = ? {where}ORDER BY created_at, note_id", params)
    return [Note(r[0], r[1], None if r[2] is None else int(r[2]), r[3], r[4], r[5], r[6]) for r in rows]
