"""How judge backends word a failure: the URL without its secrets, the reply cut to one short line.

Shared by the OpenAI-compatible judge and the Batch API client, so both name a server and quote
its reply the same way (and neither leaks a key kept in a URL).
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit


def display_url(url: str) -> str:
    """The URL without user:password@ or a query string, either of which may carry a secret."""
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")).rstrip("/")


def one_line(value: Any, limit: int = 300) -> str:
    """`value` as text on one line (whitespace runs collapsed), at most `limit` characters and an ellipsis."""
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit] + "…"
