"""A throw-away PostgreSQL server for tests: `initdb` in a temp dir, started on a free port on
127.0.0.1 as an unprivileged user (`postgres` when the tests run as root), stopped at the end.

    from pgserver import running_postgres
    with running_postgres() as url:     # postgresql://postgres@127.0.0.1:PORT/postgres
        ...

Tests use the session fixture `postgres_url` (tests/conftest.py). Where PostgreSQL cannot start,
tests skip on a developer machine and fail under CI=true, where `.ci/run` installs it.
"""
from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from typing import Iterator, List, Optional

from ports import ATTEMPTS, free_port, port_taken

START_TIMEOUT = 30.0


class PostgresUnavailable(RuntimeError):
    """PostgreSQL's server programs are missing or the cluster did not start."""


def _bindir() -> str:
    """Debian keeps the server programs out of PATH: /usr/lib/postgresql/<version>/bin."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb:
        return os.path.dirname(initdb)
    raise PostgresUnavailable("PostgreSQL is not installed (apt-get install postgresql)")


def _as_user(cmd: List[str]) -> List[str]:
    """initdb refuses to run as root: run the server programs as `postgres` then."""
    if os.geteuid() != 0:
        return cmd
    return ["runuser", "-u", "postgres", "--", *cmd]


def _run(cmd: List[str], what: str) -> None:
    done = subprocess.run(_as_user(cmd), capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise PostgresUnavailable(f"{what} failed: {done.stderr.strip() or done.stdout.strip()}")


@contextlib.contextmanager
def running_postgres() -> Iterator[str]:
    """Start a fresh cluster and yield its URL; the cluster and its files are gone afterwards."""
    bindir = _bindir()
    root = tempfile.mkdtemp(prefix="ragmeter-pg-")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres")
    data = os.path.join(root, "data")
    _run([f"{bindir}/initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"], "initdb")
    try:
        port = _start(bindir, data, root)
        _wait(port)
        yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_user([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "stop"]),
                       capture_output=True, timeout=60)
        shutil.rmtree(root, ignore_errors=True)


def _start(bindir: str, data: str, root: str) -> int:
    """Start the cluster on a free port; its port. Started again on a new port when another process
    (a parallel pytest-xdist worker's server) took the picked one first."""
    log = os.path.join(root, "log")
    for attempt in range(1, ATTEMPTS + 1):
        port = free_port()
        opts = f"-c listen_addresses=127.0.0.1 -c port={port} -k {root} -c fsync=off -c max_connections=200"
        try:
            _run([f"{bindir}/pg_ctl", "-D", data, "-o", opts, "-l", log, "-w",
                  "-t", str(int(START_TIMEOUT)), "start"], "pg_ctl start")
            return port
        except PostgresUnavailable:
            if attempt == ATTEMPTS or not port_taken(_read(log)):
                raise
    raise AssertionError("unreachable")


def _read(path: str) -> str:
    with contextlib.suppress(OSError), open(path, encoding="utf-8", errors="replace") as f:
        return f.read()
    return ""


def _wait(port: int) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.2)
    raise PostgresUnavailable(f"PostgreSQL did not accept connections on port {port}")


def fresh_database(url: str, name: str) -> str:
    """Create database `name` on the server at `url` and return its URL (one per test keeps tests apart)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    return url.rsplit("/", 1)[0] + "/" + name


def unavailable_reason() -> Optional[str]:
    try:
        _bindir()
    except PostgresUnavailable as exc:
        return str(exc)
    return None
