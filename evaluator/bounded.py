"""HTTP calls with a total deadline and a cap on reply bytes, whatever the other side does.

httpx2's timeouts are per phase and per read: a server that trickles one byte every few seconds
keeps a call alive for as long as it likes, and a 100 MB reply is read whole into memory. The
judge (judges/openai.py) and HTTP targets (targets/http.py) send through `BoundedTransport`:

- the call, connect and every read included, ends at `deadline` seconds with `DeadlineExceeded`
  (an `httpx2.TimeoutException`, so callers that handle timeouts handle it too). The request runs
  on a daemon thread the caller waits on, so the deadline holds in every phase; the abandoned
  thread stops at its next chunk (its socket is shut down when the headers are in), or at its
  own per-read timeout, and holds at most `max_bytes`;
- a reply longer than `max_bytes` (by its Content-Length, or once that many bytes have arrived)
  fails with `ReplyTooLarge` without reading further; compressed replies are not asked for, so
  the cap is on what would be decoded.

`MAX_RETRY_AFTER` is the longest wait a server may ask for (Retry-After) before ragmeter gives
up on that call instead of waiting.
"""
from __future__ import annotations

import socket
import threading
import urllib.request
from typing import Any, Optional

import httpx2

MAX_RETRY_AFTER = 30.0  # seconds; a server asking for longer fails the call at once
JUDGE_REPLY_BYTES = 8 * 1024 * 1024  # a judgement, even with token logprobs, is well under this
TARGET_REPLY_BYTES = 32 * 1024 * 1024  # an answer with whole retrieved pages

_THREAD_NAME = "ragmeter-http"


class DeadlineExceeded(httpx2.TimeoutException):
    """No complete reply within the call's total deadline."""


class ReplyTooLarge(httpx2.TransportError):
    """The reply is longer than the cap on reply bytes."""


def over_retry_cap(seconds: Optional[float]) -> bool:
    """Whether a server's Retry-After asks for longer than ragmeter waits (the call then fails)."""
    return seconds is not None and seconds > MAX_RETRY_AFTER


def mib(size: int) -> str:
    return f"{size / (1024 * 1024):g} MiB"


class _Call:
    """One request on its own thread: the response with its body read, or the error."""

    def __init__(self, inner: httpx2.BaseTransport, request: httpx2.Request, max_bytes: int) -> None:
        self.inner, self.request, self.max_bytes = inner, request, max_bytes
        self.done = threading.Event()
        self.abandoned = False
        self.response: Optional[httpx2.Response] = None
        self.error: Optional[BaseException] = None
        self._raw: Optional[httpx2.Response] = None

    def run(self) -> None:
        try:
            self.response = self._fetch()
        except BaseException as exc:  # handed to the waiting caller, which re-raises it
            self.error = exc
        finally:
            self.done.set()

    def _fetch(self) -> Optional[httpx2.Response]:
        raw = self._raw = self.inner.handle_request(self.request)
        try:
            declared = raw.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise self._too_large(f"announces {int(declared):,} bytes")
            body = bytearray()
            for chunk in raw.stream:  # type: ignore[union-attr]  # a transport's stream is sync
                if self.abandoned:
                    return None
                body += chunk
                if len(body) > self.max_bytes:
                    raise self._too_large("kept coming")
        finally:
            raw.close()
        return httpx2.Response(raw.status_code, headers=raw.headers, content=bytes(body),
                               request=self.request, extensions={"http_version": raw.extensions.get("http_version",
                                                                                                   b"HTTP/1.1")})

    def _too_large(self, how: str) -> ReplyTooLarge:
        return ReplyTooLarge(f"the reply {how}, more than the {mib(self.max_bytes)} ragmeter reads",
                             request=self.request)

    def abandon(self) -> None:
        """Past the deadline: stop reading, and wake a read blocked on the socket."""
        self.abandoned = True
        stream = self._raw.extensions.get("network_stream") if self._raw is not None else None
        sock = stream.get_extra_info("socket") if stream is not None else None
        if isinstance(sock, socket.socket):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class BoundedTransport(httpx2.BaseTransport):
    """An httpx2 transport whose every request ends within `deadline` s and reads <= `max_bytes`."""

    def __init__(self, deadline: float, max_bytes: int, inner: Optional[httpx2.BaseTransport] = None) -> None:
        self.deadline, self.max_bytes = float(deadline), int(max_bytes)
        self._inner = inner if inner is not None else httpx2.HTTPTransport()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"  # the cap is on the text itself, not a zip of it
        call = _Call(self._inner, request, self.max_bytes)
        threading.Thread(target=call.run, name=_THREAD_NAME, daemon=True).start()
        if not call.done.wait(self.deadline):
            call.abandon()
            raise DeadlineExceeded(f"no complete reply within {self.deadline:g} s (the call's total deadline)",
                                   request=request)
        if call.error is not None:
            raise call.error
        assert call.response is not None
        return call.response

    def close(self) -> None:
        self._inner.close()


def inner_transport(url: str, **options: Any) -> httpx2.HTTPTransport:
    """The plain transport for `url`, through the proxy the environment names for it (as httpx2
    would pick for its default transport; a custom transport gets none unless given)."""
    scheme = url.split(":", 1)[0].lower()
    proxy = urllib.request.getproxies().get(scheme)
    host = httpx2.URL(url).host
    if proxy and not urllib.request.proxy_bypass(host):
        options["proxy"] = proxy
    return httpx2.HTTPTransport(**options)


def bounded_client(url: str, deadline: float, max_bytes: int, **client_options: Any) -> httpx2.Client:
    """An httpx2 client for `url` whose calls are bounded as BoundedTransport says."""
    limits = client_options.pop("limits", httpx2.Limits(max_connections=1000, max_keepalive_connections=100))
    transport = BoundedTransport(deadline, max_bytes, inner_transport(url, limits=limits))
    return httpx2.Client(transport=transport, timeout=deadline, follow_redirects=True, **client_options)
