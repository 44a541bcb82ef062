"""Where the Review page's buttons act: the queue the page last drew and the position in it.

Quick clicks arrive while the page is still redrawing (it is greyed, its buttons still those of the
sample before). Streamlit runs each click's callback before the next draw, so the callbacks must not
read what a draw computed (a closure over an earlier draw acts on a sample already reviewed, and the
click is lost). They walk this cursor instead, kept in the session and moved by each callback:
"agree with all and next" agrees with the sample the cursor points at, then moves it, so ten clicks
store ten reviews in queue order; a save of a drawn sample moves the cursor just past that sample,
so a repeated click neither doubles a review nor skips one.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Tuple

from pages import _state as state


@dataclass(frozen=True)
class Cursor:
    run_id: str
    metric: str
    shrinks: bool  # the "not yet reviewed" queue: a reviewed sample leaves it, the next takes its place
    queue: Tuple[int, ...]

    def clamp(self, pos: int) -> int:
        return max(0, min(len(self.queue) - 1, pos))


def drawn(run_id: str, metric: str, shrinks: bool, queue: Tuple[int, ...]) -> int:
    """Remember the queue this draw shows; the position to show in it."""
    cursor = Cursor(run_id, metric, shrinks, tuple(queue))
    state.put(state.REV_CURSOR, cursor)
    pos = cursor.clamp(int(state.get(state.REV_POS, 0)))
    state.put(state.REV_POS, pos)
    return pos


def current(run_id: str) -> Optional[Cursor]:
    """The cursor, when it walks `run_id`'s queue (None once another run is picked)."""
    cursor = state.get(state.REV_CURSOR)
    return cursor if isinstance(cursor, Cursor) and cursor.run_id == run_id and cursor.queue else None


def pointed(run_id: str) -> Optional[int]:
    """The sample index the next "agree with all" acts on."""
    cursor = current(run_id)
    return None if cursor is None else cursor.queue[cursor.clamp(int(state.get(state.REV_POS, 0)))]


def move(run_id: str, step: int) -> None:
    cursor = current(run_id)
    if cursor is not None:
        state.put(state.REV_POS, cursor.clamp(int(state.get(state.REV_POS, 0)) + step))


def past(run_id: str, index: int) -> None:
    """Move just past sample `index` once it is reviewed (idempotent: a second call changes nothing)."""
    cursor = current(run_id)
    if cursor is None or index not in cursor.queue:
        return
    at = cursor.queue.index(index)
    if cursor.shrinks:
        cursor = replace(cursor, queue=tuple(i for i in cursor.queue if i != index))
        state.put(state.REV_CURSOR, cursor)
        state.put(state.REV_POS, min(at, max(0, len(cursor.queue) - 1)))
    else:
        state.put(state.REV_POS, cursor.clamp(at + 1))
