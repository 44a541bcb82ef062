"""The process environment, read in one place (the low half of team/settings.py's resolver).

Two kinds of variable are read here, and nowhere else in the library:

- ragmeter's own (RAGMETER_HISTORY, RAGMETER_JUDGE_CACHE, OPENAI_BASE_URL, ...): `read(name)`, the value
  stripped, "" when unset. team/settings.py resolves them against flags and the team file; the layers
  below it (judges, store) ask here for their no-argument defaults.
- those whose *name* is user data (a judge's api_key_env, a target header's ${VAR}, a collector's
  token_env and webhook_env, the proxy's secret): `secret(name)`, the value as set, None when unset.
  A secret's value goes to the one call that needs it, never into a Setting, a log or a file.

`require_key` is the one "the key is not set on this worker" check: a run, a generation and a Ray
partition each score on a machine other than where they were started, and each refuses the same way.
It lives here, in the core, because the engines sit below the run path and both must ask it.
"""
from __future__ import annotations

import os
import socket
from typing import Dict, Mapping, Optional

from .errors import JudgeConfigError


def variables() -> Mapping[str, str]:
    """The whole environment, for a resolver that takes `environ` (tests pass a dict instead)."""
    return os.environ


def read(name: str) -> str:
    """One of ragmeter's own variables, stripped; "" when unset or blank."""
    return os.environ.get(name, "").strip()


def secret(name: str) -> Optional[str]:
    """The value of a variable a user named for a secret, exactly as set; None when unset (or no name)."""
    return os.environ.get(name) if name else None


def has_secret(name: str) -> bool:
    """Whether the variable `name` holds something other than blanks (a key set to "" is not a key)."""
    return bool((secret(name) or "").strip())


def for_child(**extra: str) -> Dict[str, str]:
    """The environment a child process starts with: this one, plus `extra` (which wins)."""
    return dict(os.environ, **extra)


def require_key(variable: str, whose: str, then: str) -> None:
    """JudgeConfigError when `variable` (where `whose` key is read) is unset on this machine: a judge built
    without it would fail every call and score the whole run on heuristic fallbacks. `then` says where to
    set it ("in the worker's environment, then resume the run")."""
    if variable and not has_secret(variable):
        raise JudgeConfigError(f"{whose} reads its API key from the environment variable {variable}, which is "
                               f"not set on this worker ({socket.gethostname()}); set {variable} {then}")
