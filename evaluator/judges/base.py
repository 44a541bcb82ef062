"""What a judge is: anything with `generate(prompt) -> str`, and the optional parts ragmeter reads.

A judge may also offer (all optional, read through the helpers below, never probed elsewhere):
- `offline = True`: never called; every metric is scored by its heuristic;
- `usage() -> dict`: running totals (calls, cache_hits, tokens, retries, failures);
- `call_info() -> dict`: facts about this thread's last call (e.g. `retries`);
- `settings() -> dict`: how it is configured, safe to store (never a key);
- `close()`: release connections;
- keyword options of `generate`: `repeat=i` (the index of a repeated judgement of the same
  prompt, so a caching judge keeps one entry per repeat) and `top_logprobs=n` (ask for token
  probabilities, reported as `call_info()["logprobs"]`). They are passed only to a judge whose
  `generate` names them (see `accepts`).
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Mapping, Optional, Protocol, runtime_checkable
from ..environment import variables

# OpenAI's own endpoint, the default base URL (here, not in openai.py: pages read it without importing openai, ~1 s)
DEFAULT_BASE_URL = "https://api.openai.com/v1"
BASE_URL_ENV, KEY_ENV = "OPENAI_BASE_URL", "OPENAI_API_KEY"  # the operator's endpoint and its key


def environment_base_url(environ: Optional[Mapping[str, str]] = None) -> str:
    """The base URL of an OpenAI-compatible judge given none: $OPENAI_BASE_URL, else OpenAI's own."""
    env = variables() if environ is None else environ
    return (env.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def key_variable(base_url: str, api_key_env: Optional[str] = None, environ: Optional[Mapping[str, str]] = None) -> str:
    """The variable whose key an OpenAI-compatible judge sends to `base_url` ("" = none): the one named, else
    OPENAI_API_KEY for OpenAI's own URL or $OPENAI_BASE_URL's only, so a base URL someone typed never
    receives the operator's key. The judge (openai.py) and `ragmeter config` (team/settings.py) ask here."""
    if api_key_env:
        return api_key_env
    chosen = {DEFAULT_BASE_URL, environment_base_url(environ)}
    return KEY_ENV if base_url.rstrip("/") in chosen else ""


@runtime_checkable
class Judge(Protocol):
    """An LLM judge: one prompt in, the model's reply text out."""

    def generate(self, prompt: str) -> str: ...


def is_offline(judge: Any) -> bool:
    """A judge that declares `offline = True` is never called; heuristics score everything."""
    return bool(getattr(judge, "offline", False))


def call_info(judge: Any) -> Dict[str, Any]:
    """This thread's facts about the judge's last call ({} for judges that keep none)."""
    info = getattr(judge, "call_info", None)
    return dict(info() or {}) if callable(info) else {}


def accepts(judge: Any, option: str) -> bool:
    """Does this judge's `generate` take keyword `option` (by name or **kwargs)? A wrapper that passes
    options through to another judge answers for it with `accepts_option(option)`."""
    delegate = getattr(judge, "accepts_option", None)
    if callable(delegate):
        return bool(delegate(option))
    try:
        params = inspect.signature(judge.generate).parameters
    except (AttributeError, TypeError, ValueError):
        return False
    return option in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def report_unusable(judge: Any, reason: str, not_json: bool = False) -> None:
    """Tell a watching judge (judges/health.WatchedJudge) that its last reply had no score; a no-op for
    judges that do not watch, so a prose-answering judge fails the run's health check like an HTTP error."""
    report = getattr(judge, "reply_unusable", None)
    if callable(report):
        report(reason, not_json)


def judge_usage(judge: Any) -> Dict[str, Any]:
    """The judge's running usage totals as a dict ({} for judges that count nothing)."""
    usage: Any = getattr(judge, "usage", None)
    if callable(usage):
        usage = usage()
    if usage is not None and hasattr(usage, "to_dict"):
        usage = usage.to_dict()
    return dict(usage) if isinstance(usage, dict) else {}


def caches_prefix(judge: Any, prompt_tokens: int) -> Optional[bool]:
    """Whether this judge's server reuses a shared prompt prefix for prompts of about `prompt_tokens`:
    True (llama.cpp, vLLM, Ollama, LM Studio), False (OpenAI's own under its 1,024-token threshold, an
    OpenAI-compatible server not known to), None (a judge that does not say). False makes the judge mode
    "auto" group the calls, and separate calls carry only their own fields (metrics/scoring.py)."""
    ask = getattr(judge, "caches_prefix", None)
    if not callable(ask):
        return None
    answer = ask(prompt_tokens)
    return answer if isinstance(answer, bool) else None


def judge_settings(judge: Any) -> Dict[str, Any]:
    """How the judge is configured, safe to store ({} for judges that say nothing)."""
    settings = getattr(judge, "settings", None)
    return dict(settings() or {}) if callable(settings) else {}


def close_judge(judge: Any) -> None:
    """Close a judge that holds connections; a no-op for the others."""
    close = getattr(judge, "close", None)
    if callable(close):
        close()
