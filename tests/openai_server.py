"""A real OpenAI-compatible chat-completions server on 127.0.0.1, for tests and benches.

Standard library only. It listens on an ephemeral port in a background thread, answers
`POST .../chat/completions` with behaviour you program per request, answers `GET .../models`
like llama.cpp or vLLM do, and records every request (body and headers).

    from openai_server import ChatServer, reply, error, stall, drop, malformed  # tests/ is on sys.path under pytest

    with ChatServer() as srv:
        srv.queue(error(429, retry_after=2), reply('{"score": 0.9}', usage=(120, 8)))
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        ...
        assert len(srv.chat_requests) == 2
        assert srv.chat_requests[0].headers["authorization"] == "Bearer ..."

Which behaviour answers a chat request, first match wins:
1. `responder(request)` if given and it returns a behaviour (return None to pass);
2. the next queued behaviour (`srv.queue(...)`, first in, first out);
3. `default` (a reply of `DEFAULT_REPLY` unless you pass another).

Behaviours (plain dataclasses, built by the helper functions below):
- `reply(text, usage="auto" | (prompt, completion) | (prompt, completion, cached) | None, delay=0,
  logprobs=None, timings=None)`: HTTP 200 completion; usage "auto" counts whitespace-separated words,
  None omits the `usage` field, a third number is `usage.prompt_tokens_details.cached_tokens`;
  `timings` (a dict) is added as llama.cpp's server adds it;
  `logprobs` = [(token, [(alternative, logprob), ...]), ...] adds `choices[0].logprobs.content`
  (sent only when the request asked for logprobs, as real servers do).
- `scored_reply(before, {"4": 0.6, "3": 0.4}, after)`: a reply whose score token has those
  top alternatives (the most likely one is the token written).
- `error(status, message, retry_after=None, retry_after_ms=None, delay=0)`: an OpenAI-style
  error body with that status and optional `Retry-After` / `retry-after-ms` headers.
- `stall(seconds)`: holds the request that long (past the client's timeout), then hangs up.
- `drop()`: closes the connection without answering.
- `malformed(body=..., content_type=...)`: HTTP 200 with a body that is not a completion.
- `trickle(every=3.0)`: HTTP 200 headers, then a completion body one byte every `every` seconds
  (a per-read timeout never fires; only a total deadline ends the call).
- `huge(megabytes, announce=True)`: HTTP 200 whose body is a completion of that many MB, streamed
  (announce=False sends no Content-Length: the body ends when the server closes the connection).

A prompt that asks for several metrics in one call (ragmeter's grouped and combined judge modes: a
`### metric_name` heading per metric) gets a reply object holding a reply's JSON object under each
metric's name, the way a model following the prompt answers (`each_part`), unless the reply already
names one of them or is not a JSON object.

`latency` (seconds) delays every chat answer, like a real model; `in_flight` and
`peak_in_flight` show how many chat requests the server held at once.
"""
from __future__ import annotations

import json
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional, Self, Tuple, Union

DEFAULT_REPLY = '{"score": 0.8, "reasoning": "The answer is supported by the context."}'
_PART_HEADING = re.compile(r"^### ([A-Za-z_][A-Za-z0-9_]*)$", re.MULTILINE)


def each_part(text: str, prompt: str) -> str:
    """`text` as the answer to every metric a several-metric prompt asks for (unchanged for any other)."""
    names = _PART_HEADING.findall(prompt or "")
    if len(names) < 2:
        return text
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    if not isinstance(obj, dict) or any(name in obj for name in names):
        return text
    return json.dumps({name: obj for name in names})


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Union[str, Tuple[int, ...], None] = "auto"
    delay: float = 0.0
    finish_reason: str = "stop"
    logprobs: Optional[Tuple[Tuple[str, Tuple[Tuple[str, float], ...]], ...]] = None
    timings: Optional[Tuple[Tuple[str, int], ...]] = None


@dataclass(frozen=True)
class Error:
    status: int
    message: str = "error injected by the test server"
    retry_after: Optional[float] = None
    retry_after_ms: Optional[float] = None
    delay: float = 0.0


@dataclass(frozen=True)
class Stall:
    seconds: float


@dataclass(frozen=True)
class Drop:
    pass


@dataclass(frozen=True)
class Malformed:
    body: bytes = b'{"id": "chatcmpl-1", "choices": [{"message": {"content": "trunc'
    content_type: str = "application/json"
    status: int = 200


@dataclass(frozen=True)
class Trickle:
    every: float = 3.0


@dataclass(frozen=True)
class Huge:
    megabytes: float = 100.0
    announce: bool = True  # False: no Content-Length, the body ends when the connection closes


Behaviour = Union[Reply, Error, Stall, Drop, Malformed, Trickle, Huge]


def reply(text: str = DEFAULT_REPLY, *, usage: Union[str, Tuple[int, ...], None] = "auto",
          delay: float = 0.0, finish_reason: str = "stop", logprobs: Optional[list] = None,
          timings: Optional[Dict[str, int]] = None) -> Reply:
    frozen = None if logprobs is None else tuple((t, tuple((a, float(lp)) for a, lp in alts)) for t, alts in logprobs)
    return Reply(text, usage, delay, finish_reason, frozen, tuple(sorted((timings or {}).items())) or None)


