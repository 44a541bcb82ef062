"""OpenAIJudge: the shipped judge, for any server that speaks OpenAI's chat-completions API.

OpenAI, Azure OpenAI, vLLM, Ollama, LM Studio and llama.cpp's server all work. `OpenAIChat`
speaks the protocol and says what each failure means; `OpenAIJudge` is it inside a
`ResilientJudge` (judges/resilient.py), which does the retries, the limiter, the cache and usage:

- failures classified for the retries (the client's own are off): 429, 5xx, timeouts, dropped
  connections and malformed bodies are retried, 429/503/timeouts also slow every caller down,
  `Retry-After` / `retry-after-ms` are honoured; 400/401/403/404/422 fail at once (kind
  "rejected"); a refused connection or an unknown host is retried only briefly (kind
  "unreachable", about 2 s in all) so a dead judge is known in seconds;
- JSON output where the server supports it: `json_object` first, then none, stepping down
  once per judge when a server rejects it. `json_mode="schema"` sends a (loose) JSON schema
  instead; "auto" does not, because a schema is re-sent with every call and costs ~57 prompt
  tokens each time for no stricter output (llama.cpp's server also answers HTTP 500 to
  `json_schema` while it accepts `json_object`);
- token counts from each reply's `usage` (estimated from text when a server omits it), and the
  prompt tokens the server took from its prompt cache (`usage.prompt_tokens_details.cached_tokens`,
  OpenAI's and vLLM's; llama.cpp's `timings.cache_n`), counted as `cached_prompt_tokens`;
- llama.cpp's prompt cache: once a reply shows the server is llama.cpp (it sends `timings`), each
  request asks for `cache_prompt` (llama.cpp then runs a prompt in the slot holding the most
  similar one, so a sample's calls reuse its shared prefix); `extra_body={...}` sends fields of
  your choice with every request instead (e.g. `{"cache_prompt": true, "id_slot": 0}`);
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
import logging
import os
import threading
import time
from typing import Any, Callable, Dict, Optional, Tuple
from urllib.parse import urlsplit

import openai

from ..bounded import JUDGE_REPLY_BYTES, MAX_RETRY_AFTER, ReplyTooLarge, bounded_client, over_retry_cap
from ..errors import JudgeConfigError
from ..io.redact import redact_text, remember, remember_url
from ..safetext import safe
from ..text import estimate_tokens
from .base import environment_base_url, key_variable
from .messages import display_url, one_line
from .replies import FIRST_MODE, OPENAI_HOSTED, PREFIX_CACHING, family_of, known_family, known_mode, remember_family, remember_mode, strip_thinking
from .resilient import (AGAIN, FATAL, RETRY, THROTTLE_KIND, UNREACHABLE, Backoff, Completion,
                        Failure, ResilientJudge, unreachable_reason)
from ..environment import secret

log = logging.getLogger("ragmeter")

KEY_PLACEHOLDER = "not-needed"  # local servers (llama.cpp, Ollama, vLLM) accept any key
JSON_MODES = ("auto", "schema", "grammar", "object", "none")
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
    "grammar": {"type": "json_object"},  # llama.cpp: the metric's schema is added (its grammar), see request()
    "object": {"type": "json_object"},
    "none": None,
}
_NEXT_MODE = {"schema": "object", "grammar": "object", "object": "none"}
OPENAI_CACHE_MIN_TOKENS = 1024  # OpenAI caches a prompt's prefix only from this many prompt tokens
PROBE_SECONDS = 5.0  # the once-per-server look at /models (judges/replies.py) waits no longer


class _MalformedReply(Exception):
    """A 2xx answer that is not a chat completion (bad JSON, missing fields)."""


class OpenAIChat:
    """The chat-completions protocol: one request per `generate`, and what each failure means.

    Retries, the limiter, the cache and usage are `ResilientJudge`'s (see OpenAIJudge)."""

    def __init__(self, model: str, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 api_key_env: Optional[str] = None, timeout: float = 60.0, temperature: float = 0.0, json_mode: str = "auto",
                 max_tokens: Optional[int] = None, http_client: Any = None,
                 extra_body: Optional[Dict[str, Any]] = None) -> None:
        if not model:
            raise JudgeConfigError("No model name: pass model=..., e.g. 'gpt-4o-mini' or the name your server serves.")
        if json_mode not in JSON_MODES:
            raise JudgeConfigError(f"json_mode must be one of {JSON_MODES}, not {json_mode!r}")
        if timeout <= 0:
            raise JudgeConfigError("timeout must be > 0 (seconds)")
        self.model, self.temperature, self.timeout = model, float(temperature), float(timeout)
        self.json_mode, self.max_tokens = json_mode, max_tokens
        self.base_url = (base_url or environment_base_url()).rstrip("/")
        self.shown_url = display_url(self.base_url)
        self.name = f"{model} @ {self.shown_url}"
        self._key = _resolve_key(api_key, self.base_url, api_key_env)
        if self._key != KEY_PLACEHOLDER:
            remember(self._key)  # masked wherever anything is stored or shown (io.redact)
        remember_url(self.base_url)
        self._mode = "object" if json_mode == "auto" else json_mode
        self.extra_body = dict(extra_body) if extra_body else None
        self._llama_cpp = False  # set once a reply shows llama.cpp's `timings`
        self._probed = json_mode != "auto"  # auto: which server this is is looked up once (_settle_mode)
        self._lock = threading.Lock()
        self._local = threading.local()  # the JSON mode this thread's last request was sent with
        self._owns_http = http_client is None
        if http_client is None:  # `timeout` is the whole call's deadline, and replies are capped
            http_client = bounded_client(self.base_url, self.timeout, JUDGE_REPLY_BYTES)
        self.client = openai.OpenAI(base_url=self.base_url, api_key=self._key, max_retries=0,
                                    timeout=self.timeout, http_client=http_client)

    def generate(self, prompt: str, *, top_logprobs: int = 0, max_tokens: Optional[int] = None,
                 schema: Optional[dict] = None) -> Completion:
        """One chat-completions request; raises whatever the client raised (see `classify`).

        `max_tokens`: the calling metric's completion cap (the judge's own `max_tokens`, when set,
        wins: `--judge-max-tokens`); `schema`: the metric's reply shape, sent as structured output
        where the server takes it (grammar on llama.cpp, json_schema on vLLM/LM Studio/Ollama).
        A reasoning model's thinking (`<think>`, `reasoning_content`) is cut off and counted apart."""
        if not self._probed:
            self._settle_mode()
        mode = self._mode
        self._local.mode = "object" if mode == "grammar" and not schema else mode  # no shape: plain json_object
        self._local.facts = {}
        body = self.request(prompt, mode, top_logprobs, max_tokens=max_tokens, schema=schema)
        completion = self.client.chat.completions.create(**body, **self._extra())
        text, (prompt_tokens, completion_tokens) = _reply_and_tokens(completion, prompt)
        visible = strip_thinking(text)
        thinking = visible.thinking + _reasoning_content(completion)
        if thinking:
            self._local.facts = {"thinking_tokens": _reasoning_tokens(completion, thinking),
                                 **({"endless_thinking": True} if visible.endless else {})}
        if self.json_mode == "auto" and known_mode(self.base_url) != mode:
            remember_mode(self.base_url, mode)  # this server took it: the next judge for it starts here
        return Completion(visible.text, prompt_tokens, completion_tokens,
                          _token_logprobs(completion) if top_logprobs else None, self._cached_tokens(completion))

    def _settle_mode(self) -> None:
        """auto: the mode this server settled on earlier in the process, else the first mode of its family,
        read once from its /models list (judges/replies.py); a server that does not say stays at json_object."""
        with self._lock:  # the other threads wait here until the mode is settled, then send in it
            if self._probed:
                return
            remembered = known_mode(self.base_url)
            if remembered:
                self._mode = remembered
            else:
                family = known_family(self.base_url)
                if family is None:
                    family = self._probe_family()
                    remember_family(self.base_url, family)
                self._mode = FIRST_MODE.get(family, self._mode)
            self._probed = True

    def caches_prefix(self, prompt_tokens: int) -> bool:
        """Whether this server reuses a cached prompt prefix for prompts of about `prompt_tokens`: llama.cpp,
        vLLM, Ollama and LM Studio do (True); OpenAI's own caches prompts of 1,024 tokens or more only; any
        other server is not known to (False: it is taken to bill every prompt token). The judge mode "auto"
        asks one call per metric only where this is True (metrics/combined.py). Found once per server
        (_settle_mode)."""
        if self.extra_body is not None or self._llama_cpp:
            return True
        if not self._probed and self.json_mode == "auto":
            self._settle_mode()
        family = known_family(self.base_url) or ("openai" if self._hosted() else "")
        if family == OPENAI_HOSTED:
            return prompt_tokens >= OPENAI_CACHE_MIN_TOKENS
        return family in PREFIX_CACHING

    def _hosted(self) -> bool:
        host = urlsplit(self.base_url).hostname or ""
        return any(host == h or host.endswith(h) for h in _KEYED_HOSTS)

    def _probe_family(self) -> str:
        host = urlsplit(self.base_url).hostname or ""
        if any(host == h or host.endswith(h) for h in _KEYED_HOSTS):
            return "openai"
        try:
            models = self.client.with_options(timeout=min(PROBE_SECONDS, self.timeout)).get("/models", cast_to=object)
        except Exception as exc:  # no /models (or no server yet): json_object, as before
            log.debug("judge %s: no /models list (%s); json_object it is", self.name, one_line(exc))
            return ""
        return family_of(models)

    def _extra(self) -> Dict[str, Any]:
        """Body fields beyond OpenAI's: the configured `extra_body`, else llama.cpp's cache_prompt once
        the server is known to be llama.cpp (other servers may reject unknown fields)."""
        if self.extra_body is not None:
            return {"extra_body": self.extra_body}
        return {"extra_body": {"cache_prompt": True}} if self._llama_cpp else {}

    def _cached_tokens(self, completion: Any) -> int:
        """The reply's cached prompt tokens (OpenAI/vLLM `prompt_tokens_details`, llama.cpp `timings`)."""
        timings = getattr(completion, "timings", None)
        if isinstance(timings, dict):
            self._llama_cpp = True
        details = getattr(getattr(completion, "usage", None), "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None)
        if cached is None and isinstance(timings, dict):
            cached = timings.get("cache_n")
        return cached if isinstance(cached, int) and cached > 0 else 0

    def call_facts(self) -> dict:
        return {"json_mode": getattr(self._local, "mode", self._mode), **getattr(self._local, "facts", {})}

    def settings(self) -> dict:
        return {"model": self.model, "base_url": self.shown_url, "temperature": self.temperature,
                "timeout": self.timeout, "json_mode": self.json_mode, "max_tokens": self.max_tokens}

    def request(self, prompt: str, mode: Optional[str] = None, top_logprobs: int = 0, *,
                max_tokens: Optional[int] = None, schema: Optional[dict] = None) -> dict:
        """The chat-completions body for `prompt` in JSON mode `mode` (default: the current one)."""
        request: Dict[str, Any] = {"model": self.model, "temperature": self.temperature,
                                   "messages": [{"role": "user", "content": prompt}]}
        if top_logprobs:
            request["logprobs"], request["top_logprobs"] = True, top_logprobs
        mode = mode or self._mode
        response_format = _RESPONSE_FORMATS[mode]
        if schema and mode == "grammar":  # llama.cpp turns the schema into a grammar; no prompt tokens
            response_format = {"type": "json_object", "schema": schema}
        elif schema and mode == "schema" and self.json_mode == "auto":  # the metric's own shape, when detected
            response_format = {"type": "json_schema",
                               "json_schema": {"name": "ragmeter_judgement", "schema": schema, "strict": False}}
        if response_format is not None:
            request["response_format"] = response_format
        cap = self.max_tokens if self.max_tokens is not None else max_tokens
        if cap is not None:
            request["max_tokens"] = cap
        return request

    def classify(self, exc: BaseException) -> Failure:
        """What a failed request means (retry, throttle, unreachable, fatal, or resend in a plainer JSON mode)."""
        failure = self._classify(exc, getattr(self._local, "mode", self._mode))
        failure.message = self._redact(failure.message)  # servers may echo the key back
        return failure

    def _classify(self, exc: BaseException, mode: str) -> Failure:
        url = f"{self.shown_url}/chat/completions"
        if isinstance(exc, openai.APITimeoutError):
            return Failure(f"no reply from {url} within {self.timeout:g}s (timeout)", THROTTLE_KIND, timed_out=True)
        if isinstance(exc.__cause__, ReplyTooLarge):  # the same server would send the same again
            return Failure(f"reply from {url} refused: {exc.__cause__}", FATAL)
        if isinstance(exc, openai.APIConnectionError):
            unreachable = unreachable_reason(exc)
            if unreachable:
                return Failure(f"Could not reach the judge at {self.shown_url} ({unreachable})", UNREACHABLE)
            return Failure(f"connection to {url} failed: {exc.__cause__ or exc}", RETRY)
        if isinstance(exc, openai.APIStatusError):
            return self._classify_status(exc, url, mode)
        if isinstance(exc, (_MalformedReply, ValueError)):
            return Failure(f"malformed reply from {url}: {one_line(exc)}", RETRY)
        return Failure(f"{type(exc).__name__} calling {url}: {one_line(exc)}", RETRY)

    def _classify_status(self, exc: openai.APIStatusError, url: str, mode: str) -> Failure:
        status, detail = exc.status_code, _error_detail(exc)
        message = f"HTTP {status} from {url}: {detail}"
        if status in _REJECTED:
            message = f"Judge rejected the request: HTTP {status} {_phrase(status)} from {self.shown_url}: {detail}"
        if self.json_mode == "auto" and mode != "none" and _rejects_format(status, detail):
            self._downgrade(mode, message)
            return Failure(message, AGAIN)
        wait = _retry_after(exc.response.headers)
        if over_retry_cap(wait) and (status >= 500 or status in (408, 409, 429)):
            return Failure(f"{message} — it asks to retry after {wait:g} s, longer than the "
                           f"{MAX_RETRY_AFTER:g} s ragmeter waits", FATAL, status=status)
        if status == 429:
            return Failure(message, THROTTLE_KIND, wait, rate_limited=True)
        if status == 503:
            return Failure(message, THROTTLE_KIND, wait)
        if status >= 500 or status in (408, 409):
            return Failure(message, RETRY, wait, status)
        return Failure(message + _HINTS.get(status, ""), FATAL, status=status)

    def _downgrade(self, mode: str, why: str) -> None:
        with self._lock:
            if self._mode == mode:  # another thread may have stepped down already
                self._mode = _NEXT_MODE[mode]
                remember_mode(self.base_url, self._mode)
                log.info("judge %s rejected response_format %r (%s); using %r from now on",
                         self.name, mode, why, self._mode)

    def _redact(self, text: str) -> str:
        return redact_text(text)

    def close(self) -> None:
        """Close the HTTP client, unless it was passed in."""
        if self._owns_http:
            self.client.close()


class OpenAIJudge(ResilientJudge):
    """A judge backed by an OpenAI-compatible chat-completions endpoint: `OpenAIChat` in a ResilientJudge.

    `generate(prompt)` is thread-safe and returns the reply text; `call_info()` describes the
    last call on the calling thread, `usage()` the running totals.
    """

    def __init__(self, model: str, base_url: Optional[str] = None, api_key: Optional[str] = None, *,
                 api_key_env: Optional[str] = None, max_retries: int = 3, timeout: float = 60.0, cache: str | os.PathLike | None = None,
                 temperature: float = 0.0, max_concurrency: int = 16, json_mode: str = "auto",
                 max_tokens: Optional[int] = None, http_client: Any = None,
                 extra_body: Optional[Dict[str, Any]] = None,
                 sleep: Callable[[float], None] = time.sleep,
                 clock: Callable[[], float] = time.monotonic, max_call_seconds: Optional[float] = None) -> None:
        if max_retries < 0 or timeout <= 0 or max_concurrency < 1:
            raise JudgeConfigError("max_retries must be >= 0, timeout > 0 and max_concurrency >= 1")
        # One generate(), every retry and backoff included, ends near this: a judge that never answers
        # costs a call two timeouts and the first backoff, not (max_retries + 1) timeouts.
        max_call_seconds = max_call_seconds or CALL_DEADLINE_FACTOR * timeout + 2 * Backoff.base
        self.chat = OpenAIChat(model, base_url, api_key, api_key_env=api_key_env, timeout=timeout, temperature=temperature,
                               json_mode=json_mode, max_tokens=max_tokens, http_client=http_client,
                               extra_body=extra_body)
        super().__init__(self.chat, scope=(self.chat.base_url, self.chat.model, self.chat.temperature),
                         max_retries=max_retries, max_concurrency=max_concurrency, cache=cache,
                         sleep=sleep, clock=clock, max_call_seconds=max_call_seconds)
        self.model, self.base_url, self.temperature = self.chat.model, self.chat.base_url, self.chat.temperature
        self.timeout, self.json_mode, self.max_tokens = self.chat.timeout, json_mode, max_tokens
        self._client = self.chat.client

    # -- what the Batch API (judges/batch.py) reuses ---------------------------------------------------
    @property
    def client(self) -> openai.OpenAI:
        """The `openai` client this judge calls (its files and batches APIs serve `--batch`)."""
        return self.chat.client

    def request_body(self, prompt: str, *, top_logprobs: int = 0, max_tokens: Optional[int] = None) -> dict:
        """The chat-completions body generate() would send for `prompt` now (with a metric's cap)."""
        return self.chat.request(prompt, top_logprobs=top_logprobs, max_tokens=max_tokens)

    def __enter__(self) -> "OpenAIJudge":
        return self

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.chat.shown_url!r})"


