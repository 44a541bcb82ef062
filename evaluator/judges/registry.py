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

The object named may be a JudgeEntry, a list of them, or a function returning either; evaluator/plugins.py
loads them (on the first lookup of a kind that is not built in, or `judge_kinds()`) and reports one
that fails (`judge_plugin_errors()`, and in the unknown-kind error), never a crash.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Tuple

from ..errors import JudgeConfigError
from ..plugins import PluginGroup
from .offline import OfflineJudge
from ..environment import secret

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
                       timeout=float(getattr(config, "judge_timeout", 0) or 60.0),
                       max_tokens=int(getattr(config, "judge_max_tokens", 0) or 0) or None)


JUDGE_REGISTRY: Dict[str, JudgeEntry] = {}
JUDGE_PLUGINS: PluginGroup[JudgeEntry] = PluginGroup(PLUGIN_GROUP, "judge", JudgeEntry, JUDGE_REGISTRY,
                                                     lambda e: e.kind)
# register_judge(entry, replace=False) -> entry: a kind already taken is an error unless replace=True.
register_judge = JUDGE_PLUGINS.register
load_judge_plugins = JUDGE_PLUGINS.load  # (reload=False) -> the problems met; plugins load once per process
judge_plugin_errors = JUDGE_PLUGINS.load  # () -> why judge plugins failed to load (empty when all loaded)
judge_kinds = JUDGE_PLUGINS.names  # every kind that can be chosen: built-ins, then plugins

# The built-ins come in through the door a plugin's entries use (as simonw/llm's own models do): a new
# built-in backend is its factory plus one entry here. No key_env for openai: OpenAIJudge reads
# OPENAI_API_KEY itself, and only for OpenAI's (or $OPENAI_BASE_URL's) URL, so a base URL someone typed
# never receives the operator's key.
BUILTIN_JUDGES = [
    JudgeEntry(OFFLINE, "Offline (no API key)", _offline),
    JudgeEntry(OPENAI, "OpenAI-compatible API", _openai, needs_key=True, needs_model=True, json_mode=True,
               logprobs=True, batch_api=True),
]
JUDGE_PLUGINS.register_builtin(BUILTIN_JUDGES)


def get_judge(kind: str) -> JudgeEntry:
    """The registered entry for `kind`; JudgeConfigError naming the registered kinds otherwise."""
    found = JUDGE_PLUGINS.find(kind)
    if found is not None:
        return found
    raise JudgeConfigError(f"Unknown judge {kind!r}; registered judges: {', '.join(judge_kinds())}"
                           f"{JUDGE_PLUGINS.hint()}. "
                           f"A judge package registers more under the {PLUGIN_GROUP!r} entry points.")


def build(entry: JudgeEntry, config: RunConfigLike, api_key: str = "") -> Any:
    """The judge `entry` makes for `config`, in a ResilientJudge unless it is one (or offline) already.

    The key is `api_key`, else the variable `config.api_key_env` (or else the entry's `key_env`) names;
    the variable is read for this entry only, so one judge's key never reaches another."""
    from .base import is_offline
    from .resilient import ResilientJudge

    env = config.api_key_env or entry.key_env
    key = api_key or secret(env) or ""
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
