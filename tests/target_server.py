"""A real HTTP endpoint on 127.0.0.1 standing in for a user's RAG pipeline, for target tests.

    with TargetServer(lambda body: (200, {"answer": "Paris"})) as srv:
        HttpTarget(srv.url).call("Capital of France?")
        srv.requests[0]  # (path, headers dict (lower-cased names), parsed JSON body)

The handler gets the parsed request body and returns (status, JSON-able reply), or
(status, reply, headers), or a `Raw(bytes)` reply to send non-JSON; `Stall(seconds)` holds the
request that long before answering 200 {"answer": "late"}; `Trickle(every)` answers 200 and sends
its body one byte every `every` seconds; `Huge(megabytes)` answers 200 with a body that large.

`demo_pipeline()` serves ragmeter's own demo pipeline (evaluator.demo.server) the same way.
"""
from __future__ import annotations

import contextlib
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Tuple


@dataclass(frozen=True)
class Raw:
    data: bytes
    content_type: str = "text/html"


@dataclass(frozen=True)
class Stall:
    seconds: float


@dataclass(frozen=True)
class Trickle:
    every: float


@dataclass(frozen=True)
class Huge:
    megabytes: float


Handler = Callable[[Any], Any]


class TargetServer:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: List[Tuple[str, Dict[str, str], Any]] = []
        self._lock = threading.Lock()
        outer = self

        class _H(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw) if raw else None
                with outer._lock:
                    outer.requests.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                outer._answer(self, outer.handler(body))

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/ask"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _answer(self, h: BaseHTTPRequestHandler, out: Any) -> None:
        if isinstance(out, (Trickle, Huge)):
            self._stream(h, out)
            return
        if isinstance(out, Stall):
            time.sleep(out.seconds)
            out = (200, {"answer": "late"})
        status, reply, headers = (*out, {}) if len(out) == 2 else out
        if isinstance(reply, Raw):
            data, ctype = reply.data, reply.content_type
        else:
            data, ctype = json.dumps(reply).encode(), "application/json"
        try:
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                h.send_header(name, value)
            h.end_headers()
            h.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def _stream(self, h: BaseHTTPRequestHandler, out: Any) -> None:
        data = b'{"answer": "' + b"x" * int(getattr(out, "megabytes", 0) * 2**20) + b'"}'
        try:
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Connection", "close")  # no Content-Length: read until the server closes
            h.end_headers()
            if isinstance(out, Huge):
                h.wfile.write(data)
                return
            for i in range(len(data)):
                h.wfile.write(data[i:i + 1])
                h.wfile.flush()
                time.sleep(out.every)
        except (BrokenPipeError, ConnectionResetError, OSError):  # the client gave up
            pass

    def __enter__(self) -> "TargetServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextlib.contextmanager
def demo_pipeline() -> Iterator[str]:
    """ragmeter's demo pipeline (evaluator.demo.server) served from this process on a free loopback port;
    yields its base URL (`/ask`, `/agent`)."""
    from evaluator.demo.server import make_server

    server = make_server(port=0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
