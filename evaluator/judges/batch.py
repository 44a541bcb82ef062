"""The OpenAI Batch API as a judge back end: files of requests, batches, replies read back.

A batch run scores the samples twice with the same evaluator, so scoring is the normal path,
unchanged (evaluator/batching.py drives it):

1. `CollectingJudge` stands in for the judge and records every prompt the evaluator would send
   (that pass's scores are thrown away); prompts already in the judge cache are not collected.
2. `BatchClient` writes them as JSONL requests files (one line per prompt: its `custom_id` and
   the very chat-completions body `OpenAIJudge.generate` would send), uploads them (`/files`),
   creates the batches (`/batches`), polls them, and downloads their output and error files.
3. `ReplayJudge` answers the second pass from those results and writes them to the judge cache.
   A request that failed inside a batch, or has no result, raises JudgeError, so its metric
   falls back to the heuristic visibly and is counted, like any failed judge call.

`custom_id` is `s<sample index>-c<n>`: the n-th judge call made while scoring that sample (each
judged metric, and each of its repeats, in the evaluator's order). A metric scored from token
probabilities (G-Eval) asks for them in its request line and gets them back from the batch. The calls of a sample come in a fixed order, so a resumed run
rebuilds the same ids from the stored samples: no prompt text or requests file is kept.

Any server with OpenAI's `/files` and `/batches` works: OpenAI, Azure OpenAI (base URL
`https://<resource>.openai.azure.com/openai/v1`, the deployment as model) and
tests/batch_server.py. A batch holds at most 50,000 requests and 200 MB, so bigger runs are
split into several batches. The API key only travels in the client's request headers.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterator, List, Literal, Optional, Tuple
from urllib.parse import urlsplit

import openai

from ..errors import JudgeConfigError, JudgeError
from ..text import estimate_tokens
from .messages import display_url, one_line
from .openai import OpenAIJudge

MAX_REQUESTS = 50_000  # OpenAI's limit per batch
MAX_BYTES = 190 * 1024 * 1024  # under the 200 MB file limit, leaving room for multipart framing
TERMINAL = ("completed", "failed", "expired", "cancelled")
COMPLETION_WINDOW: Literal["24h"] = "24h"  # the only window OpenAI and Azure offer
POLL_FAILURES = 5  # failed polls in a row before a wait gives up (the batches themselves go on)

log = logging.getLogger("ragmeter")

Tokens = Optional[Tuple[int, int]]


@dataclass(frozen=True)
class Request:
    """One judge call to send: the prompt, and how many token alternatives it asks for (0: none)."""

    prompt: str
    top_logprobs: int = 0
    max_tokens: Optional[int] = None  # the calling metric's completion cap, sent as a direct call sends it


@dataclass(frozen=True)
class Reply:
    """One answered request: the text, its token counts and (when asked for) token logprobs."""

    text: str
    tokens: Tokens = None
    logprobs: Optional[list] = None


def custom_id(index: int, call: int) -> str:
    """The id of the `call`-th judge call (from 0) made while scoring sample `index`."""
    return f"s{index}-c{call}"


def batch_endpoint(base_url: str) -> str:
    """The `url` each request line names: Azure wants `/chat/completions`, OpenAI `/v1/…`."""
    host = urlsplit(base_url).hostname or ""
    return "/chat/completions" if host.endswith(".openai.azure.com") else "/v1/chat/completions"


@dataclass(frozen=True)
class BatchStatus:
    """One batch as the server last described it."""

    batch_id: str
    status: str  # validating, in_progress, finalizing, completed, failed, expired, cancelling, cancelled
    total: int = 0
    completed: int = 0
    failed: int = 0
    output_file_id: Optional[str] = None
    error_file_id: Optional[str] = None
    errors: str = ""  # why the whole batch failed (validation errors), if it did

    @property
    def ended(self) -> bool:
        return self.status in TERMINAL


@dataclass
class BatchResults:
    """What the batches answered, by custom_id: replies (text, tokens) and failures (why)."""

    replies: Dict[str, Reply] = field(default_factory=dict)
    errors: Dict[str, str] = field(default_factory=dict)
    unreadable_lines: int = 0
    notes: List[str] = field(default_factory=list)  # batches that failed, expired or were cancelled

    def merge(self, other: "BatchResults") -> None:
        self.replies.update(other.replies)
        self.errors.update(other.errors)
        self.unreadable_lines += other.unreadable_lines
        self.notes.extend(other.notes)


class _PromptJudge:
    """The call counter both batch judges share: which custom_id the next prompt gets."""

    offline = False

    def __init__(self, judge: OpenAIJudge) -> None:
        self.judge = judge
        self.name = f"{judge.name} (batch)"
        self._index, self._call = 0, 0

    def caches_prefix(self, prompt_tokens: int) -> bool:
        """A batch's requests are answered apart, in no set order: none reuses another's prefix, so the judge
        mode "auto" groups the calls (metrics/combined.py), in the collecting and the replaying pass alike."""
        return False

    def begin(self, index: int) -> None:
        """The next prompts belong to sample `index` (the passes score one sample at a time)."""
        self._index, self._call = index, 0

    def _next_id(self) -> str:
        self._call += 1
        return custom_id(self._index, self._call - 1)


class CollectingJudge(_PromptJudge):
    """Records each prompt the evaluator sends (cached ones excepted); answers none of them.

    It takes generate()'s options as OpenAIJudge does: `repeat` (a repeated judgement has its
    own cache entry and its own request) and `top_logprobs` (sent with the request).
    """

    def __init__(self, judge: OpenAIJudge) -> None:
        super().__init__(judge)
        self.requests: Dict[str, Request] = {}  # by custom_id, in the order they were asked
        self.cached = 0

    def generate(self, prompt: str, *, repeat: int = 0, top_logprobs: int = 0, max_tokens: Optional[int] = None,
                 schema: Optional[dict] = None) -> str:
        cid = self._next_id()
        if self.judge.cached(prompt, repeat=repeat, top_logprobs=top_logprobs) is None:
            self.requests[cid] = Request(prompt, top_logprobs, max_tokens)
        else:
            self.cached += 1
        # This pass only collects; raising is the cheapest way through the scoring path.
        raise JudgeError("collecting prompts for a batch")


class ReplayJudge(_PromptJudge):
    """Answers each prompt from the batch results, else the cache; JudgeError when neither has it."""

    def __init__(self, judge: OpenAIJudge, results: BatchResults, batch_ids: List[str], sent: int) -> None:
        super().__init__(judge)
        self.results, self.batch_ids = results, list(batch_ids)
        self._totals = dict.fromkeys(("calls", "cache_hits", "prompt_tokens", "completion_tokens",
                                      "retries", "failures", "rate_limited"), 0)
        self._totals["requests"] = sent
        self._info: Dict[str, Any] = {}

    def generate(self, prompt: str, *, repeat: int = 0, top_logprobs: int = 0, max_tokens: Optional[int] = None,
                 schema: Optional[dict] = None) -> str:
        cid = self._next_id()
        self._info = {"retries": 0, "cached": False}
        if top_logprobs:
            self._info.update(top_logprobs=top_logprobs, logprobs=None)
        reply = self.results.replies.get(cid)
        if reply is not None:
            p, c = reply.tokens or (estimate_tokens(prompt), estimate_tokens(reply.text))
            self._add(calls=1, prompt_tokens=p, completion_tokens=c)
            self.judge.remember(prompt, reply.text, repeat=repeat, top_logprobs=top_logprobs, logprobs=reply.logprobs)
            return self._answer(reply.text, reply.logprobs, top_logprobs)
        hit = self.judge.cached(prompt, repeat=repeat, top_logprobs=top_logprobs)
        if hit is not None:
            self._info["cached"] = True
            self._add(cache_hits=1)
            return self._answer(*hit, top_logprobs)
        self._add(failures=1)
        batches = ", ".join(self.batch_ids) or "the batch"
        if cid in self.results.errors:
            raise JudgeError(f"request {cid} failed inside batch {batches}: {self.results.errors[cid]}")
        notes = f" ({'; '.join(self.results.notes)})" if self.results.notes else ""
        raise JudgeError(f"batch {batches} returned no result for request {cid}{notes}")

    def _answer(self, text: str, logprobs: Optional[list], top_logprobs: int) -> str:
        if top_logprobs:
            self._info["logprobs"] = logprobs
        return text

    def call_info(self) -> dict:
        """As OpenAIJudge's: retries (always 0), cached, and the logprobs when they were asked for."""
        return dict(self._info)

    def usage(self) -> dict:
        """Totals in OpenAIJudge.usage()'s terms: `requests` sent in the batches, `calls` answered."""
        return dict(self._totals, batch_ids=list(self.batch_ids))

    def _add(self, **counts: int) -> None:
        for name, value in counts.items():
            self._totals[name] += value


