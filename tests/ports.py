"""Loopback ports for the servers tests start, safe when pytest-xdist runs several workers at once.

A port read from bind(("127.0.0.1", 0)) is free only until someone binds it: another worker's
server can take it between our pick and our own server's bind. So a server started on a picked
port is started again on a new one when it exits saying its port is taken (`serve_on_free_port`),
and a port meant to refuse connections stays bound, never listening, for as long as the test needs
it (`closed_port`), so that no other worker's server can take it meanwhile.
"""
from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Iterator, List, Tuple

ATTEMPTS = 3
# What uvicorn (llama_cpp.server), Streamlit and PostgreSQL print when their port is taken.
PORT_TAKEN = ("address already in use", "is already in use", "could not bind")


def free_port() -> int:
    """A loopback port nobody holds right now (see the module note: it may be taken later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def closed_port() -> Iterator[int]:
    """A loopback port that refuses connections: bound so nobody else can take it, never listening."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        yield int(s.getsockname()[1])


def port_taken(log_text: str) -> bool:
    """Whether a server's output says it could not bind its port."""
    lowered = log_text.lower()
    return any(sign in lowered for sign in PORT_TAKEN)


def serve_on_free_port(command: Callable[[int], List[str]], ready: Callable[[int], bool], log_path: Path,
                       timeout: float, **popen: Any) -> Tuple[subprocess.Popen, int]:
    """Start `command(port)` on a free port (its output in `log_path`) and wait until `ready(port)`.

    Started again on a fresh port when it exits because the port was taken; any other exit, or no
    readiness within `timeout` seconds, raises RuntimeError with the end of the log.
    """
    for attempt in range(1, ATTEMPTS + 1):
        port = free_port()
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(command(port), stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True, **popen)
        outcome = _wait_ready(proc, port, ready, timeout)
        if outcome == "ready":
            return proc, port
        stop(proc)
        text = log_path.read_text(errors="replace")
        if outcome == "exited" and port_taken(text) and attempt < ATTEMPTS:
            continue
        raise RuntimeError(f"{command(port)[:3]} {outcome} (port {port}, attempt {attempt}):\n{text[-3000:]}")
    raise AssertionError("unreachable")


def _wait_ready(proc: subprocess.Popen, port: int, ready: Callable[[int], bool], timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return "exited"
        if ready(port):
            return "ready"
        time.sleep(0.3)
    return f"not ready after {timeout:.0f}s"


def stop(proc: subprocess.Popen) -> None:
    """Stop a server started by `serve_on_free_port` with its whole process group (helpers included)."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
