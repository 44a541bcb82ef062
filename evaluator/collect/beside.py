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
parent is gone (`--parent PID`, runs/child.py `watch_parent`) and stops the same way. A child that
exits is not restarted in a loop: its exit code and last lines stay for the Monitor page to show,
and the next page visited RESTART_AFTER seconds after its start starts it again. Two replicas of one dashboard configured alike race for the port: the loser's
Monitor page says the port is in use (set `listen` in one replica's configuration only, or run
`ragmeter collect` as its own service).

Under `ragmeter serve` the receivers are that command's children, supervised with the workers, and
it sets SUPERVISED_ENV on the dashboard: `ensure_started` then starts none and reports each one as
listening or not from a connection to its address (cli/serve.py).
"""
from __future__ import annotations

import http.client
import json
import socket
import subprocess
import threading
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..config import Config, ConfiguredCollect, listen_address
from ..errors import WorkerError
from ..runs.child import ChildProcess
from ..environment import read, secret

RESTART_AFTER = 30.0  # seconds before an exited receiver is started again
READY = "ragmeter collect: listening"  # the line `ragmeter collect` prints once its port is open
SUPERVISED_ENV = "RAGMETER_RECEIVERS_SUPERVISED"  # set by `ragmeter serve`: it runs the receivers, not the dashboard


class Receiver:
    """One project's receiver: a runs/child.py ChildProcess (the machinery of the dashboard's worker)
    started in the background, with its state for the Monitor page."""

    def __init__(self, project: str, listen: str, history: str) -> None:
        self.project, self.listen, self.history = project, listen, history
        self.child = ChildProcess(history, args=("collect", "--project", project), ready_line=READY,
                                  name=f"the trace receiver of project {project!r}",
                                  purpose=f"the trace receiver of project {project!r}", retry_after=RESTART_AFTER,
                                  log_name="ragmeter.collect.beside")

    @property
    def process(self) -> Optional["subprocess.Popen[str]"]:
        return self.child.proc

    def start(self) -> None:
        """Start it unless it runs (one that exited is started again RESTART_AFTER s after its start)."""
        try:
            self.child.ensure(wait=False)
        except WorkerError:
            pass  # status() says why

    def status(self) -> "ReceiverStatus":
        lines, proc = list(self.child.tail), self.child.proc
        if proc is None:
            return ReceiverStatus(self.project, self.listen, "exited", None, lines,
                                  str(self.child.failed or "it has not started"))
        code = proc.poll()
        if code is not None:
            return ReceiverStatus(self.project, self.listen, "exited", code, lines, self.child.why(proc))
        state = "listening" if self.child.ready.is_set() else "starting"
        return ReceiverStatus(self.project, self.listen, state, None, lines, "")

    def stop(self, timeout: float = 10.0) -> None:
        self.child.terminate()
        self.child.wait(timeout)


def local_host(listen: str) -> Optional[Tuple[str, int]]:
    """The address to reach a receiver listening on `listen` from this machine (0.0.0.0 -> 127.0.0.1)."""
    address = listen_address(listen)
    if address is None:
        return None
    host = "127.0.0.1" if address[0] in ("", "0.0.0.0") else "::1" if address[0] == "::" else address[0]
    return host, address[1]


def receiver_status(entry: ConfiguredCollect, timeout: float = 1.0) -> Optional[Dict[str, Any]]:
    """The counters a receiver on this machine answers on GET /status (with its token, read from this
    process's environment and never shown), or None when it does not answer or refuses."""
    address = local_host(entry.listen)
    if address is None:
        return None
    token = (secret(entry.token_env) or "").strip()
    conn = http.client.HTTPConnection(address[0], address[1], timeout=timeout)
    try:
        conn.request("GET", "/status", headers={"Authorization": f"Bearer {token}"} if token else {})
        response = conn.getresponse()
        body = response.read(1 << 20)
        found = json.loads(body) if response.status == 200 else None
        return found if isinstance(found, dict) else None
    except (OSError, ValueError, http.client.HTTPException):
        return None
    finally:
        conn.close()


class SupervisedReceiver(Receiver):
    """A receiver `ragmeter serve` runs and restarts: never started here; its state is whether its port answers."""

    def start(self) -> None:
        pass

    def stop(self, timeout: float = 10.0) -> None:
        pass

    def status(self) -> "ReceiverStatus":
        address = local_host(self.listen)
        if address is not None:
            try:
                socket.create_connection(address, timeout=0.5).close()
                return ReceiverStatus(self.project, self.listen, "listening", None, [], "")
            except OSError:
                pass
        return ReceiverStatus(self.project, self.listen, "exited", None, [],
                              f"nothing answers on {self.listen}; `ragmeter serve` starts it again, and its "
                              "output (prefixed collect-" + self.project + ") says why it stopped.")


@dataclass(frozen=True)
class ReceiverStatus:
    project: str
    listen: str
    state: str  # "starting" | "listening" | "exited"
    exit_code: Optional[int]
    lines: List[str]
    problem: str  # why it is not running, in the receiver's own words ("" while it runs)


_receivers: Dict[str, Receiver] = {}
_lock = threading.Lock()


def wanted(config: Config) -> List[ConfiguredCollect]:
    """The [[collect]] entries that ask for a receiver beside the dashboard."""
    return [entry for entry in config.collect if entry.listen]


def ensure_started(config: Config, history: str, on_first: Optional[Any] = None) -> List[Receiver]:
    """Start the configured receivers not running yet (an exited one after RESTART_AFTER s); all of
    them, in the configuration's order. `on_first(stop_all)` is called once, when the first starts."""
    entries = wanted(config)
    if read(SUPERVISED_ENV):
        return [SupervisedReceiver(e.project, e.listen, history) for e in entries]
    with _lock:
        first = not _receivers and bool(entries)
        for entry in entries:
            receiver = _receivers.get(entry.project)
            if receiver is not None and (receiver.listen != entry.listen or receiver.history != history):
                receiver.stop()
                receiver = None
            if receiver is None:
                receiver = _receivers[entry.project] = Receiver(entry.project, entry.listen, history)
            receiver.start()
        if first and on_first is not None:
            on_first(stop_all)
        return [_receivers[e.project] for e in entries]


def stop_all() -> None:
    with _lock:
        receivers = list(_receivers.values())
    for receiver in receivers:
        receiver.stop()
