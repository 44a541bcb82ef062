"""ResilientJudge: what every judge that calls a model gets, whatever protocol it speaks.

A backend says how to ask its model and what its failures mean; this wrapper does the rest, once:

- retries with exponential backoff and jitter, honouring a server's `Retry-After` (capped), with
  a short schedule for a server that cannot be reached so a dead judge is known in seconds; after
  the last try it raises `JudgeError`, which the evaluator turns into a visible heuristic fallback;
- a total deadline per generate() (`max_call_seconds`): no retry starts, and no backoff is slept,
  past it, so a judge that never answers costs a call about max_call_seconds plus one attempt's
  own timeout, not (max_retries + 1) timeouts; a call whose last try timed out raises a
  JudgeError of kind "timeout", which the run's health check counts; a try that timed out is
  retried only once the judge has answered a call (one that never has, or trickles bytes past
  every deadline, would only cost a run a second deadline: issue 49);
- an `AIMDLimiter` slot around every attempt, so concurrent samples back off together;
- the SQLite reply cache (`cache=` a path), keyed by `scope` and the prompt (and the repeat index
  and logprobs request when there are any);
- usage counting: calls, requests, cache hits, tokens (estimated from the text when the backend
  reports none), retries, failures, rate limits; `call_info()` for this thread's last call.

The early stop and circuit breaker (judges/health.py) watch whatever judge a run uses, so the
`JudgeError` raised here feeds them too.

What a backend offers (only `generate` is required):

- `generate(prompt) -> str`, or a `Completion` when it knows the tokens (and, when its
  `generate` takes `top_logprobs`, the token probabilities);
- `classify(exc) -> Failure`: what an exception from `generate` means (see `Failure`); without
  it, `default_classify` decides: an exception with a `retry_after` attribute is a throttle to
  wait out, a JudgeError of kind "rejected" is fatal, a refused connection is "unreachable",
  anything else is retried;
- `call_facts() -> dict`: extra facts for `call_info()` (OpenAI's json_mode);
- `name`, `settings() -> dict`, `close()`.
"""
from __future__ import annotations

import json
import logging
import os
import random
import socket
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any, Callable, Optional, Tuple, Union

from ..errors import JudgeConfigError, JudgeError
from ..retrying import Failed, GaveUp, with_retries
from ..text import estimate_tokens
from .base import accepts, judge_settings
from .cache import JudgeCache, cache_key
from .replies import BAD_PREFIX
from .ratelimit import ERROR, SUCCESS, THROTTLE, AIMDLimiter

log = logging.getLogger("ragmeter")

MAX_RETRY_AFTER = 120.0  # a server asking for longer is capped: the run must finish

# Failure kinds: what to do after a failed attempt.
RETRY = "retry"  # try again after the backoff
THROTTLE_KIND = "throttle"  # try again after the backoff (or Retry-After) and slow every caller down
UNREACHABLE = "unreachable"  # nothing listening: retry on the short schedule
FATAL = "fatal"  # retrying cannot help (auth, unknown model): fail now
AGAIN = "again"  # the backend changed its request (e.g. a JSON mode the server lacks): resend at once, no retry
KINDS = (RETRY, THROTTLE_KIND, UNREACHABLE, FATAL, AGAIN)
# Failure.kind of the last attempt -> JudgeError.kind.
_ERROR_KINDS = {FATAL: "rejected", UNREACHABLE: "unreachable"}


@dataclass
class Failure(Failed):
    """Why one attempt failed and what to do about it; `classify` returns one."""

    message: str
    kind: str = RETRY  # one of KINDS
    retry_after: Optional[float] = None  # seconds the server asked us to wait
    status: Optional[int] = None  # HTTP status, when there was one
    rate_limited: bool = False  # an HTTP 429 (counted in usage()["rate_limited"])
    timed_out: bool = False  # no reply within the attempt's timeout (JudgeError kind "timeout")

    def __post_init__(self) -> None:
        self.retryable = self.kind != FATAL


@dataclass
class Completion:
    """A reply and what it cost; a backend may return this instead of bare text."""

    text: str
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    logprobs: Optional[list] = None  # [[token, [[alternative, logprob], ...]], ...]
    cached_tokens: int = 0  # of prompt_tokens, those the server read from its prompt cache