def scored_reply(before: str, probabilities: Dict[str, float], after: str = "}", **options: Any) -> Reply:
    """A reply `before + <score token> + after` whose score token's top alternatives have these
    probabilities; the written token is the most likely one."""
    import math

    token = max(probabilities, key=probabilities.get)
    alternatives = [(t, math.log(p)) for t, p in sorted(probabilities.items(), key=lambda kv: -kv[1])]
    return reply(before + token + after, logprobs=[(before, [(before, 0.0)]), (token, alternatives),
                                                  (after, [(after, 0.0)])], **options)


def error(status: int, message: str = "error injected by the test server", *,
          retry_after: Optional[float] = None, retry_after_ms: Optional[float] = None,
          delay: float = 0.0) -> Error:
    return Error(status, message, retry_after, retry_after_ms, delay)


def stall(seconds: float) -> Stall:
    return Stall(seconds)


def drop() -> Drop:
    return Drop()


def trickle(every: float = 3.0) -> Trickle:
    return Trickle(every)


def huge(megabytes: float = 100.0, *, announce: bool = True) -> Huge:
    return Huge(megabytes, announce)


def malformed(body: Union[bytes, str] = Malformed.body, *, content_type: str = "application/json",
              status: int = 200) -> Malformed:
    return Malformed(body.encode() if isinstance(body, str) else body, content_type, status)


@dataclass
class Recorded:
    """One request as the server saw it; header names are lower-case."""

    method: str
    path: str
    headers: Dict[str, str]
    raw: bytes
    body: Any = None
    received: float = field(default_factory=time.monotonic)

    @property
    def response_format(self) -> Optional[str]:
        """The `response_format.type` the client asked for, or None."""
        fmt = self.body.get("response_format") if isinstance(self.body, dict) else None
        return fmt.get("type") if isinstance(fmt, dict) else None

    @property
    def prompt(self) -> str:
        """The content of the last message (the judge's prompt)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return str(messages[-1].get("content", "")) if messages else ""


Responder = Callable[[Recorded], Optional[Behaviour]]


class LoopbackServer:
    """An HTTP test double on a free 127.0.0.1 port, served from a daemon thread: `start()` / `stop()`,
    or a context manager. A subclass opens its server in `_listen()`; its request handlers reach the
    double as `self.server.double`."""

    _httpd: Optional[ThreadingHTTPServer] = None

    def _listen(self) -> ThreadingHTTPServer:
        raise NotImplementedError

    def start(self) -> Self:
        self._httpd = self._listen()
        self._httpd.daemon_threads = True
        self._httpd.double = self  # type: ignore[attr-defined]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02},
                         name=type(self).__name__, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]


class ChatServer(LoopbackServer):
    """The loopback server; use as a context manager (or call `start()` / `stop()`)."""

    def __init__(self, *, default: Behaviour = Reply(DEFAULT_REPLY), responder: Optional[Responder] = None,
                 latency: float = 0.0, model_ids: Tuple[str, ...] = ("test-model",), owned_by: str = "test") -> None:
        self.default, self.responder, self.latency = default, responder, latency
        self.model_ids = model_ids
        self.owned_by = owned_by  # what /models says owns each model ("llamacpp", "vllm": who the server is)
        self.requests: List[Recorded] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self._queue: List[Behaviour] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()

    # -- lifecycle -------------------------------------------------------------------------
    def _listen(self) -> ThreadingHTTPServer:
        return _Server(("127.0.0.1", 0), _Handler)

    def stop(self) -> None:
        self._stopping.set()  # releases stalled handlers
        super().stop()

    @property
    def base_url(self) -> str:
        """The OpenAI-style base URL, e.g. http://127.0.0.1:54321/v1."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- programming and inspecting ------------------------------------------------------------
    def queue(self, *behaviours: Behaviour) -> None:
        """Answer the next chat requests with these behaviours, in order."""
        with self._lock:
            self._queue.extend(behaviours)

    @property
    def pending(self) -> int:
        """Queued behaviours not yet used."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> List[Recorded]:
        """Recorded chat-completion requests only (not `/models`)."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def reset(self) -> None:
        """Forget recorded requests and queued behaviours."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.peak_in_flight = self.in_flight

    def _record(self, request: Recorded) -> None:
        with self._lock:
            self.requests.append(request)

    def _choose(self, request: Recorded) -> Behaviour:
        chosen = self.responder(request) if self.responder else None
        if chosen is not None:
            return chosen
        with self._lock:
            return self._queue.pop(0) if self._queue else self.default

    def _enter(self, delta: int) -> None:
        with self._lock:
            self.in_flight += delta
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)


def completion_body(text: str, model: str, usage: Union[str, Tuple[int, ...], None],
                    prompt: str, finish_reason: str = "stop", logprobs: Optional[tuple] = None,
                    timings: Optional[tuple] = None) -> Dict[str, Any]:
    """An OpenAI chat.completion object."""
    body: Dict[str, Any] = {
        "id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": finish_reason}],
    }
    if logprobs is not None:
        body["choices"][0]["logprobs"] = {"content": [
            {"token": token, "logprob": dict(alts).get(token, alts[0][1]), "bytes": None,
             "top_logprobs": [{"token": a, "logprob": lp, "bytes": None} for a, lp in alts]}
            for token, alts in logprobs]}
    if usage == "auto":
        usage = (len(prompt.split()), len(text.split()))
    if usage is not None:
        p, c, *cached = usage
        body["usage"] = {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}
        if cached:
            body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached[0]}
    if timings is not None:
        body["timings"] = dict(timings)
    return body


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops connection bursts from many workers, and a
    # dropped SYN costs the client a 1 s retransmit: that would pollute every benchmark.
    request_queue_size = 256


class LoopbackHandler(BaseHTTPRequestHandler):
    """A LoopbackServer's request handler: keep-alive, no Nagle delay, nothing on stderr."""

    protocol_version = "HTTP/1.1"  # keep-alive, like real servers
    # Headers and body go out in separate writes; without this, Nagle's algorithm meets the
    # client's delayed ACK and every reply takes ~40 ms extra.
    disable_nagle_algorithm = True

    @property
    def double(self) -> Any:
        """The LoopbackServer this request reached."""
        return self.server.double  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence stderr
        pass

    def _body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _send(self, status: int, payload: bytes, content_type: str = "application/json",
              headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)


