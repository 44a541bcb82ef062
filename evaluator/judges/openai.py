"""OpenAIJudge: the shipped judge, for any server that speaks OpenAI's chat-completions API.

OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio and llama.cpp's server all work. What it adds
over a bare `openai.OpenAI` call:

- retries it does itself (the client's own are off) so it can count them, honour
  `Retry-After` / `retry-after-ms`, and tell the concurrency limiter about throttling:
  429, 5xx, timeouts, dropped connections and malformed bodies are retried with exponential
  backoff and jitter; 400/401/403/404/422 fail at once (kind "rejected"); a refused connection
  or an unknown host is retried only briefly (kind "unreachable", about 2 s in all) so a dead
  judge is known in seconds; after the last try it raises `JudgeError`, which the evaluator
  turns into a visible heuristic fallback (and its JudgeHealth into an early stop);
- an `AIMDLimiter` around every HTTP call, so concurrent samples back off together;
- JSON output where the server supports it: `json_object` first, then none, stepping down
  once per judge when a server rejects it. `json_mode="schema"` sends a (loose) JSON schema
  instead; "auto" does not, because a schema is re-sent with every call and costs ~57 prompt
  tokens each time for no stricter output (llama.cpp's server also answers HTTP 500 to
  `json_schema` while it accepts `json_object`);
- token counts from each reply's `usage` (estimated from text when a server omits it);
- an optional SQLite reply cache (`cache=` a path) keyed by (base_url, model, temperature, prompt,
  and the repeat index and logprobs request when there are any);
- token probabilities on request (`generate(prompt, top_logprobs=5)`, then `call_info()["logprobs"]`)
  for probability-weighted (G-Eval) scores; servers that send none leave it None.

The API key is used for requests and nothing else: it is not in `repr`, `name`, `settings()`,
error messages, logs or the cache. It goes only to the base URL it belongs to: `api_key`, else
the variable named by `api_key_env`, else OPENAI_API_KEY, and that last one only when the base
URL is OpenAI's own or the operator's $OPENAI_BASE_URL, never a base URL someone typed (which
could be theirs: README "Which key goes where").
"""
from __future__ import annotations

import email.utils
import http
import json
import logging
import os
import random
import socket
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit

import openai

from ..errors import JudgeConfigError, JudgeError
from .messages import display_url, one_line
from ..text import estimate_tokens
from .cache import JudgeCache, cache_key
from .ratelimit import ERROR, SUCCESS, THROTTLE, AIMDLimiter

log = logging.getLogger("ragmeter")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
KEY_PLACEHOLDER = "not-needed"  # local servers (llama.cpp, Ollama, vLLM) accept any key
JSON_MODES = ("auto", "schema", "object", "none")
BACKOFF_BASE = 0.5  # seconds before the first retry; doubles each time
BACKOFF_CAP = 30.0
MAX_RETRY_AFTER = 120.0  # a server asking for longer is capped: the run must finish
# Nothing listening / no such host: a few quick tries cover a server still starting up, and a
# dead judge is reported in seconds, not after minutes of backoff.
UNREACHABLE_BACKOFF = 0.25
UNREACHABLE_CAP = 1.0
# Hosted services that always need a key; any other base_url may be a keyless local server.
_KEYED_HOSTS = ("api.openai.com", ".openai.azure.com")
# Words in an error body that show the server rejected the response_format we sent.
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "schema", "grammar")

# Loose on purpose: prompts ask for metric-specific shapes (claim lists, per-context verdicts),
# so the schema only pins the common fields and allows everything else.
JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"reasoning": {"type": "string"}, "score": {"type": "number"}},
    "additionalProperties": True,
}
_RESPONSE_FORMATS: Dict[str, Optional[dict]] = {
    "schema": {"type": "json_schema",
               "json_schema": {"name": "ragmeter_judgement", "schema": JUDGE_SCHEMA, "strict": False}},
    "object": {"type": "json_object"},
    "none": None,
}
_NEXT_MODE = {"schema": "object", "object": "none"}


@dataclass
class _CallInfo:
    retries: int = 0
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    json_mode: str = "none"
    top_logprobs: int = 0  # how many alternatives per token were asked for (0: no logprobs asked)
    logprobs: Optional[list] = None  # [[token, [[alternative, logprob], ...]], ...] when the server sent them


