"""Removing secrets from everything stored, exported or shown.

Keys, tokens and passwords must never reach the history, an export, the judge cache or a log;
this is the one place that decides what counts as a secret. Two kinds:

- by name: a settings key containing key/secret/token/password/authorization is dropped
  (`sanitize_settings`);
- by value: every secret value the process has been told about (`remember`: judge API keys,
  target header values read from the environment, URL query-string secrets) and anything shaped
  like one (`?key=…`, `api_key=…`, `Bearer …`, `scheme://user:pass@`) is replaced by `***` in
  any text (`redact_text`) or nested value (`redact_value`), wherever it appears: a server that
  echoes the key back in a 401 body or a judge reply cannot carry it to disk.

The known values live in one process-wide set, filled where the secret is read and consulted
where text is persisted (history rows, exports, cache writes), so the value need not be threaded
through every layer between them. Values are only ever added: forgetting one could leak it.
"""
from __future__ import annotations

import html
import json
import re
import threading
from typing import Any, Iterable, List
from urllib.parse import parse_qsl, urlsplit

MASK = "***"
# A settings key containing any of these (case-insensitive) is dropped, at any depth.
SECRET_MARKERS = ("key", "secret", "token", "password", "authorization")
# Shorter values are not remembered: masking "abc" everywhere would garble text and hide nothing.
MIN_SECRET_LENGTH = 6
# Query-string parameters that carry a credential (?key=…, &api_key=…, ?access_token=…, ?sig=…).
_QUERY_SECRET = re.compile(
    r"(?P<lead>[?&;](?:[\w.-]*(?:key|token|secret|password|passwd|pwd|auth|sig|signature|credential)[\w.-]*)=)"
    r"(?P<value>[^&#\s\"'<>]+)", re.IGNORECASE)
# "Bearer <credential>": a credential has a digit and 12+ characters, so "Bearer tokens expire" stays.
_BEARER = re.compile(r"(?P<lead>\b(?:Bearer|Basic)\s+)(?=[\w.~+/=-]*\d)(?P<value>[\w.~+/=-]{12,})", re.IGNORECASE)
_BEARER_HINT = re.compile(r"bearer|basic", re.IGNORECASE)
_URL_USERINFO = re.compile(r"(?P<lead>\b[a-z][\w+.-]*://)[^/@\s\"'<>]*@", re.IGNORECASE)
_SECRET_PARAM = re.compile(r"key|token|secret|password|passwd|pwd|auth|sig|signature|credential", re.IGNORECASE)

_known: set = set()
_masked: List[str] = []  # every spelling of every known secret, longest first (a secret within another goes whole)
_lock = threading.Lock()


def _spellings(secret: str) -> Iterable[str]:
    """The secret as written raw, inside a JSON string, and HTML-escaped."""
    return {secret, json.dumps(secret, ensure_ascii=False)[1:-1], html.escape(secret)}


def remember(*values: Any) -> None:
    """Treat each value (a key, a header value, a token) as a secret from now on, in this process."""
    global _masked
    found = {str(v) for v in values if v and len(str(v)) >= MIN_SECRET_LENGTH}
    with _lock:
        if found - _known:
            _known.update(found)
            _masked = sorted({s for secret in _known for s in _spellings(secret)}, key=len, reverse=True)


def remember_url(url: str) -> None:
    """Remember the credentials a URL carries: its password and its secret-named query values."""
    try:
        parts = urlsplit(url or "")
        remember(parts.password, *(v for k, v in parse_qsl(parts.query) if _SECRET_PARAM.search(k)))
    except ValueError:  # an unparseable URL carries nothing we can pick out; the patterns still apply
        pass


def redact_text(text: str) -> str:
    """`text` with every known secret value and every secret-shaped token replaced by ***."""
    if not text:
        return text
    for secret in _masked:  # read without the lock: remember() swaps in a new list whole
        if secret in text:
            text = text.replace(secret, MASK)
    # Each pattern only where its fixed part is in the text: plain prose (every row a run stores) then costs a
    # few substring tests, not three regex scans (a URL pattern tried at every word cost ~90 us a sample).
    if "=" in text:
        text = _QUERY_SECRET.sub(lambda m: m.group("lead") + MASK, text)
    if _BEARER_HINT.search(text):
        text = _BEARER.sub(lambda m: m.group("lead") + MASK, text)
    if "://" in text and "@" in text:
        text = _URL_USERINFO.sub(lambda m: m.group("lead"), text)
    return text


def redacted_json(value: Any) -> str:
    """`json.dumps(redact_value(value))` (non-ASCII kept, odd values as str), walked only when its text could
    hold something to mask: a row of plain prose (most of what a run stores) is encoded once and scanned."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    if not _could_hold_secret(text):
        return text
    return json.dumps(redact_value(value), ensure_ascii=False, default=str)


def _could_hold_secret(text: str) -> bool:
    """Whether the JSON text has a known secret (in any spelling, the JSON one included) or the fixed part of
    a secret-shaped pattern; when not, redact_text would change no string in it."""
    return ("=" in text or ("://" in text and "@" in text) or _BEARER_HINT.search(text) is not None
            or any(secret in text for secret in _masked))


def redact_value(value: Any) -> Any:
    """A copy of `value` (dicts, lists, tuples, strings, at any depth) with `redact_text` on every string."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {redact_text(k) if isinstance(k, str) else k: redact_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact_value(v) for v in value]
    return value


def _is_secret(key: Any, value: Any) -> bool:
    lowered = str(key).lower()
    hits = [marker for marker in SECRET_MARKERS if marker in lowered]
    # Token counts and limits (max_tokens, prompt_tokens) are numbers; a token secret is a string.
    if hits == ["token"] and isinstance(value, (int, float)) and not isinstance(value, bool):
        return False
    return bool(hits)


def sanitize_settings(value: Any) -> Any:
    """A copy of `value` without secrets, safe to store and export.

    Keys containing key/secret/token/password/authorization (any case) are dropped at any depth,
    except numeric "token" counts and limits such as max_tokens; every string passes through
    `redact_text` (credentials in URLs, `?key=…` query values, known secret values). A judge-cache
    path (`cache`) becomes True: no server path in an export.
    """
    if isinstance(value, dict):
        # "cache" held the judge-cache file's path in runs saved before it became a flag: a server
        # path is not for a report, so any string there becomes "a cache was used".
        return {str(k): bool(v) if str(k) == "cache" and isinstance(v, str) else sanitize_settings(v)
                for k, v in value.items() if not _is_secret(k, v)}
    if isinstance(value, (list, tuple)):
        return [sanitize_settings(v) for v in value]
    if isinstance(value, str):
        return redact_text(value)
    return value
