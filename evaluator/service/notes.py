"""Notes on runs and samples, for the pages: read a run's notes, and write one after the role check.

Who may write a note: on a laptop, anyone (the person at the keyboard); in team mode evaluators and admins,
and viewers only when the team file's [roles] says `viewers_may_comment = true` (read from the roles config
when that setting exists; until then viewers may not). The check sits here, where the write happens, so a
button drawn by mistake or a crafted request still cannot write.
"""
from __future__ import annotations

from typing import List, Optional

from ..errors import NotAllowed
from ..store.history import RunStore, default_owner
from ..store.notes import MAX_CHARS, Note, add_note, notes_of
from ..team.access import Access


MAX_NOTE_CHARS = MAX_CHARS


def may_note(access: Access) -> bool:
    """Whether this user may write notes (see the module docstring)."""
    if not access.team:
        return True
    if access.user is None:
        return False
    if access.roles.allows(access.user, "evaluator"):
        return True
    return bool(getattr(access.roles, "viewers_may_comment", False)) and access.roles.allows(access.user, "viewer")


def save_note(store: RunStore, run_id: str, text: str, *, access: Access, author: str = "",
              sample: Optional[str] = None, index: Optional[int] = None) -> Note:
    """Write a note on the run (or on one sample: its sample id or "#n", or its row `index`) as the signed-in
    user (else `author`, else the login name); NotAllowed for a user who may not write notes."""
    if not may_note(access):
        raise NotAllowed("you may not write notes here: that needs the evaluator role (or viewers_may_comment = "
                         "true in the team file's [roles])")
    return add_note(store, run_id, text, author=access.user or author or default_owner(), sample=sample or None,
                    index=index)


def run_notes(store: RunStore, run_id: str, index: Optional[int] = None) -> List[Note]:
    """The run's notes, oldest first (only one row's with `index`)."""
    return notes_of(store, run_id, index)
