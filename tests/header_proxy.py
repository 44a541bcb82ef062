"""A sign-in proxy for tests: a reverse proxy on 127.0.0.1 that sets the identity header on every
request it forwards, websocket handshakes included (Chromium does not send a context's extra
headers on a websocket handshake, so only a proxy can put one there, as in production).

`HeaderProxy(upstream_port, header, values)` removes every copy of `header` the client sent and
adds one line per value, as raw UTF-8 bytes (what a real proxy sends for a non-ASCII name); two
values model a proxy that appends instead of replacing. Plain HTTP requests are forwarded with
`Connection: close`, so every request's head passes through here; a websocket is piped as is
once its handshake has been rewritten.
"""
from __future__ import annotations

import socket
import threading
from typing import List, Sequence

_HEAD_LIMIT = 64 * 1024


class HeaderProxy:
    def __init__(self, upstream_port: int, header: str, values: Sequence[str]) -> None:
        self.upstream_port, self.header = upstream_port, header.encode("ascii")
        self.values: List[bytes] = [v.encode("utf-8") for v in values]
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.server.close()

    def __enter__(self) -> "HeaderProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        data = b""
        while b"\r\n\r\n" not in data and len(data) < _HEAD_LIMIT:
            chunk = client.recv(65536)
            if not chunk:
                client.close()
                return
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        try:
            upstream = socket.create_connection(("127.0.0.1", self.upstream_port), timeout=30)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        upstream.sendall(self._rewrite(head) + b"\r\n\r\n" + rest)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        _pipe(client, upstream)

    def _rewrite(self, head: bytes) -> bytes:
        lines = head.split(b"\r\n")
        upgrade = any(line.lower().startswith(b"upgrade:") for line in lines[1:])
        kept = [line for line in lines[1:] if not line.lower().startswith(self.header.lower() + b":")
                and (upgrade or not line.lower().startswith(b"connection:"))]
        added = [self.header + b": " + value for value in self.values]
        return b"\r\n".join([lines[0], *kept, *added, *([] if upgrade else [b"Connection: close"])])


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
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
