"""How a run is named and who scored it, in the words every list, picker, chart legend and export uses.

`scorer_label(settings)` says who scored a run: "MODEL at HOST" for an LLM judge, or "offline heuristics
(default | jaccard | embedding)" offline, so two offline runs scored by different heuristic sets no longer
both read "offline". `default_name` is the name a run has when none was given ("dataset · scorer ·
YYYY-MM-DD HH:MM"), and `clean_name` checks a name a user typed (--name, the Evaluate page, Rename).

A name is the user's text: it is kept as typed except for characters that would change how *other* text
is drawn (control characters, and the Unicode bidirectional controls that can reverse the text after them),
and every view shows it as text, never as Markdown or HTML.
"""
from __future__ import annotations

from typing import Any, Mapping, Optional
from urllib.parse import urlsplit

from ..errors import RagmeterError
from ..safetext import name_of

MAX_NAME_CHARS = 120  # a name fits one line of a list, a picker and a PDF header
OFFLINE_JUDGE = "offline"
# The heuristic sets' stored names as users know them: "ragmeter" is the default set (metrics/heuristics.py).
HEURISTIC_WORDS = {"ragmeter": "default", "": "default"}


def host_of(url: str) -> str:
    """Only the host (and port) of a judge endpoint: a path or query may hold a key, so it is never shown."""
    try:
        return urlsplit(url).netloc.rpartition("@")[2] or ""
    except ValueError:
        return ""


def heuristics_word(settings: Mapping[str, Any]) -> str:
    """The run's heuristic set in users' words: default, jaccard or embedding."""
    kind = settings.get("heuristics") or ""
    kind = ", ".join(map(str, kind)) if isinstance(kind, (list, tuple)) else str(kind)
    return HEURISTIC_WORDS.get(kind, kind)


def is_offline(settings: Mapping[str, Any]) -> bool:
    return str(settings.get("judge") or OFFLINE_JUDGE) == OFFLINE_JUDGE


def scorer_label(settings: Mapping[str, Any]) -> str:
    """Who scored a run: "MODEL at HOST" for a judge (the model alone when no endpoint was given), or
    "offline heuristics (SET)" for a run scored offline."""
    if is_offline(settings):
        return f"offline heuristics ({heuristics_word(settings)})"
    model = str(settings.get("model") or settings.get("judge"))
    host = host_of(str(settings.get("base_url") or ""))
    return f"{model} at {host}" if host else model


def default_name(dataset: str, settings: Mapping[str, Any], created_at: str) -> str:
    """The name of a run given none: "dataset · scorer · YYYY-MM-DD HH:MM" (the creation time, UTC)."""
    return f"{dataset or 'unnamed dataset'} · {scorer_label(settings)} · {created_at.replace('T', ' ')[:16]}"


def clean_name(name: Optional[str]) -> Optional[str]:
    """A typed run name made one plain line (None when empty); RagmeterError for one over MAX_NAME_CHARS.

    Line breaks and tabs become spaces; other control characters, noncharacters and bidirectional controls are
    dropped (a U+202E in a name would draw the rest of a list line backwards). Arabic, Hebrew and every other
    script are kept as typed."""
    if name is None:
        return None
    kept = name_of(name)  # one line, no control, noncharacter or bidi control (safetext: every name)
    if len(kept) > MAX_NAME_CHARS:
        raise RagmeterError(f"the run name is {len(kept)} characters long; a name may have at most {MAX_NAME_CHARS} "
                            f"(it begins {kept[:30]!r}): give a shorter one")
    return kept or None