@dataclass(frozen=True)
class Backoff:
    """Seconds before retry n: base * 2**(n-1), capped. The quick schedule is for nothing listening / no such
    host: a few quick tries cover a server still starting up, and a dead judge is reported in seconds."""

    base: float = 0.5
    cap: float = 30.0
    quick_base: float = 0.25
    quick_cap: float = 1.0

    def delay(self, attempt: int, retry_after: Optional[float], quick: bool = False) -> float:
        base, cap = (self.quick_base, self.quick_cap) if quick else (self.base, self.cap)
        return retry_after if retry_after is not None else min(cap, base * 2 ** (attempt - 1))


@dataclass
class _CallInfo:
    retries: int = 0
    cached: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    top_logprobs: int = 0  # how many alternatives per token were asked for (0: no logprobs asked)
    logprobs: Optional[list] = None
    shape: Optional[dict] = None  # the calling metric's completion cap and reply schema (`SHAPE_OPTIONS`)


# generate() options that shape one call's reply, passed to a backend whose generate names them: the
# metric's completion cap and its reply schema (structured output). They do not key the cache.
SHAPE_OPTIONS = ("max_tokens", "schema")
Scope = Tuple[str, str, float]  # (where, model, temperature): what keys the cache besides the prompt


class ResilientJudge:
    """Any judge backend with retries, rate limiting, a cache and usage counting (module docstring).

    `generate(prompt)` is thread-safe; `call_info()` describes the last call on the calling
    thread, `usage()` the running totals. `sleep` and `clock` are injectable so tests drive time.
    """

    offline = False

    def __init__(self, backend: Any, *, scope: Optional[Scope] = None, max_retries: int = 3,
                 max_concurrency: int = 16, cache: Union[str, "os.PathLike[str]", None] = None,
                 backoff: Backoff = Backoff(), sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, max_call_seconds: Optional[float] = None) -> None:
        if max_retries < 0 or max_concurrency < 1 or (max_call_seconds is not None and max_call_seconds <= 0):
            raise JudgeConfigError("max_retries must be >= 0, max_concurrency >= 1 and max_call_seconds > 0")
        self.backend = backend
        self.max_call_seconds, self._clock = max_call_seconds, clock
        self.max_retries, self.max_concurrency, self.backoff = max_retries, max_concurrency, backoff
        self.name = str(getattr(backend, "name", None) or type(backend).__name__)
        self.scope: Scope = scope or (f"judge:{type(backend).__module__}.{type(backend).__qualname__}", "", 0.0)
        self._sleep, self._random = sleep, random.Random()
        self._lock = threading.Lock()
        self._local = threading.local()
        self._totals = dict.fromkeys(("calls", "requests", "cache_hits", "prompt_tokens",
                                      "completion_tokens", "cached_prompt_tokens", "retries", "failures",
                                      "rate_limited"), 0)
        self.limiter = AIMDLimiter(max_concurrency, clock=clock, sleep=sleep)
        self._cache = JudgeCache(cache) if cache is not None else None
        self._classify = getattr(backend, "classify", None) or default_classify
        self._takes_logprobs = accepts(backend, "top_logprobs")
        self._takes = tuple(o for o in SHAPE_OPTIONS if accepts(backend, o))

    # -- the judge interface ---------------------------------------------------------------------
    def generate(self, prompt: str, *, repeat: int = 0, top_logprobs: int = 0, max_tokens: Optional[int] = None,
                 schema: Optional[dict] = None) -> str:
        """The judge's reply to `prompt` (from the cache when present); raises JudgeError.

        `repeat` is the index of a repeated judgement of the same prompt: each has its own cache
        entry. `top_logprobs` > 0 asks for token probabilities (call_info()["logprobs"]) from a
        backend that can give them.
        """
        info = _CallInfo(top_logprobs=top_logprobs if self._takes_logprobs else 0)
        shape = {k: v for k, v in (("max_tokens", max_tokens), ("schema", schema)) if v and k in self._takes}
        info.shape = shape or None
        self._local.info = info
        key = ""
        if self._cache is not None:
            key = self._cache_key(prompt, repeat, info.top_logprobs)
            self._local.key = key  # reply_unusable() forgets it: a reply with no score is no answer
            hit = _unpack(self._cache.get(key), info)
            if hit is not None:
                info.cached = True
                self._add(cache_hits=1)
                return hit
        text = self._call_with_retries(prompt, info)
        if self._cache is not None:
            self._cache.put(key, _pack(text, info) if text.strip() else text)
        return text

    def reply_unusable(self, reason: str, not_json: bool = False) -> None:
        """The reply this thread's last generate() returned held no score (metrics/judging.py says so):
        drop it from the cache, so the next run asks again and a fixed judge succeeds without --no-cache
        (an old cache's unusable entry goes the same way the first time it is replayed)."""
        key = getattr(self._local, "key", "")
        if self._cache is not None and key:
            self._cache.forget(key)
            self._local.key = ""

    def caches_prefix(self, prompt_tokens: int) -> Optional[bool]:
        """The backend's answer (judges.base.caches_prefix), None when it gives none."""
        ask = getattr(self.backend, "caches_prefix", None)
        return ask(prompt_tokens) if callable(ask) else None

    def accepts_option(self, option: str) -> bool:
        """`repeat` always (it keys the cache); `top_logprobs`, `max_tokens`, `schema` when the backend takes them."""
        return option == "repeat" or (option == "top_logprobs" and self._takes_logprobs) or option in self._takes

    def call_info(self) -> dict:
        """The last generate() on this thread: retries, cached, prompt/completion tokens, the backend's
        own facts (and top_logprobs, logprobs when the call asked for token probabilities)."""
        info = getattr(self._local, "info", None) or _CallInfo()
        data = asdict(info)
        del data["shape"]
        if not info.top_logprobs:
            del data["top_logprobs"], data["logprobs"]
        if not info.cached_tokens:  # only when the server said some prompt tokens came from its cache
            del data["cached_tokens"]
        facts = getattr(self.backend, "call_facts", None)
        data.update(facts() if callable(facts) else {})
        return data

    def usage(self) -> dict:
        """Running totals. `calls` counts attempts answered with a reply, `requests` every attempt;
        `rate_limited` the 429s; `failures` the generate() calls that raised."""
        with self._lock:
            return dict(self._totals)

    def count_reply(self, bad: str = "", repair: Optional[bool] = None) -> None:
        """A metric read this judge's reply: `bad` names a reply with no score (judges/replies.BAD_KINDS);
        `repair` True/False: a repair attempt was made and gave a score or not."""
        with self._lock:
            if bad:  # flat counts ("bad:empty"), so usage deltas and sums treat them as any other count
                self._totals[BAD_PREFIX + bad] = self._totals.get(BAD_PREFIX + bad, 0) + 1
            if repair is not None:
                self._totals["repairs"] = self._totals.get("repairs", 0) + 1
                self._totals["repaired"] = self._totals.get("repaired", 0) + int(repair)

    def settings(self) -> dict:
        """The backend's settings plus retries, concurrency and cache; safe to store (never a key)."""
        return {**judge_settings(self.backend), "max_retries": self.max_retries,
                "max_concurrency": self.max_concurrency, "max_call_seconds": self.max_call_seconds,
                "cache": self._cache is not None}  # whether, never where: no server path in settings

    # -- the cache, for replies obtained elsewhere (the Batch API, judges/batch.py) -----------------
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
        where, model, temperature = self.scope
        return cache_key(where, model, temperature, prompt, repeat=repeat, top_logprobs=top_logprobs)

    def close(self) -> None:
        """Close the backend and the cache."""
        close = getattr(self.backend, "close", None)
        if callable(close):
            close()
        if self._cache is not None:
            self._cache.close()

    def __enter__(self) -> "ResilientJudge":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResilientJudge({self.name!r})"

    # -- one judge call: attempts and retries ---------------------------------------------------------
    def _call_with_retries(self, prompt: str, info: _CallInfo) -> str:
        start = self._clock()

        def retried(n: int, failure: Failure, delay: float) -> None:
            info.retries = n
            self._add(retries=1)
            log.debug("judge %s: %s; retry %d/%d in %.2fs", self.name, failure.message, n, self.max_retries, delay)

        outcome = with_retries(lambda: self._attempt(prompt, info), retries=self.max_retries, delay=self._delay,
                               sleep=self._sleep, fits=lambda delay: not self._past_deadline(start, delay),
                               on_retry=retried)
        if not isinstance(outcome, GaveUp):
            return outcome
        self._add(failures=1)
        message = final_message(outcome.failure, outcome.retries)
        if outcome.out_of_time:
            message += f"; no further retry: the call's total deadline is {self.max_call_seconds:g} s (max_call_seconds)"
        raise JudgeError(message, kind=_error_kind(outcome.failure), status=outcome.failure.status)

    def _delay(self, retry: int, failure: Failure) -> float:
        delay = self.backoff.delay(retry, failure.retry_after, failure.kind == UNREACHABLE)
        return delay + self._random.uniform(0, 0.1 * delay)  # jitter spreads out synchronized retries

    def _past_deadline(self, start: float, delay: float) -> bool:
        """Would a retry after `delay` seconds begin past this call's total deadline?"""
        return self.max_call_seconds is not None and self._clock() - start + delay >= self.max_call_seconds

    def _attempt(self, prompt: str, info: _CallInfo) -> Union[str, Failure]:
        permit = self.limiter.acquire()
        self._add(requests=1)
        try:
            options: dict = {"top_logprobs": info.top_logprobs} if info.top_logprobs else {}
            options.update(info.shape or {})
            reply = _completion(self.backend.generate(prompt, **options), prompt)
        except Exception as exc:  # every failure is classified; none escapes unexplained
            failure = self._classify(exc)
            if failure.rate_limited:
                self._add(rate_limited=1)
            self.limiter.release(permit, THROTTLE if failure.kind == THROTTLE_KIND else ERROR, failure.retry_after)
            # AGAIN: the backend changed its request (a format the server cannot do): resent now, not a failed try.
            if failure.kind == AGAIN:
                return self._attempt(prompt, info)
            if failure.timed_out and not self._answered():
                failure.retryable = False  # a second wait on a judge that never answered in time
            return failure
        self.limiter.release(permit, SUCCESS)
        info.logprobs = reply.logprobs if info.top_logprobs else None
        info.prompt_tokens, info.completion_tokens = reply.prompt_tokens or 0, reply.completion_tokens or 0
        info.cached_tokens = reply.cached_tokens
        self._add(calls=1, prompt_tokens=info.prompt_tokens, completion_tokens=info.completion_tokens,
                  cached_prompt_tokens=info.cached_tokens)
        facts = getattr(self.backend, "call_facts", None)
        thinking = (facts() if callable(facts) else {}).get("thinking_tokens") or 0
        if thinking:  # counted apart: of completion_tokens, those spent thinking (never parsed)
            self._add(reasoning_tokens=int(thinking))
        return reply.text

    def _answered(self) -> bool:
        """Whether any call of this judge got a reply from it (not from the cache)."""
        with self._lock:
            return bool(self._totals["calls"])

    def _add(self, **counts: int) -> None:
        with self._lock:
            for name, value in counts.items():
                self._totals[name] = self._totals.get(name, 0) + value