@dataclass
class _Failure:
    """Why one HTTP attempt failed and what to do about it."""

    message: str
    kind: str  # "retry", "throttle" (retry and slow down), "unreachable" (retry briefly), "fatal" or "downgrade"
    retry_after: Optional[float] = None
    status: Optional[int] = None


class _MalformedReply(Exception):
    """A 2xx answer that is not a chat completion (bad JSON, missing fields)."""


class OpenAIJudge:
    """A judge backed by an OpenAI-compatible chat-completions endpoint.

    `generate(prompt)` is thread-safe and returns the reply text; `call_info()` describes the
    last call on the calling thread, `usage()` the running totals.
    """

    offline = False

    def __init__(self, model: str, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 api_key_env: Optional[str] = None, max_retries: int = 3, timeout: float = 60.0, cache: str | os.PathLike | None = None,
                 temperature: float = 0.0, max_concurrency: int = 16, json_mode: str = "auto",
                 max_tokens: Optional[int] = None, http_client: Any = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not model:
            raise JudgeConfigError("No model name: pass model=..., e.g. 'gpt-4o-mini' or the name your server serves.")
        if json_mode not in JSON_MODES:
            raise JudgeConfigError(f"json_mode must be one of {JSON_MODES}, not {json_mode!r}")
        if max_retries < 0 or timeout <= 0 or max_concurrency < 1:
            raise JudgeConfigError("max_retries must be >= 0, timeout > 0 and max_concurrency >= 1")
        self.model, self.temperature, self.timeout = model, float(temperature), float(timeout)
        self.max_retries, self.max_concurrency, self.max_tokens = max_retries, max_concurrency, max_tokens
        self.json_mode = json_mode
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self._shown_url = display_url(self.base_url)
        self.name = f"{model} @ {self._shown_url}"
        self._key = _resolve_key(api_key, self.base_url, api_key_env)
        self._sleep, self._random = sleep, random.Random()
        self._mode = "object" if json_mode == "auto" else json_mode
        self._lock = threading.Lock()
        self._local = threading.local()
        self._totals = dict.fromkeys(("calls", "requests", "cache_hits", "prompt_tokens",
                                      "completion_tokens", "retries", "failures", "rate_limited"), 0)
        self.limiter = AIMDLimiter(max_concurrency, clock=clock, sleep=sleep)
        self._cache = JudgeCache(cache) if cache is not None else None
        self._owns_http = http_client is None
        self._client = openai.OpenAI(base_url=self.base_url, api_key=self._key, max_retries=0,
                                     timeout=self.timeout, http_client=http_client)

    # -- the judge interface ---------------------------------------------------------------------
    def generate(self, prompt: str, *, repeat: int = 0, top_logprobs: int = 0) -> str:
        """The judge's reply to `prompt` (from the cache when present); raises JudgeError.

        `repeat` is the index of a repeated judgement of the same prompt: each has its own cache
        entry, so a cached re-run of a k-repeat run is still free. `top_logprobs` > 0 asks for the
        token probabilities too (see call_info()["logprobs"]).
        """
        info = _CallInfo(json_mode=self._mode, top_logprobs=top_logprobs)
        self._local.info = info
        key = ""
        if self._cache is not None:
            key = self._cache_key(prompt, repeat, top_logprobs)
            hit = _unpack(self._cache.get(key), info)
            if hit is not None:
                info.cached = True
                self._add(cache_hits=1)
                return hit
        text = self._call_with_retries(prompt, info)
        if self._cache is not None:
            self._cache.put(key, _pack(text, info) if text.strip() else text)
        return text

    def call_info(self) -> dict:
        """The last generate() on this thread: retries, cached, prompt/completion tokens, json_mode
        (and top_logprobs, logprobs when the call asked for token probabilities)."""
        info = getattr(self._local, "info", None) or _CallInfo(json_mode=self._mode)
        data = asdict(info)
        if not info.top_logprobs:
            del data["top_logprobs"], data["logprobs"]
        return data

    def usage(self) -> dict:
        """Running totals. `calls` counts HTTP requests answered with a completion, `requests` every
        HTTP attempt; `rate_limited` the 429s; `failures` the generate() calls that raised."""
        with self._lock:
            return dict(self._totals)

    def settings(self) -> dict:
        """How this judge is configured, safe to store and export (never the API key)."""
        return {"model": self.model, "base_url": self._shown_url, "temperature": self.temperature,
                "timeout": self.timeout, "max_retries": self.max_retries,
                "max_concurrency": self.max_concurrency, "json_mode": self.json_mode,
                "max_tokens": self.max_tokens,
                "cache": str(self._cache.path) if self._cache is not None else None}

    # -- what the Batch API (judges/batch.py) reuses ---------------------------------------------------
    @property
    def client(self) -> openai.OpenAI:
        """The `openai` client this judge calls (its files and batches APIs serve `--batch`)."""
        return self._client

    def request_body(self, prompt: str, *, top_logprobs: int = 0) -> dict:
        """The chat-completions body generate() would send for `prompt` now."""
        return self._request(prompt, self._mode, top_logprobs)

    def cached(self, prompt: str, *, repeat: int = 0, top_logprobs: int = 0) -> Optional[Tuple[str, Optional[list]]]:
        """(reply, token logprobs or None) that generate() would take from the cache, else None."""
        if self._cache is None:
            return None
        info = _CallInfo(top_logprobs=top_logprobs)
        text = _unpack(self._cache.get(self._cache_key(prompt, repeat, top_logprobs)), info)
        return None if text is None else (text, info.logprobs)

    def remember(self, prompt: str, reply: str, *, repeat: int = 0, top_logprobs: int = 0,
                 logprobs: Optional[list] = None) -> None:
        """Cache a reply obtained elsewhere (a batch) as generate() would have cached it."""
        if self._cache is not None and reply.strip():
            info = _CallInfo(top_logprobs=top_logprobs, logprobs=logprobs)
            self._cache.put(self._cache_key(prompt, repeat, top_logprobs), _pack(reply, info))

    def _cache_key(self, prompt: str, repeat: int, top_logprobs: int) -> str:
        return cache_key(self.base_url, self.model, self.temperature, prompt, repeat=repeat,
                         top_logprobs=top_logprobs)

    def close(self) -> None:
        """Close the HTTP client (unless it was passed in) and the cache."""
        if self._owns_http:
            self._client.close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> "OpenAIJudge":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self._shown_url!r})"

    # -- one judge call: attempts, retries, downgrades ------------------------------------------------
    def _call_with_retries(self, prompt: str, info: _CallInfo) -> str:
        attempt = 0
        while True:
            mode = self._mode
            info.json_mode = mode
            outcome = self._attempt(prompt, mode, info)
            if isinstance(outcome, str):
                return outcome
            if outcome.kind == "downgrade":
                self._downgrade(mode, outcome.message)
                continue  # a format the server cannot do is not a failed try
            if outcome.kind == "fatal" or attempt >= self.max_retries:
                self._add(failures=1)
                raise JudgeError(_final_message(outcome, attempt), kind=_ERROR_KINDS.get(outcome.kind, "exhausted"),
                                 status=outcome.status)
            attempt += 1
            info.retries = attempt
            self._add(retries=1)
            delay = self._backoff(attempt, outcome.retry_after, outcome.kind == "unreachable")
            log.debug("judge %s: %s; retry %d/%d in %.2fs", self.name, outcome.message, attempt,
                      self.max_retries, delay)
            self._sleep(delay)

    def _attempt(self, prompt: str, mode: str, info: _CallInfo) -> str | _Failure:
        permit = self.limiter.acquire()
        self._add(requests=1)
        try:
            completion = self._client.chat.completions.create(**self._request(prompt, mode, info.top_logprobs))
            text, tokens = _reply_and_tokens(completion, prompt)
            info.logprobs = _token_logprobs(completion) if info.top_logprobs else None
        except Exception as exc:  # every failure is classified; none escapes unexplained
            failure = self._classify(exc, mode)
            failure.message = self._redact(failure.message)  # servers may echo the key back
            outcome = THROTTLE if failure.kind == "throttle" else ERROR
            self.limiter.release(permit, outcome, failure.retry_after)
            return failure
        self.limiter.release(permit, SUCCESS)
        info.prompt_tokens, info.completion_tokens = tokens
        self._add(calls=1, prompt_tokens=tokens[0], completion_tokens=tokens[1])
        return text

    def _request(self, prompt: str, mode: str, top_logprobs: int = 0) -> dict:
        request: Dict[str, Any] = {"model": self.model, "temperature": self.temperature,
                                   "messages": [{"role": "user", "content": prompt}]}
        if top_logprobs:
            request["logprobs"], request["top_logprobs"] = True, top_logprobs
        if _RESPONSE_FORMATS[mode] is not None:
            request["response_format"] = _RESPONSE_FORMATS[mode]
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        return request

    def _classify(self, exc: Exception, mode: str) -> _Failure:
        url = f"{self._shown_url}/chat/completions"
        if isinstance(exc, openai.APITimeoutError):
            return _Failure(f"no reply from {url} within {self.timeout:g}s (timeout)", "throttle")
        if isinstance(exc, openai.APIConnectionError):
            unreachable = _unreachable_reason(exc)
            if unreachable:
                return _Failure(f"Could not reach the judge at {self._shown_url} ({unreachable})", "unreachable")
            return _Failure(f"connection to {url} failed: {exc.__cause__ or exc}", "retry")
        if isinstance(exc, openai.APIStatusError):
            return self._classify_status(exc, url, mode)
        if isinstance(exc, (_MalformedReply, ValueError)):
            return _Failure(f"malformed reply from {url}: {one_line(exc)}", "retry")
        return _Failure(f"{type(exc).__name__} calling {url}: {one_line(exc)}", "retry")

    def _classify_status(self, exc: openai.APIStatusError, url: str, mode: str) -> _Failure:
        status, detail = exc.status_code, _error_detail(exc)
        message = f"HTTP {status} from {url}: {detail}"
        if status in _REJECTED:
            message = f"Judge rejected the request: HTTP {status} {_phrase(status)} from {self._shown_url}: {detail}"
        if self.json_mode == "auto" and mode != "none" and _rejects_format(status, detail):
            return _Failure(message, "downgrade")
        if status == 429:
            self._add(rate_limited=1)
            return _Failure(message, "throttle", _retry_after(exc.response.headers))
        if status == 503:
            return _Failure(message, "throttle", _retry_after(exc.response.headers))
        if status >= 500 or status in (408, 409):
            return _Failure(message, "retry", _retry_after(exc.response.headers), status)
        return _Failure(message + _HINTS.get(status, ""), "fatal", status=status)

    def _downgrade(self, mode: str, why: str) -> None:
        with self._lock:
            if self._mode == mode:  # another thread may have stepped down already
                self._mode = _NEXT_MODE[mode]
                log.info("judge %s rejected response_format %r (%s); using %r from now on",
                         self.name, mode, why, self._mode)

    def _backoff(self, attempt: int, retry_after: Optional[float], quick: bool = False) -> float:
        base, cap = (UNREACHABLE_BACKOFF, UNREACHABLE_CAP) if quick else (BACKOFF_BASE, BACKOFF_CAP)
        delay = retry_after if retry_after is not None else min(cap, base * 2 ** (attempt - 1))
        return delay + self._random.uniform(0, 0.1 * delay)  # jitter spreads out synchronized retries

    def _add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                self._totals[name] += value

    def _redact(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key and self._key != KEY_PLACEHOLDER else text


KEY_HINT = "check the API key (OPENAI_API_KEY or api_key=...)"  # surfaces swap in their own syntax
_HINTS = {
    400: " — the server refused the request as sent; check the model and base_url.",
    401: f" — {KEY_HINT}.",
    403: " — the key is not allowed to use this model or endpoint.",
    404: " — check the model name and base_url (it usually ends in /v1).",
    422: " — the server could not process the request; check the model name.",
}
# Replies that retrying cannot change (auth, unknown model, a request the server will never accept).
_REJECTED = (400, 401, 403, 404, 422)
# _Failure.kind of the last attempt -> JudgeError.kind.
_ERROR_KINDS = {"fatal": "rejected", "unreachable": "unreachable"}


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""


def _unreachable_reason(exc: BaseException) -> Optional[str]:
    """'connection refused' or 'unknown host' when nothing could even be connected to, else None."""
    seen: set = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, socket.gaierror):
            return f"unknown host: {exc.strerror or exc}"
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]  # the loop ends on None
    return None


