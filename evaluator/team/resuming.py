"""Which judge a shared server resumes a stored run with: never one whose key variable or base URL the run
itself names (a CI job may have written it), only the operator's [[judges]] entry for the same model and URL."""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Mapping, Optional

from ..config import Config
from ..errors import RagmeterError
from ..scoring.run_config import RunConfig


def resumed_config(config: Config, settings: Mapping[str, Any]) -> Optional[RunConfig]:
    """The judge to resume a stored run with. On a laptop None (the run's own settings). In team mode a stored
    run names its judge's key variable and base URL: the server must not read that variable for that URL, so
    the run resumes only with the [[judges]] entry of the same model and base URL, whose key variable is the
    operator's; RagmeterError when there is none."""
    if not config.team:
        return None
    stored = RunConfig.from_settings(dict(settings))
    if stored.offline:
        return stored
    for entry in config.judges:
        if entry.model == stored.model and entry.base_url.rstrip("/") == (stored.base_url or "").rstrip("/"):
            return replace(stored, api_key_env=entry.api_key_env, base_url=entry.base_url)
    raise RagmeterError(f"this run's judge ({stored.model}) is not one of this server's configured judges; "
                        "re-score its answers with one of them instead")