class _Handler(LoopbackHandler):
    chat = LoopbackHandler.double  # the ChatServer

    def _read(self) -> Recorded:
        raw = self._body()
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in self.headers.items()}
        request = Recorded(self.command, self.path, headers, raw, body)
        self.chat._record(request)
        return request

    def do_GET(self) -> None:
        self._read()
        if self.path.rstrip("/").endswith("/models"):
            data = [{"id": m, "object": "model", "owned_by": self.chat.owned_by} for m in self.chat.model_ids]
            self._send(200, json.dumps({"object": "list", "data": data}).encode())
        else:
            self._send(404, b'{"error": {"message": "not found"}}')

    def do_POST(self) -> None:
        request = self._read()
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(404, b'{"error": {"message": "not found"}}')
            return
        self.chat._enter(+1)
        try:
            self.chat._wait(self.chat.latency)
            self._behave(self.chat._choose(request), request)
        finally:
            self.chat._enter(-1)

    def _behave(self, b: Behaviour, request: Recorded) -> None:
        if isinstance(b, Reply):
            self.chat._wait(b.delay)
            model = request.body.get("model", "") if isinstance(request.body, dict) else ""
            wants = isinstance(request.body, dict) and request.body.get("logprobs")
            body = completion_body(each_part(b.text, request.prompt), model, b.usage, request.prompt, b.finish_reason,
                                   b.logprobs if wants else None, b.timings)
            self._send(200, json.dumps(body).encode())
        elif isinstance(b, Error):
            self._error(b)
        elif isinstance(b, Stall):
            self.chat._wait(b.seconds)
            self._hang_up()
        elif isinstance(b, Drop):
            self._hang_up()
        elif isinstance(b, Malformed):
            self._send(b.status, b.body, b.content_type)
        elif isinstance(b, Trickle):
            self._trickle(b, request)
        elif isinstance(b, Huge):
            self._huge(b, request)
        else:
            raise TypeError(f"unknown behaviour {b!r}")

    def _error(self, b: Error) -> None:
        self.chat._wait(b.delay)
        headers = {}
        if b.retry_after is not None:
            headers["Retry-After"] = f"{b.retry_after:g}"
        if b.retry_after_ms is not None:
            headers["retry-after-ms"] = f"{b.retry_after_ms:g}"
        payload = {"error": {"message": b.message, "type": "test_error", "code": b.status}}
        self._send(b.status, json.dumps(payload).encode(), headers=headers)

    def _trickle(self, b: Trickle, request: Recorded) -> None:
        body = json.dumps(completion_body(DEFAULT_REPLY, "m", "auto", request.prompt)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            for i in range(len(body)):
                if self.chat._stopping.is_set():
                    break
                self.wfile.write(body[i:i + 1])
                self.wfile.flush()
                self.chat._wait(b.every)
        except OSError:  # the client gave up: what a deadline is for
            pass
        self._hang_up()

    def _huge(self, b: Huge, request: Recorded) -> None:
        size = int(b.megabytes * 1024 * 1024)
        head, tail = b'{"choices": [{"message": {"role": "assistant", "content": "', b'"}}]}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if b.announce:
            self.send_header("Content-Length", str(len(head) + size + len(tail)))
        else:
            self.send_header("Connection", "close")
        self.end_headers()
        chunk = b"x" * 65536
        try:
            self.wfile.write(head)
            for _ in range(size // len(chunk)):
                self.wfile.write(chunk)
            self.wfile.write(b"x" * (size % len(chunk)) + tail)
        except OSError:  # the client stopped reading at its cap
            pass
        self._hang_up()

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
