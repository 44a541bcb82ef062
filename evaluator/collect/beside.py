"""Receivers started beside the dashboard: one `ragmeter collect --project P` child process for each
[[collect]] entry of the team configuration that sets `listen`.

    receivers = ensure_started(config, history)   # idempotent: the dashboard calls it on every page
    for r in receivers: r.status()                # "listening", "starting" or "exited" + its last line

Why child processes, not threads: a flood of OTLP requests must not slow the pages (the receiver
parses protobuf and scores in its own interpreter), and the CLI is the one tested way to run a
receiver; the child reads its listen address, token variable, alert rules and webhook variable from
the same configuration file (cli/collect.py `from_entry`), so no secret is on its command line.

The children live and die with the dashboard: `stop_all` at exit (SIGTERM: the receiver closes its
port, the rows in flight are kept), and a child whose dashboard was killed outright notices its
parent is gone (`--parent PID`, runs/child.py `watch_parent`) and stops the same way. A child that exits is not restarted in a loop: its exit code and
last lines stay for the Monitor page to show, and the next page visited after RESTART_AFTER seconds
starts it again. Two replicas of one dashboard configured alike race for the port: the loser's
Monitor page says the port is in use (set `listen` in one replica's configuration only, or run
`ragmeter collect` as its own service).
"""
from __future__ import annotations

import collections
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Deque, Dict, List, Optional

from ..config import Config, ConfiguredCollect

log = logging.getLogger("ragmeter.collect.beside")
RESTART_AFTER = 30.0  # seconds before an exited receiver is started again
KEEP_LINES = 20  # the child's last output lines kept for the Monitor page


@dataclass
class Receiver:
    """One child receiver: its project, address, process and last output lines."""

    project: str
    listen: str
    history: str
    process: Optional[subprocess.Popen] = None
    started: float = 0.0
    lines: Deque[str] = field(default_factory=lambda: collections.deque(maxlen=KEEP_LINES))

    def start(self) -> None:
        self.lines.clear()
        self.started = time.monotonic()
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "evaluator", "collect", "--project", self.project, "--parent", str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                # the history in the environment, not argv: a database URL may hold a password
                env=dict(os.environ, RAGMETER_HISTORY=self.history, PYTHONUNBUFFERED="1"),
                start_new_session=True)
        except OSError as exc:
            self.process = None
            self.lines.append(f"could not start: {exc}")
            return
        threading.Thread(target=self._read, args=(self.process,), daemon=True,
                         name=f"ragmeter-collect-{self.project}").start()

    def _read(self, process: subprocess.Popen) -> None:
        """Keep the child's last lines, and pass them to the dashboard's log (the operator's console)."""
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append(line.rstrip())
            log.info("collect %s: %s", self.project, line.rstrip())

    def status(self) -> "ReceiverStatus":
        if self.process is None:
            return ReceiverStatus(self.project, self.listen, "exited", None, list(self.lines))
        code = self.process.poll()
        if code is not None:
            return ReceiverStatus(self.project, self.listen, "exited", code, list(self.lines))
        listening = any(line.startswith("ragmeter collect: listening") for line in self.lines)
        return ReceiverStatus(self.project, self.listen, "listening" if listening else "starting", None,
                              list(self.lines))

    def stop(self, timeout: float = 10.0) -> None:
        process = self.process
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(5)


@dataclass(frozen=True)
class ReceiverStatus:
    project: str
    listen: str
    state: str  # "starting" | "listening" | "exited"
    exit_code: Optional[int]
    lines: List[str]

    @property
    def problem(self) -> str:
        """Why it is not running, in the child's own words (its last error line), or ""."""
        if self.state != "exited":
            return ""
        said = [line for line in self.lines if line.strip()]
        return said[-1] if said else f"it exited with code {self.exit_code}"


_receivers: Dict[str, Receiver] = {}
_lock = threading.Lock()


def wanted(config: Config) -> List[ConfiguredCollect]:
    """The [[collect]] entries that ask for a receiver beside the dashboard."""
    return [entry for entry in config.collect if entry.listen]


def ensure_started(config: Config, history: str, on_first: Optional[Any] = None) -> List[Receiver]:
    """Start the configured receivers not running yet (an exited one after RESTART_AFTER s); all of
    them, in the configuration's order. `on_first(stop_all)` is called once, when the first starts."""
    entries = wanted(config)
    with _lock:
        first = not _receivers and bool(entries)
        for entry in entries:
            receiver = _receivers.get(entry.project)
            if receiver is None or receiver.listen != entry.listen or receiver.history != history:
                if receiver is not None:
                    receiver.stop()
                receiver = _receivers[entry.project] = Receiver(entry.project, entry.listen, history)
                receiver.start()
            elif receiver.status().state == "exited" and time.monotonic() - receiver.started > RESTART_AFTER:
                log.warning("collect %s: the receiver had exited; starting it again", entry.project)
                receiver.start()
        if first and on_first is not None:
            on_first(stop_all)
        return [_receivers[e.project] for e in entries]


def stop_all() -> None:
    with _lock:
        receivers = list(_receivers.values())
    for receiver in receivers:
        receiver.stop()