CALL_DEADLINE_FACTOR = 2.0  # a generate()'s total deadline, in attempt timeouts, unless max_call_seconds says
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


def _phrase(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return ""




def _resolve_key(api_key: Optional[str], base_url: str, api_key_env: Optional[str] = None) -> str:
    """The key to send to `base_url`: given, else from the variable named for it, else OPENAI_API_KEY
    for the environment's own base URL only (base.key_variable). A typed base URL never receives the server's key."""
    variable = key_variable(base_url, api_key_env)
    key = api_key or secret(variable)
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
    text = safe(text)  # a lone surrogate or NUL would break the cache, the history and the exports
    usage = getattr(completion, "usage", None)
    p, c = getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None)
    if isinstance(p, int) and isinstance(c, int):
        return text, (p, c)
    return text, (estimate_tokens(prompt), estimate_tokens(text))


def _reasoning_content(completion: Any) -> str:
    """A reasoning model's thinking sent apart from the answer (vLLM, DeepSeek, llama.cpp --reasoning-format)."""
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return ""
    value = getattr(message, "reasoning_content", None) or (getattr(message, "model_extra", None) or {}).get(
        "reasoning_content")
    return value if isinstance(value, str) else ""


def _reasoning_tokens(completion: Any, thinking: str) -> int:
    """Thinking tokens: the server's count (`completion_tokens_details.reasoning_tokens`), else estimated."""
    details = getattr(getattr(completion, "usage", None), "completion_tokens_details", None)
    counted = getattr(details, "reasoning_tokens", None)
    return counted if isinstance(counted, int) and counted > 0 else estimate_tokens(thinking)


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






def _retry_after(headers: Any) -> Optional[float]:
    """Seconds the server asked us to wait (`retry-after-ms`, `Retry-After` seconds or date);
    over MAX_RETRY_AFTER the call fails instead (_classify_status)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
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
    return max(0.0, seconds)


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



