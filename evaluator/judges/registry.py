"""The judge registry: a plain dict of kind -> JudgeEntry, and `register_judge()` to add one.

    from evaluator.judges.registry import JudgeEntry, register_judge
    register_judge(JudgeEntry("gateway", "Company gateway", factory=make_gateway_judge, needs_key=True,
                              key_env="GATEWAY_KEY"))
    RunConfig(judge="gateway", model="m").build_judge()

A factory takes the `RunConfig` and the API key ("" when none) and returns a judge: anything with
`generate(prompt) -> str`. Unless it returns a `ResilientJudge` (or an offline judge) itself,
`build_judge` wraps it in one, so every judge gets retries, Retry-After, the AIMD limiter, the
cache and usage counting (judges/resilient.py); the run's early stop watches it like any other.

The built-in `offline` and `openai` entries are registered at import, through the same door.
Packages register more through the entry-point group `ragmeter.judges`; in their pyproject.toml:

    [project.entry-points."ragmeter.judges"]
    gateway = "ragmeter_gateway:JUDGE"

The object named may be a JudgeEntry, a list of them, or a function returning either. Plugins
load on the first lookup of a kind that is not built in (or `judge_kinds()`); one that fails to
load is reported (`judge_plugin_errors()`, and in the unknown-kind error), never a crash.
"""
from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Dict, List, Tuple

from ..errors import JudgeConfigError
from .offline import OfflineJudge

log = logging.getLogger("ragmeter")

PLUGIN_GROUP = "ragmeter.judges"
OFFLINE, OPENAI = "offline", "openai"
# (config, api_key) -> judge. `config` is an evaluator.scoring.run_config.RunConfig: typed Any here because run_config.py
# imports this module (imports flow one way: judges, then scoring).
RunConfigLike = Any
JudgeFactory = Callable[[RunConfigLike, str], Any]


@dataclass(frozen=True)
class JudgeEntry:
    """One kind of judge: how to build it from a RunConfig, and what a picker shows and asks for.

    `needs_key`: it calls a service that wants an API key, read from `key_env` unless one is given;
    `needs_model`: a model name must be chosen; `json_mode`, `logprobs`, `batch_api`: what it supports
    (a strict JSON output mode, token probabilities for G-Eval, the OpenAI Batch API)."""

    kind: str
    label: str
    factory: JudgeFactory
    needs_key: bool = False
    key_env: str = ""
    needs_model: bool = False
    json_mode: bool = False
    logprobs: bool = False
    batch_api: bool = False

    @property
    def offline(self) -> bool:
        return self.kind == OFFLINE


def _offline(config: RunConfigLike, api_key: str) -> Any:
    return OfflineJudge()


def _openai(config: RunConfigLike, api_key: str) -> Any:
    from .openai import OpenAIJudge  # the openai client is only imported for a real judge

    return OpenAIJudge(config.model, base_url=config.base_url or None, api_key=api_key or None,
                       api_key_env=config.api_key_env or None, cache=config.cache or None,
                       max_concurrency=config.workers, temperature=float(config.temperature or 0.0),
                       timeout=float(getattr(config, "judge_timeout", 0) or 60.0))


JUDGE_REGISTRY: Dict[str, JudgeEntry] = {}


@dataclass
class _Plugins:
    loaded: bool = False  # plugins load once per process (load_judge_plugins(reload=True) loads them again)
    errors: List[str] = field(default_factory=list)


_plugins = _Plugins()


def register_judge(entry: JudgeEntry, *, replace: bool = False) -> JudgeEntry:
    """Add `entry` so its kind can be chosen, and return it; a kind already taken is an error
    unless `replace=True`."""
    if not isinstance(entry, JudgeEntry):
        raise TypeError(f"register_judge() takes a JudgeEntry, not {type(entry).__name__}")
    current = JUDGE_REGISTRY.get(entry.kind)
    if current is not None and current is not entry and not replace:
        raise ValueError(f"a judge kind {entry.kind!r} is already registered; pass replace=True to replace it")
    JUDGE_REGISTRY[entry.kind] = entry
    return entry


register_judge(JudgeEntry(OFFLINE, "Offline (no API key)", _offline))
# No key_env: OpenAIJudge reads OPENAI_API_KEY itself, and only for OpenAI's (or $OPENAI_BASE_URL's) URL,
# so a base URL someone typed never receives the operator's key.
register_judge(JudgeEntry(OPENAI, "OpenAI-compatible API", _openai, needs_key=True, needs_model=True,
                          json_mode=True, logprobs=True, batch_api=True))
