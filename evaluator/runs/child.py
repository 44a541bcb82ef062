"""The dashboard's local worker, scoring in a process of its own: `local_worker(history)`.

    workers = local_worker("~/.ragmeter/history.sqlite3")   # started on first use; None when workers are external
    workers.shutdown(8.0)                                    # runs in flight end "interrupted", rows saved

Why a child process: scoring an offline run is CPU-bound Python, and so are the dashboard's reruns (a
watched run's progress fragment every half second, the sidebar). In one interpreter they take turns
on one GIL: with the Evaluate page open, a large offline run scored at 0.41x its unwatched speed
(bench/live_progress.py). The child, `python -m evaluator worker --parent PID`, has its own interpreter.

What goes where. Unpinned jobs (runs/jobs.py: nothing to hand off) are the child's: it builds the
judge from the stored settings and the environment it inherited (the key from the judge's
`api_key_env`), as any `ragmeter worker` does. Pinned jobs (a typed API key, a Judge object, target
header values) stay in this process, on a `PinnedWorker` thread that claims nothing else. They are
not handed to the child over a pipe: a Judge object (a plugin's, a test's) cannot be copied into
another process, a typed key would live in two processes instead of one, and a pinned run waits on
an API (judge- or network-bound), so sharing the GIL costs it little.

Lifecycle. The child gets this process's environment, this package first on PYTHONPATH (it runs
this code) and the history in RAGMETER_HISTORY (not argv: a PostgreSQL URL may carry a password,
and any user of the machine can read argv with `ps`). It is ready when it prints its "waiting for
runs" line; one that exits first, or stays silent START_TIMEOUT s, is a WorkerError the page shows.
Its output goes to this process's log. `shutdown` (the dashboard's exit hook, run on SIGTERM) sends
it SIGTERM: its runs end "interrupted" with their rows saved, then it exits. A dashboard killed with
-9 cannot say anything: the child sees its parent pid change (`watch_parent`, in the child) and
shuts down the same way. PR_SET_PDEATHSIG would not do: it fires when the *thread* that started the
child ends, and Streamlit runs each page script on a thread that ends. A child found dead at the
next use is started again, and the log says so.
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import sysconfig
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Deque, Dict, List, Optional, Tuple, Union

from ..errors import WorkerError
from ..store.history import RunStore
from ..store.jobs import JobInfo
from .jobs import PROCESS_TOKEN
from .worker import Worker
from ..environment import for_child, variables

READY = "waiting for runs"  # the line `ragmeter worker` prints once it polls the queue
START_TIMEOUT = 60.0  # seconds a starting child may take (a busy 2-core machine imports slowly)
RETRY_AFTER = 10.0  # seconds before a child that could not start is tried again (pages ask every 0.5 s)
PARENT_POLL = 0.5  # seconds between the child's looks at its parent
PACKAGE_ROOT = str(Path(__file__).resolve().parents[2])  # the folder holding this `evaluator` package


class PinnedWorker(Worker):
    """A thread worker claiming only the jobs pinned to this process: the others are the child's."""

    def _next_job(self) -> Optional[JobInfo]:
        return self.queue.claim(self.worker_id, pinned=PROCESS_TOKEN, only_pinned=True)


