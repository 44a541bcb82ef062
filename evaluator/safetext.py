"""Text made safe once, where it enters: dataset files and uploads, target answers, judge replies.

Two kinds of character break what comes after: a lone surrogate (`\\ud800`, which JSON's `\\u`
escapes and Python literals can spell, and UTF-8 cannot encode: SQLite, the exports and
Streamlit's data frames all fail on it) and the NUL character (C strings end at it; it slips
into CSV cells past the binary-file check). Each is replaced by U+FFFD, the replacement
character, so the text stays readable and the row is kept; a surrogate *pair* written as two
escapes is joined into the character it spells. `clean_sample` also notes what it replaced in
`sample.metadata["text_repairs"]` (e.g. "answer: 1 lone surrogate replaced with U+FFFD"), which
the drill-down and the exports show.

Text a reader sees is made safe where it is drawn: `drawable` (and `drawable_value` for a whole chart spec)
replaces every control character but tab and newline, U+FFFE/U+FFFF and lone surrogates with U+FFFD and removes
bidirectional controls, for the chart and PDF renderer (analysis/render.py), the HTML pages, Excel cells and
terminal listings. Where text enters: `unsafe_character` names the first such character (a note is refused
with it), `name_of` cleans a dataset's, run's or project's name, `without_controls` a judge's reply.
"""
from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Dict, List, Optional, Tuple

from .model import EvalSample

REPLACEMENT = "\ufffd"
REPAIRS_KEY = "text_repairs"  # sample.metadata key: a list of notes, one per repaired field
_BAD = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
_TEXT_FIELDS = ("question", "answer", "ground_truth", "sample_id", "category", "target_error",
                "no_contexts_reason", "no_answer_reason")
_LIST_FIELDS = ("contexts", "expected_answer_keywords", "expected_docs", "expected_tools", "tool_calls",
                "retrieval_ids", "relevance")


def clean_text(text: str) -> Tuple[str, int, int]:
    """(safe text, NULs replaced, lone surrogates replaced)."""
    if not _BAD.search(text):
        return text, 0, 0
    nuls = text.count("\x00")
    text = text.replace("\x00", REPLACEMENT)
    surrogates = 0
    if _SURROGATE.search(text):
        # utf-16 joins valid pairs back into one character and replaces the rest.
        joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
        surrogates = joined.count(REPLACEMENT) - text.count(REPLACEMENT)
        text = joined
    return text, nuls, surrogates


def safe(text: str) -> str:
    """`text` with NULs and lone surrogates replaced (no note)."""
    return clean_text(text)[0]


def clean_value(value: Any, counts: List[int]) -> Any:
    """Strings inside lists, tuples and dicts (keys too) cleaned; `counts` is [NULs, lone surrogates,
    1 if anything changed], added to."""
    if isinstance(value, str):
        text, nuls, surrogates = clean_text(value)
        counts[0] += nuls
        counts[1] += surrogates
        if text is not value:
            counts[2] = 1  # changed, even where nothing was lost (a surrogate pair joined)
        return text
    if isinstance(value, list):
        return [clean_value(v, counts) for v in value]
    if isinstance(value, tuple):
        return tuple(clean_value(v, counts) for v in value)
    if isinstance(value, dict):
        return {clean_value(k, counts): clean_value(v, counts) for k, v in value.items()}
    return value


def _dirty(value: Any) -> bool:
    """Whether any string inside `value` holds a NUL or a surrogate."""
    if isinstance(value, str):
        return _BAD.search(value) is not None
    if isinstance(value, (list, tuple)):
        return any(_dirty(v) for v in value)
    if isinstance(value, dict):
        return any(_dirty(k) or _dirty(v) for k, v in value.items())
    return False


def note(field: str, nuls: int, surrogates: int) -> str:
    """'answer: 2 NUL characters and 1 lone surrogate replaced with U+FFFD'."""
    parts = [f"{n} {what}{'s' if n != 1 else ''}" for n, what in ((nuls, "NUL character"),
                                                                   (surrogates, "lone surrogate")) if n]
    return f"{field}: {' and '.join(parts)} replaced with U+FFFD"


def clean_row(row: Dict[str, Any]) -> Dict[str, Any]:
    """A raw row (a preview's) with every string cleaned."""
    return clean_value(row, [0, 0, 0])