def _environment_url(base_url: str) -> bool:
    """Whether `base_url` is one the environment chose (OpenAI's, or the operator's OPENAI_BASE_URL)."""
    chosen = {DEFAULT_BASE_URL, (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")}
    return base_url.rstrip("/") in chosen


def _resolve_key(api_key: Optional[str], base_url: str, api_key_env: Optional[str] = None) -> str:
    """The key to send to `base_url`: given, else from the variable named for it, else OPENAI_API_KEY
    for the environment's own base URL only. A typed base URL never receives the server's key."""
    if api_key_env:
        key = api_key or os.environ.get(api_key_env)
    else:
        key = api_key or (os.environ.get("OPENAI_API_KEY") if _environment_url(base_url) else None)
    if key:
        return key
    host = urlsplit(base_url).hostname or ""
    if any(host == h or host.endswith(h) for h in _KEYED_HOSTS):
        variable = api_key_env or "OPENAI_API_KEY"
        raise JudgeConfigError(
            f"No API key for {host}: pass api_key=... or set {variable} (--api-key-env names another variable). "
            "For a local server (llama.cpp, Ollama, vLLM) pass its base_url instead; no key is needed.")
    return KEY_PLACEHOLDER


def _reply_and_tokens(completion: Any, prompt: str) -> Tuple[str, Tuple[int, int]]:
    try:
        text = completion.choices[0].message.content or ""
    except (AttributeError, IndexError, TypeError) as exc:
        raise _MalformedReply(f"not a chat completion ({type(completion).__name__}: {one_line(completion)})") from exc
    if not isinstance(text, str):
        raise _MalformedReply("message content is not text")
    usage = getattr(completion, "usage", None)
    p, c = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if isinstance(p, int) and isinstance(c, int):
        return text, (p, c)
    return text, (estimate_tokens(prompt), estimate_tokens(text))


def _token_logprobs(completion: Any) -> Optional[list]:
    """The reply's tokens with their top alternatives, as plain lists; None when the server sent none."""
    try:
        content = completion.choices[0].logprobs.content
    except (AttributeError, IndexError, TypeError):
        return None
    if not content:
        return None
    out = []
    for tok in content:
        alts = [[a.token, float(a.logprob)] for a in (getattr(tok, "top_logprobs", None) or [])]
        out.append([tok.token, alts or [[tok.token, float(tok.logprob)]]])
    return out


def _pack(text: str, info: _CallInfo) -> str:
    """What the cache keeps for a call that asked for logprobs: the reply and its token probabilities."""
    return json.dumps({"reply": text, "logprobs": info.logprobs}) if info.top_logprobs else text


def _unpack(cached: Optional[str], info: _CallInfo) -> Optional[str]:
    if cached is None or not info.top_logprobs:
        return cached
    try:
        data = json.loads(cached)
        info.logprobs = data["logprobs"]
        return data["reply"]
    except (ValueError, KeyError, TypeError):
        return None  # not an entry written by _pack: ask the judge again


def _retry_after(headers: Any) -> Optional[float]:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` seconds or date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return min(MAX_RETRY_AFTER, max(0.0, float(value) / 1000))
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(MAX_RETRY_AFTER, max(0.0, seconds))


def _error_detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        return one_line(message or body)
    try:
        return one_line(exc.response.text or exc.message)
    except Exception:  # a streamed/closed body cannot be read again
        return one_line(exc.message)


def _rejects_format(status: int, detail: str) -> bool:
    """Does this error mean "I cannot do that response_format"?"""
    if status == 400:
        return True  # a plain request would not be rejected; the format is the likely cause
    mentions = any(word in detail.lower() for word in _FORMAT_WORDS)
    return status in (422, 500) and mentions


def _final_message(failure: _Failure, attempts_retried: int) -> str:
    if failure.kind == "fatal":
        return failure.message
    if failure.kind == "unreachable":
        return f"{failure.message} — is the server running, and is the base URL right?"
    return f"{failure.message.rstrip('.')} after {attempts_retried} retries"
