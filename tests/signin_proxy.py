"""A sign-in proxy in front of the dashboard, the way a team deploys it (oauth2-proxy, an SSO gateway).

The browser never names its user: it holds a session cookie, and the proxy turns that cookie into
the identity header on every request it forwards, websocket handshakes included, after dropping
any identity header the client sent. Browser tests need this because Chromium does not add a
context's `extra_http_headers` to websocket handshakes, and Streamlit reads `st.context.headers`
from the websocket: a header set in the browser reaches the page's HTTP requests only.

    with SignInProxy(upstream_port) as proxy:
        context.add_cookies([proxy.cookie("vera@example.com", url)])

`SignInProxy(port, header, values=[...])` sends those header lines on every request instead, whatever
the cookie: two values model a proxy that appends instead of replacing, and values go out as raw
UTF-8 bytes, as a real proxy sends a non-ASCII name.
"""
from __future__ import annotations

import socket
import threading
from typing import List, Optional, Sequence, Tuple
from urllib.parse import quote, unquote

COOKIE = "ragmeter_test_user"


class SignInProxy:
    def __init__(self, upstream_port: int, header: str = "X-Forwarded-Email",
                 values: Optional[Sequence[str]] = None) -> None:
        self.upstream_port, self.header = upstream_port, header
        self.values = None if values is None else list(values)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def __enter__(self) -> "SignInProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self._closed = True
        self._listener.close()

    @staticmethod
    def cookie(user: str, url: str) -> dict:
        """The session cookie of `user` for a browser context (add_cookies)."""
        return {"name": COOKIE, "value": quote(user, safe=""), "url": url}

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            head, rest = _read_head(client)
            if head is None:
                return
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=120)
            upstream.sendall(self._rewrite(head) + rest)
            sending = threading.Thread(target=_pipe, args=(client, upstream), daemon=True)
            sending.start()
            _pipe(upstream, client)
            sending.join(timeout=5)
            upstream.close()
        except OSError:
            pass
        finally:
            client.close()

    def _rewrite(self, head: bytes) -> bytes:
        """The request head with the identity header set from the cookie (any sent by the client dropped);
        a plain request asks the server to close afterwards, so each request passes through here."""
        lines = head.decode("latin-1").split("\r\n")
        headers: List[Tuple[str, str]] = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers.append((name.strip(), value.strip()))
        upgrade = any(n.lower() == "upgrade" for n, _ in headers)
        users = [u for u in [_cookie_user(headers)] if u is not None] if self.values is None else self.values
        kept = [(n, v) for n, v in headers
                if n.lower() != self.header.lower() and (upgrade or n.lower() != "connection")]
        if not upgrade:
            kept.append(("Connection", "close"))
        out = [lines[0].encode("latin-1")] + [f"{n}: {v}".encode("latin-1") for n, v in kept]
        out += [self.header.encode("latin-1") + b": " + user.encode("utf-8") for user in users]  # UTF-8, as proxies send
        return b"\r\n".join(out) + b"\r\n\r\n"


def _cookie_user(headers: List[Tuple[str, str]]) -> Optional[str]:
    for name, value in headers:
        if name.lower() == "cookie":
            for part in value.split(";"):
                key, _, val = part.strip().partition("=")
                if key == COOKIE:
                    return unquote(val)
    return None


def _read_head(sock: socket.socket) -> Tuple[Optional[bytes], bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            sock.close()
            return None, b""
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while True:
            chunk = source.recv(65536)
            if not chunk:
                break
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for sock in (source, sink):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
