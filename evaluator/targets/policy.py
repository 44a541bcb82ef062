"""What an HTTP target may call and which variables its headers may read (team mode's [targets]).

On a laptop (`TargetsConfig.restricted` false) a target may call any URL and read any variable:
the user owns both the machine and its environment. In team mode the URL must fall under one of
`[targets].allow`'s prefixes and a header's ${VAR} must be one of `allow_env`.

A URL is compared by its parts, never as a string: scheme, host (lower-cased) and port (the
scheme's default filled in) must be equal, and its path must start with the prefix's path at a
segment boundary. A URL with user info (`http://allowed.example@evil/`), a backslash, or a dot
segment (`/api/../admin`, also percent-encoded once or twice, or written with look-alike dots
such as `‥`) is refused outright, since servers and clients
disagree about what those mean. Redirects are checked the same way before they are followed.
"""
from __future__ import annotations

import re
import unicodedata
from typing import Optional, Sequence, Tuple
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import TargetConfigError

_DEFAULT_PORTS = {"http": 80, "https": 443}
_DOTS = set(".\u2024\u2025\u2026\uff0e\ufe52\u3002")  # a segment of only these reads as dots somewhere
NOT_ALLOWED = "is not allowed here"


def _parts(url: str) -> Optional[Tuple[str, str, int, str]]:
    """(scheme, host, port, path) of an http(s) URL, or None when it is not one we can compare safely."""
    if "\\" in url or any(ord(c) < 33 for c in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # a port that is not a number, a bad IPv6 literal
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or "@" in parts.netloc:
        return None
    path = parts.path or "/"
    if _dot_segments(path):
        return None
    return scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[scheme], path


def _dot_segments(path: str) -> bool:
    """Does `path` hold a dot segment, or something a server may read as one? Encoded once (`%2e%2e`)
    or twice (`%252e%252e`: any `%25` is refused, since a proxy and a server may each decode once),
    or written with look-alikes NFKC makes into dots (`‥`, full-width `．．`)."""
    decoded = unquote(path)
    if "%" in decoded:  # a percent sign that survives one decoding was encoded twice
        return True
    segments = unicodedata.normalize("NFKC", decoded).split("/")
    return any(s.strip() in (".", "..") or (s and set(s) <= _DOTS) for s in segments)


def check_prefix(prefix: str) -> str:
    """'' when `prefix` can be an allow-list entry, else what is wrong with it (for the config error)."""
    parts = _parts(prefix)
    if parts is None:
        return "is not an http:// or https:// URL without user info, backslashes or dot segments"
    if urlsplit(prefix).query or urlsplit(prefix).fragment:
        return "must not have a query string or fragment"
    return ""


def _under(path: str, prefix_path: str) -> bool:
    if prefix_path.endswith("/"):
        return path.startswith(prefix_path)
    return path == prefix_path or path.startswith(prefix_path + "/")


def url_allowed(url: str, allow: Sequence[str]) -> bool:
    """Whether `url` falls under one of the `allow` prefixes (compared part by part, see above)."""
    got = _parts(url)
    if got is None:
        return False
    for prefix in allow:
        want = _parts(prefix)
        if want is not None and got[:3] == want[:3] and _under(got[3], want[3]):
            return True
    return False


def public_url(url: str) -> str:
    """The URL without credentials or query string (which may carry an API key)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "…" if parts.query else "", ""))


def check_url(url: str, policy: object) -> None:
    """TargetConfigError unless `policy` (a config.TargetsConfig) lets a target call `url`."""
    if getattr(policy, "restricted", False) and not url_allowed(url, getattr(policy, "allow", ())):
        raise TargetConfigError(f"the URL {public_url(url)} {NOT_ALLOWED}: a target may only call URLs under "
                                "[targets].allow in the server's configuration")


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def check_variables(value: str, policy: object, header: str = "") -> None:
    """TargetConfigError for the first ${VAR} in `value` that `policy` does not let a header read.

    The message says only that the name is not allowed, never whether it is set: in team mode a
    visitor must not learn which variables the server has.
    """
    if not getattr(policy, "restricted", False):
        return
    allowed = set(getattr(policy, "allow_env", ()))
    for name in _VAR.findall(value):
        if name not in allowed:
            where = f"header {header} uses " if header else ""
            raise TargetConfigError(f"{where}${{{name}}}, which {NOT_ALLOWED}: headers may only use the "
                                    "variables in [targets].allow_env of the server's configuration")
