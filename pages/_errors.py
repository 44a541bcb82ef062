"""What a page tells the user, made safe: every message box, and every Markdown string that carries
user text, comes from here.

The rule: a template is ours, every field is the user's. `error("Cannot use {name}: {problem}",
name=upload_name, problem=exc)` renders the template as Markdown and each str or exception field
escaped (`md`), so a file name, run name, rubric text, dataset text or an error message quoting
them shows as typed. Numbers pass through untouched, so `{n:,}` still formats.

Why escape at all: Streamlit renders Markdown in message boxes, captions, st.markdown and in
widget labels (expander titles, metric labels, tab and button labels). A run named
`![x](http://host/x.png)` would be an image, and every colleague opening the History page would
fetch that URL. tests/app/test_state_keys.py checks that pages call st.error / st.warning /
st.info / st.success only through this module.
"""
from __future__ import annotations

import logging
import re
from contextlib import contextmanager
from typing import Any, Iterator, Optional

import streamlit as st

from evaluator import service

log = logging.getLogger("ragmeter.dashboard")

# Markdown's inline syntax (links, images, emphasis, code, HTML, strikethrough, LaTeX, headings,
# entities). Backslash-escaping ASCII punctuation is CommonMark's own way to say "this is text".
# "|" is left alone: a table needs a delimiter row on a line of its own, and `md` makes one line.
_SPECIAL = re.compile(r"([\\`*\[\]<>!~$#&])")
# "_" makes emphasis only at a word's edge: "retrieval_context" stays as it is, "_x_" is escaped.
_EDGE_UNDERSCORE = re.compile(r"(?<![^\W_])_|_(?![^\W_])")
# Streamlit's Markdown turns ":name:" / ":material/name:" into an icon, and bare URLs ("http://",
# "www.") and e-mail addresses into links, after parsing, so a backslash cannot stop them; an
# invisible word joiner (U+2060) inside the pattern does. `unlinked` is the text a reader sees.
JOINER = "\u2060"
_NEVER_LINKED = re.compile(r":(?=(?:material/)?[\w+-]+:)|:(?=//)|(?<![\w.])www(?=\.)|@(?=[-\w])", re.IGNORECASE)
# At the start of the text: a list, numbered list or setext/thematic line.
_LEADING_MARK = re.compile(r"^([-+=])")
_LEADING_NUMBER = re.compile(r"^(\d+)([.)])")
_LINE_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")


class Markdown(str):
    """Markdown made here (escaped user text, a code span, a filled template): safe to render, and a
    field `fmt` passes through as it is rather than escaping it twice."""


def md(text: Any) -> Markdown:
    """`text` (user text) escaped for Markdown, on one line: it renders as typed (`unlinked`)."""
    if isinstance(text, Markdown):
        return text
    text = unlinked(text)
    text = _SPECIAL.sub(r"\\\1", text)
    text = _EDGE_UNDERSCORE.sub(r"\\_", text)
    text = _LEADING_MARK.sub(r"\\\1", text)
    return Markdown(_LEADING_NUMBER.sub(r"\1\\\2", text))


def unlinked(text: Any) -> str:
    """`text` on one line, with a word joiner where Streamlit would make an icon or a link of it, and no control
    or bidirectional control character (service.drawable: "gpj.evil" never reads as "live.jpg")."""
    return _NEVER_LINKED.sub(lambda m: m.group(0) + JOINER, _LINE_BREAKS.sub(" ", service.drawable(str(text))))


def code_span(text: Any) -> Markdown:
    """`text` as inline code: a fence longer than any backtick run inside, so it cannot close early."""
    text = _LINE_BREAKS.sub(" ", str(text))
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    return Markdown(f"{fence} {text} {fence}")


def friendly(exc: BaseException) -> str:
    """A short message for the user; ragmeter's own errors already say what to do."""
    if isinstance(exc, service.RagmeterError):
        return str(exc)
    return f"Something went wrong ({type(exc).__name__}). Details are in the server log; please retry."


def fmt(template: str, **fields: Any) -> Markdown:
    """`template` (ours, Markdown) with its fields (the user's) escaped; exceptions become `friendly` text."""
    return Markdown(template.format(**{name: _field(value) for name, value in fields.items()}))


def _field(value: Any) -> Any:
    if isinstance(value, Markdown):
        return value
    if isinstance(value, BaseException):
        return md(friendly(value))
    if isinstance(value, str):
        return md(value)
    return value  # a number keeps its format spec


# --- the boxes ----------------------------------------------------------------------------------
def error(template: str, *, icon: Optional[str] = ":material/warning:", **fields: Any) -> None:
    st.error(fmt(template, **fields), icon=icon)


def warning(template: str, *, icon: Optional[str] = None, **fields: Any) -> None:
    st.warning(fmt(template, **fields), icon=icon)


def info(template: str, *, icon: Optional[str] = None, **fields: Any) -> None:
    st.info(fmt(template, **fields), icon=icon)


def success(template: str, *, icon: Optional[str] = ":material/check_circle:", **fields: Any) -> None:
    st.success(fmt(template, **fields), icon=icon)


def caption(template: str, **fields: Any) -> None:
    st.caption(fmt(template, **fields))


def markdown(template: str, **fields: Any) -> None:
    st.markdown(fmt(template, **fields))


@contextmanager
def guard(what: str) -> Iterator[None]:
    """Show any exception in the block as an inline red box and log the details."""
    try:
        yield
    except Exception as exc:  # Streamlit's rerun/stop signals are BaseException and pass through
        log.warning("%s failed", what, exc_info=not isinstance(exc, service.RagmeterError))
        error("{what} failed: {problem}", what=what, problem=exc)