def _error_kind(failure: Failure) -> str:
    """JudgeError.kind for a call whose last attempt failed this way (the health check reads it)."""
    if failure.timed_out and failure.kind != FATAL:
        return "timeout"
    return _ERROR_KINDS.get(failure.kind, "exhausted")


def _completion(reply: Any, prompt: str) -> Completion:
    """A backend's reply as a Completion, tokens estimated from the text when it gave none."""
    if isinstance(reply, str):
        reply = Completion(reply)
    if not isinstance(reply, Completion) or not isinstance(reply.text, str):
        raise TypeError(f"a judge's generate() must return text, not {type(reply).__name__}")
    if reply.prompt_tokens is None or reply.completion_tokens is None:
        reply.prompt_tokens, reply.completion_tokens = estimate_tokens(prompt), estimate_tokens(reply.text)
    return reply


def default_classify(exc: BaseException) -> Failure:
    """What a failure means for a backend that does not say (module docstring)."""
    message = f"{type(exc).__name__}: {short(exc)}"
    retry_after = getattr(exc, "retry_after", None)
    if isinstance(retry_after, (int, float)) and not isinstance(retry_after, bool):
        return Failure(message, THROTTLE_KIND, min(MAX_RETRY_AFTER, max(0.0, float(retry_after))))
    if isinstance(exc, JudgeError):
        kind = {"rejected": FATAL, "unreachable": UNREACHABLE}.get(exc.kind, RETRY)
        return Failure(str(exc), kind, status=exc.status)
    if unreachable_reason(exc):
        return Failure(f"Could not reach the judge ({unreachable_reason(exc)})", UNREACHABLE)
    if isinstance(exc, TimeoutError):
        return Failure(message, THROTTLE_KIND, timed_out=True)
    return Failure(message, RETRY)


def unreachable_reason(exc: Optional[BaseException]) -> Optional[str]:
    """'connection refused' or 'unknown host' when nothing could even be connected to, else None."""
    seen: set = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, ConnectionRefusedError):
            return "connection refused"
        if isinstance(exc, socket.gaierror):
            return f"unknown host: {exc.strerror or exc}"
        exc = exc.__cause__ or exc.__context__
    return None


def final_message(failure: Failure, attempts_retried: int) -> str:
    if failure.kind == FATAL:
        return failure.message
    if failure.kind == UNREACHABLE:
        return f"{failure.message} — is the server running, and is the base URL right?"
    return f"{failure.message.rstrip('.')} after {attempts_retried} retries"


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


def short(value: Any, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[:limit] + "…"
