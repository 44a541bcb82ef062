"""Removing secrets from settings before they are stored, exported or shown.

Keys, tokens and passwords must never reach the history, an export or a log; this is the one
place that decides what counts as a secret.
"""
from __future__ import annotations

import re
from typing import Any

# A settings key containing any of these (case-insensitive) is dropped, at any depth.
SECRET_MARKERS = ("key", "secret", "token", "password", "authorization")


def _is_secret(key: Any, value: Any) -> bool:
    lowered = str(key).lower()
    hits = [marker for marker in SECRET_MARKERS if marker in lowered]
    # Token counts and limits (max_tokens, prompt_tokens) are numbers; a token secret is a string.
    if hits == ["token"] and isinstance(value, (int, float)) and not isinstance(value, bool):
        return False
    return bool(hits)


_URL_USERINFO = re.compile(r"^(\w+://)[^/@\s]*@")


def sanitize_settings(value: Any) -> Any:
    """A copy of `value` without secrets, safe to store and export.

    Keys containing key/secret/token/password/authorization (any case) are dropped at any depth,
    except numeric "token" counts and limits such as max_tokens; credentials embedded in URLs
    (scheme://user:pass@host) are removed.
    """
    if isinstance(value, dict):
        return {str(k): sanitize_settings(v) for k, v in value.items() if not _is_secret(k, v)}
    if isinstance(value, (list, tuple)):
        return [sanitize_settings(v) for v in value]
    if isinstance(value, str):
        return _URL_USERINFO.sub(r"\1", value)
    return value