@dataclass
class ChildProcess:
    """One `python -m evaluator ARGS --parent PID` process on the history at `history`: the dashboard's
    worker (the defaults), or a trace receiver started beside it (collect/beside.py)."""

    history: str  # the location as given (a PostgreSQL URL with its password: only the child's env sees it)
    args: Tuple[str, ...] = ("worker",)
    ready_line: str = READY  # what it prints once it is at work
    name: str = "the dashboard's worker process"  # in the log
    purpose: str = "the worker process that scores this dashboard's runs"  # in the error a page shows
    retry_after: float = RETRY_AFTER
    log_name: str = "ragmeter.worker"
    proc: Optional["subprocess.Popen[str]"] = None
    started_at: float = 0.0
    ready: threading.Event = field(default_factory=threading.Event)
    tail: Deque[str] = field(default_factory=lambda: deque(maxlen=20))  # its last lines, for a failure
    failed: Optional[WorkerError] = None
    failed_at: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def pid(self) -> Optional[int]:
        return self.proc.pid if self.proc is not None else None

    @property
    def log(self) -> logging.Logger:
        return logging.getLogger(self.log_name)

    def ensure(self, wait: bool = True) -> None:
        """Start the child unless it is running (one that died is started again, said in the log).
        With `wait`: until it is at work, else WorkerError (the same error again for `retry_after` s).
        Without: it starts in the background, and one that died within `retry_after` s of its start
        is left dead that long (its last lines say why; no restart loop)."""
        with self.lock:
            if self.proc is not None and self.proc.poll() is None:
                return
            if self.failed is not None and time.monotonic() - self.failed_at < self.retry_after:
                raise self.failed
            if self.proc is not None:
                if not wait and time.monotonic() - self.started_at < self.retry_after:
                    return
                self.log.warning("ragmeter: %s (pid %d) exited with code %s; starting a new one", self.name,
                                 self.proc.pid, self.proc.returncode)
            try:
                self.proc, self.failed = self._start(wait), None
            except WorkerError as exc:
                self.proc, self.failed, self.failed_at = None, exc, time.monotonic()
                raise

    def _start(self, wait: bool) -> "subprocess.Popen[str]":
        env = for_child(RAGMETER_HISTORY=self.history, PYTHONPATH=python_path(), PYTHONUNBUFFERED="1")
        self.tail.clear()
        self.ready = ready = threading.Event()
        self.started_at = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "evaluator", *self.args, "--parent", str(os.getpid())],
                                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, encoding="utf-8", errors="replace")
        reader = threading.Thread(target=self._forward, args=(proc, ready), name=f"ragmeter-{self.args[0]}-output",
                                  daemon=True)
        reader.start()
        deadline = time.monotonic() + START_TIMEOUT
        while wait and not ready.wait(0.05):
            if proc.poll() is not None or time.monotonic() > deadline:
                silent = proc.poll() is None
                self._kill(proc)
                reader.join(5.0)  # its last lines say why
                raise WorkerError(f"{self.purpose} could not start: {self.why(proc, silent)}; the dashboard's "
                                  "log has its output")
        self.log.info("ragmeter: %s started (pid %d)", self.name, proc.pid)
        return proc

    def _forward(self, proc: "subprocess.Popen[str]", ready: threading.Event) -> None:
        """Copy the child's output to this process's log; `ready` once it says it is at work."""
        assert proc.stdout is not None
        own = f"ragmeter {self.args[0]}"  # its progress lines; anything else (an error, a warning) is a warning
        for raw in proc.stdout:
            line = raw.rstrip()
            self.tail.append(line)
            if self.ready_line in line:
                ready.set()
            (self.log.info if line.startswith(own) else self.log.warning)("%s", line)

    def why(self, proc: "subprocess.Popen[str]", silent: bool = False) -> str:
        """Why it is not running, in the CLI's own words when it said any (never a traceback)."""
        said = [line for line in self.tail if line.startswith("ragmeter: error: ")]
        if said:
            return said[-1][len("ragmeter: error: "):]
        if silent:
            return f"it did not start within {START_TIMEOUT:.0f} s"
        return f"it exited with code {proc.returncode}"

    def terminate(self) -> None:
        """Ask the child to stop (SIGTERM): a worker's runs end "interrupted", their rows saved."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)

    def wait(self, timeout: float) -> bool:
        """Wait for the child to exit after `terminate`; killed after `timeout` s (False then)."""
        if self.proc is None:
            return True
        try:
            self.proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            self.log.warning("ragmeter: %s (pid %d) did not stop within %.0f s; killed", self.name, self.proc.pid,
                             timeout)
            self._kill(self.proc)
            return False

    @staticmethod
    def _kill(proc: "subprocess.Popen[str]") -> None:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def python_path() -> str:
    """The child's PYTHONPATH: this package's folder first, so that it runs this code (a checkout, an
    editable install), unless that folder is the interpreter's own site-packages (put first, it could
    shadow the standard library)."""
    current = variables().get("PYTHONPATH", "")
    paths = sysconfig.get_paths()
    if PACKAGE_ROOT in (paths["purelib"], paths["platlib"]):
        return current
    return os.pathsep.join(p for p in (PACKAGE_ROOT, current) if p)


@dataclass
class LocalWorkers:
    """A history's local worker: its child process (unpinned jobs) and this process's PinnedWorker."""

    pinned: PinnedWorker
    child: ChildProcess

    def shutdown(self, timeout: float = 8.0) -> bool:
        """Claim no more; runs in flight here and in the child end "interrupted", rows saved. True when
        both stopped within `timeout` s (a child still running then is killed)."""
        deadline = time.monotonic() + timeout
        self.child.terminate()  # first: the child stops its runs while this process stops its own
        stopped = self.pinned.shutdown(timeout)
        return self.child.wait(max(0.5, deadline - time.monotonic())) and stopped


_local: Dict[str, LocalWorkers] = {}
_local_lock = threading.Lock()


def local_worker(store_location: Union[RunStore, str, "os.PathLike[str]"]) -> Optional[LocalWorkers]:
    """This process's local worker for a history: started on first use, its child started again when it
    died; None when the team config says `[runs] workers = "external"`. WorkerError when the child
    cannot start (the PinnedWorker runs all the same)."""
    from ..config import current

    runs = current().runs
    if runs.workers == "external":
        return None
    store = store_location if isinstance(store_location, RunStore) else RunStore(store_location)
    with _local_lock:
        workers = _local.get(store.location)
        if workers is None:
            # pinned runs (a typed key, a judge object) never go to Ray: their key cannot travel
            pinned = PinnedWorker(store, limits=runs.limits, engine="local")
            workers = _local[store.location] = LocalWorkers(pinned, ChildProcess(str(store.path)))
            pinned.start()
    workers.child.ensure()
    return workers


def stop_all(timeout: float = 8.0) -> bool:
    """Shut down every local worker of this process (the dashboard's exit); True when all stopped in time."""
    with _local_lock:
        every: List[LocalWorkers] = list(_local.values())
        _local.clear()
    for workers in every:
        workers.child.terminate()  # all children stop at once
    return all([workers.shutdown(timeout) for workers in every])


def watch_parent(parent: int) -> threading.Thread:
    """In the child: when process `parent` is gone (killed with -9, say), SIGTERM this process, which
    then shuts down as on any SIGTERM (runs/worker.py `install_sigterm`)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL)
        quiet = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):  # the parent read this output: writing on would fail (EPIPE) mid-shutdown
            os.dup2(quiet, fd)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=watch, name="ragmeter-parent-watch", daemon=True)
    thread.start()
    return thread
