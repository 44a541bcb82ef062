"""The OTLP/HTTP receiver: `POST /v1/traces` in, `GET /status` out, bounded everywhere.

    receiver = Receiver(sink=live, sampler=Sampler(rules), token=environment.secret("RAGMETER_COLLECT_TOKEN"))
    server = serve(receiver, "127.0.0.1", 4318)      # a ThreadingHTTPServer on its own thread
    receiver.status()                                  # the counters GET /status answers

What a sender gets, and why:
- 401 without `Authorization: Bearer <token>` when a token is set (compared in constant time);
- 411 without Content-Length; 413 when it announces more than the cap, or when the body
  decompresses to more than the cap (a gzip bomb is cut there), or holds more spans or attribute
  values than the caps (counted on the wire before any is decoded: collect/wire.py); 400 when it
  cannot be read or nests deeper than the limit. A refusal sent before the body is read is followed
  by reading and discarding the body within a bound (bytes and seconds), then `Connection: close`,
  so the sender reads its 413 instead of a connection reset;
- 503 with Retry-After when `max_in_flight` requests are already being read, or `max_connections`
  authenticated connections are open: answered at once, never queued, so a flood neither blocks nor grows.

Connections, and why a slow sender cannot lock others out: a connection holds one of the
`max_connections` slots only once it has sent a whole request head with the token. Before that it is
"pending": the request line and headers must arrive within `header_timeout` seconds in all (a deadline,
not a per-read timeout, so a byte every few seconds does not keep it), and when pending connections
pass `max_pending` (or `max_pending_per_address` from one address) the oldest pending one is closed to
make room: a sender trickling its headers is always older than one sending them at once. A body must
arrive within `header_timeout` plus its length at `min_upload_rate`. A sender that goes away is one
log line, never a traceback.
- 200 once every sampled trace in the request is stored in the live run. Traces over the
  traces-per-second limit are dropped and named in the reply's partial_success (the OTLP way to
  say "received, some rejected", which exporters do not retry), each counted under its reason.
"""
from __future__ import annotations

import hmac
import io
import json
import logging
import socket
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, Iterator, List, Optional, Protocol, Sequence, Tuple

from ..errors import RagmeterError
from ..model import EvalSample
from .otlp import JSON, PROTOBUF, BodyError, BodyTooLarge, Trace, TraceBuffer, decode, to_sample, trace_attributes
from .sampling import Sampler
from .wire import Caps

log = logging.getLogger("ragmeter.collect")
TRACES_PATH, STATUS_PATH = "/v1/traces", "/status"
_BUSY = b"ragmeter collect: too many connections; retry"


class Sink(Protocol):
    """Where sampled traces go (collect/live.py's LiveRuns)."""

    def append(self, samples: Sequence[EvalSample]) -> Tuple[str, List[Tuple[EvalSample, int]]]: ...

    def update(self, run_id: str, index: int, sample: EvalSample) -> None: ...

    def counts(self) -> Dict[str, int]: ...


@dataclass(frozen=True)
class Limits:
    max_request_bytes: int = 16 << 20  # a request's body, before and after decompression
    max_traces_per_second: float = 200.0  # sustained; bursts up to twice this
    max_in_flight: int = 4  # requests read, decoded and stored at once
    max_connections: int = 64  # authenticated connections (each holds a thread)
    max_open_traces: int = 10_000
    max_open_bytes: int = 64 << 20  # estimated size of all spans held in open traces
    max_open_age: float = 120.0  # seconds a trace stays open waiting for its root (then dropped, counted)
    max_spans_per_request: int = 20_000
    max_values_per_request: int = 400_000  # attribute values, array and kvlist items, JSON containers
    max_depth: int = 64  # nesting of a request's messages or JSON
    settle: float = 2.0  # seconds a finished trace waits for late children
    idle_timeout: float = 30.0  # a body's base deadline, and a kept-alive connection's wait for its next request
    header_timeout: float = 10.0  # the whole request line and headers, from the first byte
    min_upload_rate: int = 64 << 10  # bytes per second a body must keep up, beyond idle_timeout
    max_pending: int = 256  # connections that have not yet shown a token (the oldest closed past this)
    max_pending_per_address: int = 32
    max_linger_bytes: int = 32 << 20  # an unread body discarded after a refusal, at most this much
    linger_s: float = 5.0  # ... and for at most this long

    @property
    def caps(self) -> Caps:
        return Caps(self.max_spans_per_request, self.max_values_per_request, self.max_depth)


