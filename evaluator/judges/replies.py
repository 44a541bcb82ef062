"""What a judge's reply is before a metric reads it: thinking stripped, bad replies named, the server known.

- `strip_thinking`: reasoning models write `<think>…</think>` (DeepSeek-R1, Qwen3, QwQ) before their
  answer; the thinking is cut off before parsing (a JSON example inside it must never be read as the
  verdict) and counted apart. A `<think>` that never closes (the model thought until the completion
  cap) leaves no answer at all: `Visible.endless` says so, and the reply is named "thinking never ended".
- `bad_reply_kind`: the name a reply with no score is counted under in usage (`bad_replies`) and in the
  run's last lines (usage "bad:<kind>"): "empty", "html", "thinking never ended", "wrong schema",
  "not json", "truncated", "too large".
- `family`: which serving stack a base URL is (llama.cpp, ollama, vllm, lmstudio, openai, or "" when not
  known), read once per server from its `/models` list (`owned_by`) and remembered for the process with
  the structured-output mode that server accepted (`remember_mode`), so the second judge built for the
  same server neither probes nor steps down again.
"""
from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any, Dict, Optional, Tuple

from .messages import display_url

# `<think>` and `<thinking>`, any case; the answer is what follows the last closing tag.
_OPEN = re.compile(r"<(think|thinking|reasoning)>", re.IGNORECASE)
_CLOSE = re.compile(r"</(think|thinking|reasoning)>", re.IGNORECASE)
_HTML = re.compile(r"^\s*(<!doctype html|<html|<head|<body|<\?xml)", re.IGNORECASE)

EMPTY, HTML, ENDLESS, WRONG_SCHEMA, NOT_JSON, TOO_LARGE = (
    "empty", "html", "thinking never ended", "wrong schema", "not json", "too large")
TRUNCATED = "truncated"
BAD_KINDS = (EMPTY, HTML, ENDLESS, WRONG_SCHEMA, NOT_JSON, TRUNCATED, TOO_LARGE)
BAD_PREFIX = "bad:"  # usage key of each kind's count: "bad:empty"


@dataclass(frozen=True)
class Visible:
    """A reply split into its answer (`text`) and its thinking; `endless`: a `<think>` never closed."""

    text: str
    thinking: str = ""
    endless: bool = False


def strip_thinking(reply: str) -> Visible:
    """The reply without its `<think>…</think>` blocks (module docstring)."""
    if "<" not in reply or not _OPEN.search(reply):
        closes = list(_CLOSE.finditer(reply))  # some servers strip the opening tag only
        if not closes:
            return Visible(reply)
        last = closes[-1]
        return Visible(reply[last.end():].strip(), reply[:last.start()])
    thinking, answer, rest = [], [], reply
    while True:
        opened = _OPEN.search(rest)
        if opened is None:
            answer.append(rest)
            break
        answer.append(rest[:opened.start()])
        closed = _CLOSE.search(rest, opened.end())
        if closed is None:  # thought until the cap: no answer after it
            thinking.append(rest[opened.end():])
            text = "".join(answer).strip()
            return Visible(text, "".join(thinking), endless=not text)
        thinking.append(rest[opened.end():closed.start()])
        rest = rest[closed.end():]
    return Visible("".join(answer).strip(), "".join(thinking))


def bad_reply_kind(reply: Optional[str], *, endless: bool = False, json_found: bool = False) -> str:
    """The name of a reply that gave no score (BAD_KINDS): what the run's last lines count it under."""
    if endless:
        return ENDLESS
    text = (reply or "").strip()
    if not text:
        return EMPTY
    if _HTML.match(text):
        return HTML
    return WRONG_SCHEMA if json_found else NOT_JSON


def bad_reply_note(usage: Dict[str, Any]) -> str:
    """'; bad replies: 2 empty, 1 html' for a usage dict that counted some, else ''."""
    shown = [f"{usage[BAD_PREFIX + kind]} {kind}" for kind in BAD_KINDS if usage.get(BAD_PREFIX + kind)]
    repairs = usage.get("repairs") or 0
    note = f"; bad replies: {', '.join(shown)}" if shown else ""
    if repairs:
        note += f"; {repairs} repair attempt{'s' if repairs != 1 else ''} ({usage.get('repaired', 0)} repaired)"
    thinking = usage.get("reasoning_tokens") or 0
    return note + (f"; {thinking} thinking tokens (not parsed)" if thinking else "")


# -- which server, and which structured-output mode it took ---------------------------------------
LLAMA_CPP, OLLAMA, VLLM, LMSTUDIO, OPENAI_HOSTED = "llama.cpp", "ollama", "vllm", "lmstudio", "openai"
# /models `owned_by` -> family: llama.cpp's server says "llamacpp", llama-cpp-python's "me".
_OWNERS = {"llamacpp": LLAMA_CPP, "me": LLAMA_CPP, "library": OLLAMA, "ollama": OLLAMA, "vllm": VLLM,
           "organization_owner": LMSTUDIO, "openai": OPENAI_HOSTED, "system": OPENAI_HOSTED,
           "openai-internal": OPENAI_HOSTED}
# The structured-output mode each family is asked in first (judges/openai.py spells the requests):
# llama.cpp's grammar from a JSON schema (response_format json_object + schema: no prompt tokens, and a
# schema with maxItems/maxLength bounds the reply); json_schema for vLLM, LM Studio and Ollama (which
# turns it into its `format`); json_object for OpenAI's own models (strong enough; no schema tokens).
FIRST_MODE = {LLAMA_CPP: "grammar", OLLAMA: "schema", VLLM: "schema", LMSTUDIO: "schema", OPENAI_HOSTED: "object"}

# The families whose servers keep a prompt's computed prefix and reuse it for the next prompt that begins the
# same way (llama.cpp's cache_prompt and slot similarity, vLLM's prefix caching, Ollama's and LM Studio's
# llama.cpp runners): the judge mode "auto" asks them one call per metric (metrics/combined.py).
PREFIX_CACHING = frozenset((LLAMA_CPP, VLLM, OLLAMA, LMSTUDIO))

_lock = threading.Lock()
_learned: Dict[Tuple[str, str], str] = {}  # (server, "family" | "mode") -> what this process found out


def family_of(models: Any) -> str:
    """The family a `/models` reply names (its first model's `owned_by`), "" when it names none we know."""
    data = models.get("data") if isinstance(models, dict) else None
    if isinstance(data, list):
        for item in data:
            owner = str(item.get("owned_by") or "").lower() if isinstance(item, dict) else ""
            if owner in _OWNERS:
                return _OWNERS[owner]
    return ""


def known_family(base_url: str) -> Optional[str]:
    """The family found for this server earlier in the process (None: not probed yet)."""
    return _known(base_url, "family")


def remember_family(base_url: str, family: str) -> None:
    _remember(base_url, "family", family)


def known_mode(base_url: str) -> Optional[str]:
    """The structured-output mode this server settled on earlier in the process, if any."""
    return _known(base_url, "mode")


def remember_mode(base_url: str, mode: str) -> None:
    _remember(base_url, "mode", mode)


def _known(base_url: str, fact: str) -> Optional[str]:
    with _lock:
        return _learned.get((_key(base_url), fact))


def _remember(base_url: str, fact: str, value: str) -> None:
    with _lock:
        _learned[(_key(base_url), fact)] = value


def forget_servers() -> None:
    """Forget every server's family and mode (tests that start servers on reused ports)."""
    with _lock:
        _learned.clear()


def _key(base_url: str) -> str:
    return display_url(base_url).rstrip("/")