def clean_sample(sample: EvalSample) -> EvalSample:
    """The sample with every text cleaned and a note per repaired field in metadata["text_repairs"];
    the same object when nothing needed it."""
    changes: Dict[str, Any] = {}
    notes: List[str] = []
    for name in _TEXT_FIELDS + _LIST_FIELDS + ("metadata",):
        value = getattr(sample, name)
        if not _dirty(value):  # the usual case: nothing copied
            continue
        counts = [0, 0, 0]
        cleaned = clean_value(value, counts)
        if counts[2]:
            changes[name] = cleaned
        if counts[0] or counts[1]:
            notes.append(note(name, counts[0], counts[1]))
    if not changes:
        return sample
    if not notes:
        return replace(sample, **changes)
    metadata = dict(changes.get("metadata", sample.metadata) or {})
    metadata[REPAIRS_KEY] = list(metadata.get(REPAIRS_KEY) or []) + notes
    changes["metadata"] = metadata
    return replace(sample, **changes)


# --- text a reader sees: drawn by a renderer, printed to a terminal, written to HTML or a spreadsheet ---------
# A control character other than tab and newline (C0, DEL, C1), a noncharacter U+FFFE/U+FFFF or a lone
# surrogate: XML 1.0 forbids the C0 ones and U+FFFE/U+FFFF, and vl-convert, parsing its own SVG, aborts the
# whole process on one (a Rust panic that cannot unwind: SIGABRT); a terminal acts on ESC, CR and the C1 set.
_UNDRAWABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff]")
# Bidirectional controls (ALM, LRM, RLM, the embeddings and overrides, the isolates): U+202E makes "gpj.evil" read
# as "live.jpg". A reader's text needs none of them: each paragraph's direction is set where it is drawn.
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_BIDI = re.compile(f"[{BIDI_CONTROLS}]")
_NAME_DROPPED = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff{BIDI_CONTROLS}]")
_KINDS = (("\x00-\x08\x0b-\x1f\x7f-\x9f", "a control character"), ("\ufffe\uffff", "a noncharacter"),
          ("\ud800-\udfff", "a lone surrogate"), (BIDI_CONTROLS, "a bidirectional control"))


def drawable(text: str) -> str:
    """`text` as a chart, a PDF, an HTML page, a spreadsheet or a terminal should show it: CR LF as LF, every
    other control character but tab and newline, U+FFFE, U+FFFF and any lone surrogate replaced with U+FFFD
    (the reader sees that something was there), and the bidirectional controls removed (the characters read in
    the order they were written)."""
    if not (_UNDRAWABLE.search(text) or _BIDI.search(text)):
        return text  # the usual case: nothing copied
    return _BIDI.sub("", _UNDRAWABLE.sub(REPLACEMENT, text.replace("\r\n", "\n")))


def on_strings(value: Any, clean: Callable[[str], str]) -> Any:
    """`clean` on every string inside lists, tuples and dicts, keys too; other values as they are."""
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, (list, tuple)):
        return type(value)(on_strings(v, clean) for v in value)
    if isinstance(value, dict):
        return {on_strings(k, clean): on_strings(v, clean) for k, v in value.items()}
    return value


def drawable_value(value: Any) -> Any:
    """`drawable` on every string inside lists, tuples and dicts (keys too: a chart's field names are keys, and
    its encodings name them through the same function, so they still match)."""
    return on_strings(value, drawable)


def without_controls(text: str) -> str:
    """`text` without the characters `drawable` replaces (every control character but tab and newline,
    U+FFFE, U+FFFF, lone surrogates), CR LF as LF: machine text where it enters (a judge's reasoning)."""
    return _UNDRAWABLE.sub("", text.replace("\r\n", "\n")) if _UNDRAWABLE.search(text) else text


def without_controls_value(value: Any) -> Any:
    """`without_controls` on every string inside lists, tuples and dicts (a judge's parsed reply)."""
    return on_strings(value, without_controls)


def name_of(text: str) -> str:
    """A name (a dataset's, a run's) as it is stored: without control characters, noncharacters, lone surrogates
    or bidirectional controls, its runs of whitespace (newlines and tabs too: a name is one line) one space."""
    return " ".join(_NAME_DROPPED.sub("", text).split())


def unsafe_character(text: str) -> Optional[str]:
    """Why `text` cannot be kept as typed: 'U+0001 (a control character) at position 5', the first character
    that is a control character other than tab and newline, a noncharacter or a lone surrogate; None when
    there is none. Positions count characters from 1."""
    found = _UNDRAWABLE.search(text)
    if found is None:
        return None
    char = found.group()
    kind = next(what for chars, what in _KINDS if re.fullmatch(f"[{chars}]", char))
    return f"U+{ord(char):04X} ({kind}) at position {found.start() + 1}"