_BUILTIN_KINDS = frozenset(JUDGE_REGISTRY)


def _entries_of(provided: Any) -> List[JudgeEntry]:
    """The JudgeEntries a plugin's entry point names: one, a list, or a function returning either."""
    if callable(provided) and not isinstance(provided, JudgeEntry):
        provided = provided()
    items = [provided] if isinstance(provided, JudgeEntry) else list(provided)
    bad = [type(e).__name__ for e in items if not isinstance(e, JudgeEntry)]
    if bad:
        raise TypeError(f"expected JudgeEntry objects, got {', '.join(bad)}")
    return items


def load_judge_plugins(*, reload: bool = False) -> List[str]:
    """Register every judge offered under `ragmeter.judges`; returns the problems met (a plugin that
    fails to import, offers something that is not a JudgeEntry, or reuses a built-in kind)."""
    if _plugins.loaded and not reload:
        return list(_plugins.errors)
    _plugins.loaded, _plugins.errors = True, []
    for ep in entry_points(group=PLUGIN_GROUP):
        try:
            for entry in _entries_of(ep.load()):
                if entry.kind in _BUILTIN_KINDS:
                    raise ValueError(f"judge kind {entry.kind!r} is a built-in judge's kind")
                register_judge(entry, replace=True)  # a re-installed plugin replaces its older self
        except Exception as exc:  # a broken plugin must not break ragmeter
            problem = f"judge plugin {ep.name!r} ({ep.value}) was not loaded: {type(exc).__name__}: {exc}"
            _plugins.errors.append(problem)
            log.warning(problem)
    return list(_plugins.errors)


def judge_plugin_errors() -> List[str]:
    """Why judge plugins failed to load (empty when all loaded)."""
    return load_judge_plugins()


def judge_kinds() -> List[str]:
    """Every kind that can be chosen, in registry order (built-ins, then plugins)."""
    load_judge_plugins()
    return list(JUDGE_REGISTRY)


def get_judge(kind: str) -> JudgeEntry:
    """The registered entry for `kind`; JudgeConfigError naming the registered kinds otherwise."""
    found = JUDGE_REGISTRY.get(kind)
    if found is not None:
        return found
    problems = load_judge_plugins()
    if kind in JUDGE_REGISTRY:
        return JUDGE_REGISTRY[kind]
    hint = f" ({'; '.join(problems)})" if problems else ""
    raise JudgeConfigError(f"Unknown judge {kind!r}; registered judges: {', '.join(judge_kinds())}{hint}. "
                           f"A judge package registers more under the {PLUGIN_GROUP!r} entry points.")


def build(entry: JudgeEntry, config: RunConfigLike, api_key: str = "") -> Any:
    """The judge `entry` makes for `config`, in a ResilientJudge unless it is one (or offline) already.

    The key is `api_key`, else the variable `config.api_key_env` (or else the entry's `key_env`) names;
    the variable is read for this entry only, so one judge's key never reaches another."""
    from .base import is_offline
    from .resilient import ResilientJudge

    env = config.api_key_env or entry.key_env
    key = api_key or (os.environ.get(env, "") if env else "")
    try:
        judge = entry.factory(config, key)
    except JudgeConfigError:
        raise
    except Exception as exc:  # a plugin's own failure: named, not a traceback
        raise JudgeConfigError(f"The {entry.kind!r} judge could not start: {type(exc).__name__}: {exc}") from exc
    if judge is None or not callable(getattr(judge, "generate", None)):
        raise JudgeConfigError(f"The {entry.kind!r} judge's factory returned {type(judge).__name__}, "
                               "not a judge (an object with generate(prompt) -> str)")
    if isinstance(judge, ResilientJudge) or is_offline(judge):
        return judge
    return ResilientJudge(judge, scope=_scope(entry, config), max_concurrency=config.workers,
                          cache=config.cache or None)


def _scope(entry: JudgeEntry, config: RunConfigLike) -> Tuple[str, str, float]:
    """What keys a plugin judge's cache entries besides the prompt: its kind, endpoint, model, temperature."""
    return (f"{PLUGIN_GROUP}:{entry.kind}:{config.base_url}", config.model, float(config.temperature or 0.0))