class TokenBucket:
    """`rate` per second, bursts up to `burst`; `take` never waits."""

    def __init__(self, rate: float, burst: float, clock: Any = time.monotonic) -> None:
        self.rate, self.burst, self._clock = rate, burst, clock
        self._tokens, self._at = burst, clock()
        self._lock = threading.Lock()

    def take(self, wanted: int) -> int:
        """How many of `wanted` may pass now (the rest are over the limit)."""
        with self._lock:
            now = self._clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            granted = min(wanted, int(self._tokens))
            self._tokens -= granted
            return granted


class Receiver:
    """Turns export requests into stored samples; every outcome counted. Thread-safe."""

    def __init__(self, sink: Sink, sampler: Sampler, *, token: str = "", limits: Limits = Limits()) -> None:
        self.sink, self.sampler, self.limits = sink, sampler, limits
        self._token = token.encode("utf-8")
        self._buffer = TraceBuffer(limits.max_open_traces, limits.settle, max_bytes=limits.max_open_bytes,
                                   max_age=limits.max_open_age)
        self._buffer_lock = threading.Lock()
        self._bucket = TokenBucket(limits.max_traces_per_second, 2 * limits.max_traces_per_second)
        self._in_flight = threading.BoundedSemaphore(limits.max_in_flight)
        self._counts: Counter = Counter()
        self._dropped: Counter = Counter()
        self._counts_lock = threading.Lock()
        self._connections: Dict[str, int] = {"authenticated": 0, "pending": 0, "max": limits.max_connections}
        self._unreturned = 0  # estimated bytes of open traces expired since memory was last handed back
        self.started = time.time()

    # -- checks the handler makes before reading a body ---------------------------------------
    @property
    def needs_token(self) -> bool:
        return bool(self._token)

    def authorized(self, header: Optional[str]) -> bool:
        if not self._token:
            return True
        scheme, _, given = (header or "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode("utf-8"), self._token)

    @contextmanager
    def admitted(self) -> Iterator[bool]:
        """A place among the requests being read now, or False at once (the sender is told to retry)."""
        got = self._in_flight.acquire(blocking=False)
        try:
            yield got
        finally:
            if got:
                self._in_flight.release()

    # -- one request ----------------------------------------------------------------------------
    def export(self, body: bytes, content_type: str, encoding: str) -> Tuple[int, bytes, str]:
        """(status, reply body, reply content type) for one POST /v1/traces body."""
        json_reply = (content_type or "").split(";")[0].strip().lower() == JSON
        self.count("requests")
        try:
            spans = decode(body, content_type, encoding, self.limits.max_request_bytes, self.limits.caps)
        except BodyTooLarge as exc:
            self.drop("too_large")
            return 413, str(exc).encode(), "text/plain"
        except BodyError as exc:
            self.drop("bad_request")
            return 400, str(exc).encode(), "text/plain"
        self.count("spans", len(spans))
        with self._buffer_lock:
            rooted, grown = self._buffer.add(spans)
            self._collect_drops()
        del spans  # the buffer holds what it keeps; the request's list goes now
        self.count("traces", len(rooted))
        rejected = self._over_limit(rooted)
        self._store(rooted)
        self._update(grown)
        return 200, _reply(json_reply, rejected), JSON if json_reply else PROTOBUF

    def _over_limit(self, rooted: List[Trace]) -> int:
        """Drop the traces past the traces-per-second limit (they leave `rooted`); their span count."""
        allowed = self._bucket.take(len(rooted))
        shed = rooted[allowed:]
        del rooted[allowed:]
        for trace in shed:
            trace.state = "rate_limit"
        if shed:
            self.drop("rate_limit", len(shed))
        return sum(len(t.spans) for t in shed)

    def _store(self, rooted: List[Trace]) -> None:
        """Sample the finished traces and store the sampled ones (before the sender hears 200)."""
        keep: List[Tuple[Trace, EvalSample]] = []
        for trace in rooted:
            decision = self.sampler.decide(trace.trace_id, trace_attributes(trace))
            if not decision.keep:
                trace.state = decision.reason
                self.count(f"not_sampled_{decision.reason}")
                continue
            sample, why = to_sample(trace, decision.used)
            if sample is None:
                trace.state = "unusable"
                self.drop("unusable")
                log.info("trace %s not scored: %s", trace.trace_id, why)
                continue
            trace.state = decision
            keep.append((trace, sample))
        if not keep:
            return
        try:
            run_id, stored = self.sink.append([s for _, s in keep])
        except Exception:
            with self._buffer_lock:  # not stored: the sender's retry must find these traces new again
                self._buffer.forget(t.trace_id for t, _ in keep)
            raise
        where = {s.sample_id: i for s, i in stored}
        for trace, sample in keep:
            if sample.sample_id in where:
                trace.state = (run_id, where[sample.sample_id], trace.state)
            else:
                trace.state = "stored_before"  # a trace sent again after it was stored
        self.count("sampled", len(keep))
        self.count("stored", len(stored))

    def _update(self, grown: List[Trace]) -> None:
        """Late children of stored traces: their samples are rewritten with them."""
        for trace in grown:
            if isinstance(trace.state, tuple):
                run_id, index, decision = trace.state
                sample, _ = to_sample(trace, decision.used)
                if sample is not None:
                    self.sink.update(run_id, index, sample)
                    self.count("late_spans_added")

    def sweep(self) -> None:
        """Expire open traces past their age (the server calls this twice a second, requests or not), and
        hand the memory of a large expiry back to the system."""
        with self._buffer_lock:
            before = self._buffer.bytes
            self._buffer.expire()
            self._collect_drops()
            freed, self._unreturned = 0, self._unreturned + max(0, before - self._buffer.bytes)
            if self._unreturned >= TRIM_AFTER_BYTES and self._buffer.bytes < self._unreturned:
                freed, self._unreturned = self._unreturned, 0
        if freed:
            _trim()

    def _collect_drops(self) -> None:
        for reason, n in self._buffer.dropped.items():
            self.drop(reason, n)
        self._buffer.dropped.clear()

    # -- counters -------------------------------------------------------------------------------
    def count(self, name: str, n: int = 1) -> None:
        with self._counts_lock:
            self._counts[name] += n

    def drop(self, reason: str, n: int = 1) -> None:
        with self._counts_lock:
            self._dropped[reason] += n

    def connections(self, authenticated: int, pending: int) -> None:
        """The server's connection counts, for /status."""
        with self._counts_lock:
            self._connections.update(authenticated=authenticated, pending=pending)

    def status(self) -> Dict[str, Any]:
        """The counters (GET /status, the CLI's status line); reads no database."""
        with self._counts_lock:
            counts, dropped = dict(self._counts), dict(self._dropped)
        with self._buffer_lock:
            open_traces = self._buffer.unfinished()
            buffer = self._buffer.usage()
        with self._counts_lock:
            connections = dict(self._connections)
        live = self.sink.counts()
        return {"received": {"requests": counts.get("requests", 0), "spans": counts.get("spans", 0),
                             "traces": counts.get("traces", 0)},
                "sampled": counts.get("sampled", 0), "stored": counts.get("stored", 0),
                "not_sampled": {k[len("not_sampled_"):]: v for k, v in counts.items() if k.startswith("not_sampled_")},
                "dropped": dropped, "open_traces": open_traces, "buffer": buffer, "connections": connections,
                "live_run": live, "scored": live.get("scored", 0), "uptime_s": round(time.time() - self.started, 1)}

    def status_line(self) -> str:
        s = self.status()
        dropped = ", ".join(f"{k} {v}" for k, v in sorted(s["dropped"].items())) or "none"
        return (f"traces {s['received']['traces']}, sampled {s['sampled']}, scored {s['scored']}/"
                f"{s['live_run'].get('total', 0)} in today's run, dropped: {dropped}")


TRIM_AFTER_BYTES = 8 << 20


def _trim() -> None:
    """Ask glibc to return freed heap pages (span text is malloc'd; Python keeps freed chunks otherwise, and
    a receiver that held its whole budget once would look that big for ever). Nothing elsewhere."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _reply(json_reply: bool, rejected: int) -> bytes:
    """An ExportTraceServiceResponse: empty (all accepted) or with partial_success naming the rejected spans."""
    message = f"{rejected} spans over the receiver's traces-per-second limit were dropped" if rejected else ""
    if json_reply:
        return json.dumps({"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}}
                          if rejected else {}).encode()
    if not rejected:
        return b""
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceResponse

    response = ExportTraceServiceResponse()
    response.partial_success.rejected_spans = rejected
    response.partial_success.error_message = message
    return response.SerializeToString()


# --- HTTP ------------------------------------------------------------------------------------------

class CollectServer(ThreadingHTTPServer):
    """A thread per connection. A connection is pending until its request head shows the token, then holds
    one of `max_connections` slots; pending ones past their caps make room by closing the oldest."""

    daemon_threads = True

    def __init__(self, address: Tuple[str, int], receiver: Receiver) -> None:
        self.receiver = receiver
        self._slots = threading.BoundedSemaphore(receiver.limits.max_connections)
        self._pending: Dict[Any, Tuple[str, float]] = {}  # socket -> (address, when accepted), oldest first
        self._authenticated: set = set()
        self.evicted: set = set()  # pending connections closed to make room (their threads end quietly)
        self._open: set = set()  # every connection being served, closed by close()
        self._open_lock = threading.Lock()
        super().__init__(address, _Handler)

    def close(self) -> None:
        """Stop accepting, and end the kept-alive connections too (a sender then reconnects elsewhere)."""
        self.shutdown()
        self.server_close()
        with self._open_lock:
            for sock in list(self._open):
                _shut(sock)

    def service_actions(self) -> None:
        """Between accepts (at least twice a second): expire open traces, requests or not."""
        self.receiver.sweep()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line, never a traceback: a sender that went away is not the receiver's failure."""
        exc = sys.exc_info()[1]
        log.info("connection from %s ended: %s", _host(client_address), _why(exc))

    def process_request(self, request: Any, client_address: Any) -> None:
        host = _host(client_address)
        with self._open_lock:
            self._make_room(host)
            self._pending[request] = (host, time.monotonic())
            self._open.add(request)
            self._report()
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._done(request)
            raise

    def _make_room(self, host: str) -> None:
        """Close the oldest pending connection (of `host` when it is over its own cap) until one more fits."""
        limits = self.receiver.limits
        mine = [s for s, (h, _) in self._pending.items() if h == host]
        victim = None
        if len(mine) >= limits.max_pending_per_address:
            victim = mine[0]
        elif len(self._pending) >= limits.max_pending:
            victim = next(iter(self._pending))
        if victim is not None:
            self.receiver.drop("pending_evicted")
            del self._pending[victim]
            self.evicted.add(victim)  # its thread ends when its next read fails; it holds no slot
            _shut(victim)

    def authenticate(self, request: Any) -> bool:
        """Move a connection that showed the token from pending to a slot; False when no slot is free."""
        with self._open_lock:
            if request in self._authenticated:
                return True
            if not self._slots.acquire(blocking=False):
                return False
            self._pending.pop(request, None)
            self._authenticated.add(request)
            self._report()
            return True

    def holds_slot(self, request: Any) -> bool:
        with self._open_lock:
            return request in self._authenticated

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._done(request)

    def _done(self, request: Any) -> None:
        with self._open_lock:
            self._open.discard(request)
            self._pending.pop(request, None)
            self.evicted.discard(request)
            if request in self._authenticated:
                self._authenticated.discard(request)
                self._slots.release()
            self._report()

    def _report(self) -> None:
        self.receiver.connections(len(self._authenticated), len(self._pending))


def _host(client_address: Any) -> str:
    return str(client_address[0]) if isinstance(client_address, tuple) and client_address else str(client_address)


def _why(exc: Optional[BaseException]) -> str:
    if isinstance(exc, (socket.timeout, TimeoutError)):
        return "timed out"
    return f"{type(exc).__name__}: {exc}" if exc is not None else "closed"


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class _Deadline(io.RawIOBase):
    """A socket's reads under one deadline for the whole request (not per read: a byte every few seconds
    does not extend it). Past it a read raises socket.timeout, which ends the connection."""

    def __init__(self, sock: socket.socket, evicted: set) -> None:
        self._sock, self._evicted = sock, evicted
        self.until = time.monotonic() + 30.0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.until - time.monotonic()
        if left <= 0:
            raise socket.timeout("the request did not arrive within the receiver's deadline")
        self._sock.settimeout(left)
        got = self._sock.recv_into(buffer)
        if self._sock in self._evicted:
            raise ConnectionAbortedError("closed to make room for newer connections (its head was too slow)")
        return got


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: CollectServer
    server_version = "ragmeter-collect"

    def setup(self) -> None:
        super().setup()
        self.rfile.close()  # the stdlib's reader times out per read; ours has one deadline per request
        self._deadline = _Deadline(self.connection, self.server.evicted)
        self.rfile = io.BufferedReader(self._deadline, 1 << 16)

    def handle_one_request(self) -> None:
        limits = self.server.receiver.limits
        authenticated = self.server.holds_slot(self.connection)
        # a kept-alive connection may wait idle_timeout for its next request; a new one header_timeout
        self._deadline.until = time.monotonic() + (limits.idle_timeout if authenticated else limits.header_timeout)
        super().handle_one_request()

    def parse_request(self) -> bool:
        ok = super().parse_request()  # the head is in: from here the body has its own deadline
        self._deadline.until = time.monotonic() + self.server.receiver.limits.header_timeout
        return ok

    def handle(self) -> None:
        try:
            super().handle()
        except (OSError, ValueError) as exc:  # reset, timed out, closed under us: one line
            log.info("connection from %s ended: %s", self.address_string(), _why(exc))
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the stdlib's name)
        log.debug("%s %s", self.address_string(), format % args)

    def log_error(self, format: str, *args: Any) -> None:  # noqa: A002  (a timed-out or malformed request)
        log.info("connection from %s: %s", self.address_string(), format % args)

    def _admit(self) -> bool:
        """The token checked and a slot taken, or the refusal sent (401 or 503); False when refused."""
        receiver = self.server.receiver
        if not receiver.authorized(self.headers.get("Authorization")):
            self._unauthorized()
            return False
        if not self.server.authenticate(self.connection):
            receiver.drop("too_many_connections")
            self._refuse(503, _BUSY, extra={"Retry-After": "1"})
            return False
        return True

    def do_GET(self) -> None:
        receiver = self.server.receiver
        if self.path.split("?", 1)[0] != STATUS_PATH:
            return self._send(404, b"ragmeter collect: GET /status, POST /v1/traces", "text/plain", close=True)
        if not self._admit():
            return None
        self._send(200, json.dumps(receiver.status()).encode(), JSON)

    def do_POST(self) -> None:
        receiver = self.server.receiver
        if self.path.split("?", 1)[0] != TRACES_PATH:
            return self._refuse(404, b"ragmeter collect: POST /v1/traces")
        if not self._admit():
            return None
        length = self.headers.get("Content-Length", "")
        if not length.strip().isdigit():
            receiver.drop("no_length")
            return self._send(411, b"send a Content-Length header", "text/plain", close=True)
        cap = receiver.limits.max_request_bytes
        if int(length) > cap:
            receiver.drop("too_large")
            return self._refuse(413, f"the body announces {int(length):,} bytes; the cap is {cap:,}".encode())
        with receiver.admitted() as ok:
            if not ok:
                receiver.drop("busy")
                return self._refuse(503, b"ragmeter collect is busy; retry", extra={"Retry-After": "1"})
            body = self._read(int(length))
            if body is None:
                return None
            try:
                status, reply, kind = receiver.export(body, self.headers.get("Content-Type", ""),
                                                      self.headers.get("Content-Encoding", ""))
            except RagmeterError as exc:  # the history cannot be written: the sender keeps the spans and retries
                log.warning("traces not stored: %s", exc)
                receiver.drop("store_failed")
                return self._send(503, f"traces not stored: {exc}".encode(), "text/plain",
                                  extra={"Retry-After": "5"})
        self._send(status, reply, kind)

    def _read(self, length: int) -> Optional[bytes]:
        """The body, read in pieces within its deadline; None (and the connection closed) when the sender
        stops short."""
        limits = self.server.receiver.limits
        self._deadline.until = time.monotonic() + limits.idle_timeout + length / max(1, limits.min_upload_rate)
        chunks, left = [], length
        while left:
            chunk = self.rfile.read(min(left, 1 << 16))
            if not chunk:
                self.close_connection = True
                return None
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)

    def _unauthorized(self) -> None:
        self.server.receiver.drop("unauthorized")
        self._refuse(401, b"send Authorization: Bearer <token>",
                     extra={"WWW-Authenticate": 'Bearer realm="ragmeter collect"'}, linger=64 << 10)

    def _refuse(self, status: int, body: bytes, *, extra: Optional[Dict[str, str]] = None,
                linger: Optional[int] = None) -> None:
        """Answer before reading the body, then read and discard what the sender is still sending (within
        `linger` bytes and the receiver's linger seconds) and close: closing with unread data would reset
        the connection, and the sender would see a reset instead of this answer and retry."""
        self._send(status, body, "text/plain", close=True, extra=extra)
        limits = self.server.receiver.limits
        announced = self.headers.get("Content-Length", "0").strip()
        left = min(int(announced) if announced.isdigit() else 0,
                   limits.max_linger_bytes if linger is None else linger)
        self._deadline.until = time.monotonic() + limits.linger_s
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)  # the answer is whole: the sender reads it at once
            while left > 0:
                chunk = self.rfile.read1(min(left, 1 << 16))
                if not chunk:
                    break
                left -= len(chunk)
        except OSError:
            pass

    def _send(self, status: int, body: bytes, kind: str, *, close: bool = False,
              extra: Optional[Dict[str, str]] = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        if close:  # the body may be unread: the connection cannot carry another request
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(body)


def serve(receiver: Receiver, host: str, port: int) -> CollectServer:
    """Start the receiver on host:port on a daemon thread; `server.close()` stops it."""
    server = CollectServer((host, port), receiver)
    threading.Thread(target=server.serve_forever, name="ragmeter-collect", daemon=True).start()
    return server