StatusCallback = Callable[[List[BatchStatus]], None]


class BatchClient:
    """Submits, polls and reads back batches through the judge's own `openai` client.

    Uploads and polls use the client's built-in retries (429, 5xx, dropped connections); a
    failure after them raises JudgeError (JudgeConfigError when the server has no Batch API).
    """

    def __init__(self, judge: OpenAIJudge, *, poll_interval: float = 10.0, max_requests: int = MAX_REQUESTS,
                 max_bytes: int = MAX_BYTES, max_retries: int = 3,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.judge, self.poll_interval, self._sleep = judge, poll_interval, sleep
        self.max_requests, self.max_bytes = max_requests, max_bytes
        self.endpoint = batch_endpoint(judge.base_url)
        # Large files take longer than one judge call: a longer timeout, and the client's retries.
        self._api = judge.client.with_options(max_retries=max_retries, timeout=max(judge.timeout, 300.0))
        self._url = display_url(judge.base_url)

    # -- requests files ---------------------------------------------------------------------------
    def request_line(self, cid: str, request: Request) -> bytes:
        """One JSONL line: the chat-completions body generate() would send, under its custom_id."""
        body = self.judge.request_body(request.prompt, top_logprobs=request.top_logprobs,
                                       max_tokens=request.max_tokens)
        line = {"custom_id": cid, "method": "POST", "url": self.endpoint, "body": body}
        return json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"

    def chunks(self, requests: Dict[str, Request]) -> List[bytes]:
        """The requests as JSONL files within the per-batch limits (the split is deterministic)."""
        files: List[bytes] = []
        lines: List[bytes] = []
        size = 0
        for cid, request in requests.items():
            line = self.request_line(cid, request)
            if lines and (len(lines) >= self.max_requests or size + len(line) > self.max_bytes):
                files.append(b"".join(lines))
                lines, size = [], 0
            lines.append(line)
            size += len(line)
        if lines:
            files.append(b"".join(lines))
        return files

    # -- the API ----------------------------------------------------------------------------------
    def submit(self, data: bytes) -> str:
        """Upload one requests file and create its batch; returns the batch id."""
        uploaded = self._call("upload the requests file", lambda: self._api.files.create(
            file=("ragmeter-batch.jsonl", data, "application/jsonl"), purpose="batch"))
        batch = self._call("create the batch", lambda: self._api.batches.create(
            input_file_id=uploaded.id, endpoint=self.endpoint,  # type: ignore[arg-type]
            completion_window=COMPLETION_WINDOW, metadata={"created_by": "ragmeter"}))
        return str(batch.id)

    def status(self, batch_id: str) -> BatchStatus:
        """The batch's status and request counts now."""
        batch = self._call(f"read batch {batch_id}", lambda: self._api.batches.retrieve(batch_id))
        counts = batch.request_counts
        return BatchStatus(str(batch.id), str(batch.status), getattr(counts, "total", 0) or 0,
                           getattr(counts, "completed", 0) or 0, getattr(counts, "failed", 0) or 0,
                           batch.output_file_id, batch.error_file_id, _batch_errors(batch))

    def wait(self, batch_ids: List[str], on_status: Optional[StatusCallback] = None,
             stop: Optional[threading.Event] = None) -> Optional[List[BatchStatus]]:
        """Poll until every batch has ended; None when `stop` was set first (the batches go on).

        A batch runs for hours, so a poll that fails (after the client's retries) is tried again
        at the next interval; only POLL_FAILURES failures in a row raise JudgeError.
        """
        failures = 0
        while True:
            statuses = self._poll(batch_ids, failures)
            failures = 0 if statuses is not None else failures + 1
            if statuses is not None and on_status is not None:
                on_status(statuses)
            if statuses is not None and all(s.ended for s in statuses):
                return statuses
            if stop is not None and stop.wait(self.poll_interval):
                return None
            if stop is None:
                self._sleep(self.poll_interval)

    def _poll(self, batch_ids: List[str], failures: int) -> Optional[List[BatchStatus]]:
        try:
            return [self.status(b) for b in batch_ids]
        except JudgeConfigError:
            raise
        except JudgeError as exc:
            if failures + 1 >= POLL_FAILURES:
                raise JudgeError(f"{exc} ({POLL_FAILURES} polls in a row failed; the batches go on "
                                 "on the server, resume the run to pick them up)") from None
            log.warning("%s; polling again in %gs", exc, self.poll_interval)
            return None

    def results(self, statuses: List[BatchStatus]) -> BatchResults:
        """Every ended batch's output and error files, parsed; a failed batch fails all its requests."""
        results = BatchResults()
        for status in statuses:
            if status.status != "completed":
                results.notes.append(f"batch {status.batch_id} {status.status}"
                                     + (f" ({status.errors})" if status.errors else ""))
            for file_id in (status.output_file_id, status.error_file_id):
                if file_id:
                    results.merge(parse_results(self._download(file_id), status.batch_id))
        return results

    def _download(self, file_id: str) -> str:
        content = self._call(f"download file {file_id}", lambda: self._api.files.content(file_id))
        return content.content.decode("utf-8", errors="replace")

    def _call(self, what: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except openai.APIStatusError as exc:
            message = f"Batch API: could not {what} at {self._url}: HTTP {exc.status_code}: {one_line(exc.message)}"
            if exc.status_code in (404, 405):
                raise JudgeConfigError(message + " — this server may not implement /files and /batches; "
                                       "run without --batch.") from None
            raise JudgeError(message) from None
        except openai.OpenAIError as exc:
            raise JudgeError(f"Batch API: could not {what} at {self._url}: {one_line(exc)}") from None


def describe_statuses(statuses: List[BatchStatus]) -> str:
    """One progress line for the batches, e.g. 'batch in_progress: 120/500 requests done, 3 failed'."""
    total = sum(s.total for s in statuses)
    done = sum(s.completed + s.failed for s in statuses)
    failed = sum(s.failed for s in statuses)
    states = sorted({s.status for s in statuses}, key=lambda st: st in TERMINAL)
    what = "batch" if len(statuses) == 1 else f"{len(statuses)} batches"
    return f"{what} {'/'.join(states)}: {done}/{total} requests done, {failed} failed"


def _batch_errors(batch: Any) -> str:
    errors = getattr(batch, "errors", None)
    data = getattr(errors, "data", None) or []
    return "; ".join(one_line(getattr(e, "message", "") or e) for e in data)


def parse_results(text: str, batch_id: str = "") -> BatchResults:
    """A batch output or error file: replies and failures by custom_id.

    A line the server could not answer (non-200 status, an `error` object, no reply text) is a
    failure with the server's reason; an unreadable line is counted and its request, having no
    result, falls back like a failure.
    """
    results = BatchResults()
    for line in _lines(text):
        try:
            item = json.loads(line)
            cid = str(item["custom_id"])
        except (ValueError, KeyError, TypeError):
            results.unreadable_lines += 1
            continue
        reply, why = _reply_of(item)
        if reply is not None:
            results.replies[cid] = reply
        else:
            results.errors[cid] = why
    return results


def _lines(text: str) -> Iterator[str]:
    return (line for line in text.splitlines() if line.strip())


def _reply_of(item: dict) -> Tuple[Optional[Reply], str]:
    """(the reply, "") for an answered line, else (None, the reason it failed)."""
    error, response = item.get("error"), _dict(item.get("response"))
    body, status = _dict(response.get("body")), response.get("status_code")
    if error or (status is not None and status != 200):
        inner = _dict(body.get("error")) or _dict(error)
        message = inner.get("message") or inner.get("code") or error or "request failed"
        return None, one_line(f"HTTP {status}: {message}" if status else message)
    try:
        text = body["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        return None, "the reply is not a chat completion"
    if not isinstance(text, str):
        return None, "the reply has no text"
    usage = _dict(body.get("usage"))
    p, c = usage.get("prompt_tokens"), usage.get("completion_tokens")
    tokens = (p, c) if isinstance(p, int) and isinstance(c, int) else None
    return Reply(text, tokens, _token_logprobs(body)), ""


def _token_logprobs(body: Dict[str, Any]) -> Optional[list]:
    """`choices[0].logprobs.content` in OpenAIJudge's call_info form: [[token, [[alt, logprob], ...]], ...]."""
    try:
        content = body["choices"][0]["logprobs"]["content"]
        out = []
        for tok in content:
            alts = [[a["token"], float(a["logprob"])] for a in tok.get("top_logprobs") or []]
            out.append([tok["token"], alts or [[tok["token"], float(tok["logprob"])]]])
        return out or None
    except (KeyError, IndexError, TypeError, ValueError, AttributeError):
        return None  # no (usable) logprobs: the stated score is used, as with a server that sends none


def _dict(value: Any) -> Dict[str, Any]:
    """`value` when it is a JSON object, else {} (result lines come from a server: trust no shape)."""
    return value if isinstance(value, dict) else {}
