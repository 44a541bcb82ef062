"""Child processes kept running, their output in one stream: what `ragmeter serve` stands on.

    supervisor = Supervisor([Program("dashboard", argv, env), Program("worker-1", argv, env)])
    code = supervisor.run()   # until SIGTERM or Ctrl-C; then every child is stopped, within `grace` s

Every line a child prints is written to this process's stdout as `name | line`, in the order read, one
lock for all, so one terminal (or one journald unit) shows the whole deployment. A child that exits on
its own is started again after a back-off (1 s, 2 s, 4 s ... at most MAX_BACKOFF s; back to 1 s once it
has run STABLE_AFTER s), and the stream says so: `ragmeter serve: worker-2 (pid 811) was killed by
SIGKILL; starting it again in 1 s (restart 1)`. A child whose first start fails (no such program) is
said so and tried again the same way.

One thread starts and stops the children (the one calling `run`, normally the main thread): a child is
started with PR_SET_PDEATHSIG, which fires when the thread that started it ends, so children die with
this process even when it is killed with -9. SIGTERM, SIGINT and SIGHUP only set a flag; the loop then
sends SIGTERM to every child at once and kills those still running after `grace` seconds.
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from types import FrameType
from typing import IO, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

FIRST_BACKOFF = 1.0  # seconds before a child that exited is started again
MAX_BACKOFF = 30.0
STABLE_AFTER = 60.0  # a child that ran this long starts again after FIRST_BACKOFF, not its last delay doubled
GRACE = 12.0  # seconds the children get after SIGTERM (a worker's runs end "interrupted" within 10 s)
POLL = 0.1
_PR_SET_PDEATHSIG = 1
try:  # loaded here, not between fork and exec, where loading a library could deadlock on another thread's lock
    _PRCTL: Optional[Callable[..., int]] = ctypes.CDLL(None, use_errno=True).prctl
except (OSError, AttributeError):  # pragma: no cover - not Linux: children outlive a killed supervisor there
    _PRCTL = None


@dataclass(frozen=True)
class Program:
    """One child: its name in the stream, its command line and environment (None: this process's), its folder."""

    name: str
    argv: Tuple[str, ...]
    env: Optional[Mapping[str, str]] = None
    cwd: Optional[str] = None


@dataclass
class Child:
    """A program's current process and its restart state."""

    program: Program
    proc: Optional["subprocess.Popen[bytes]"] = None
    started_at: float = 0.0
    restarts: int = 0
    backoff: float = FIRST_BACKOFF
    due: float = 0.0  # monotonic time of the next start while it is down
    reader: Optional[threading.Thread] = None


@dataclass
class Supervisor:
    """Runs `programs` until a stop signal (or `stop()`), restarting any that exit; see the module's docstring."""

    programs: Sequence[Program]
    out: IO[str] = field(default_factory=lambda: sys.stdout)
    grace: float = GRACE
    first_backoff: float = FIRST_BACKOFF
    on_tick: Optional[Callable[[], None]] = None  # called from the loop every POLL s (readiness checks)
    children: List[Child] = field(default_factory=list)
    signalled: Optional[int] = None
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _width: int = 0

    def say(self, line: str, name: str = "") -> None:
        """One line in the stream: a child's (`name | line`) or the supervisor's own."""
        text = f"{name:<{self._width}} | {line}" if name else line
        with self._lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (OSError, ValueError):  # the terminal is gone: keep supervising
                pass

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Ask the loop to stop every child and return (what a signal handler does)."""
        self.signalled = signum

    def run(self, install_signals: bool = True) -> int:
        """Start every program, keep them running until stopped, stop them; 0 on SIGTERM, 130 on Ctrl-C."""
        self._width = max((len(p.name) for p in self.programs), default=0)
        previous: Dict[signal.Signals, object] = {}
        if install_signals:
            for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
                previous[signum] = signal.signal(signum, self._on_signal)
        try:
            self.children = [Child(p, backoff=self.first_backoff) for p in self.programs]
            for child in self.children:
                self._start(child)
            while self.signalled is None:
                self._tend()
                if self.on_tick is not None:
                    self.on_tick()
                time.sleep(POLL)
            return self.shutdown()
        finally:
            for signum, handler in previous.items():
                signal.signal(signum, handler)  # type: ignore[arg-type]

    def _on_signal(self, signum: int, frame: Optional[FrameType]) -> None:
        self.signalled = signum

    def _tend(self) -> None:
        now = time.monotonic()
        for child in self.children:
            proc = child.proc
            if proc is not None and proc.poll() is None:
                continue
            if proc is not None:  # it just exited: say so, plan its restart
                if child.reader is not None:
                    child.reader.join(2.0)  # its last lines first
                ran = now - child.started_at
                if ran >= STABLE_AFTER:
                    child.backoff = self.first_backoff
                child.restarts += 1
                child.due = now + child.backoff
                self.say(f"ragmeter serve: {child.program.name} (pid {proc.pid}) {exit_words(proc.returncode)} after "
                         f"{ran:.0f} s; starting it again in {child.backoff:g} s (restart {child.restarts})")
                child.backoff = min(child.backoff * 2, MAX_BACKOFF)
                child.proc = None
            elif now >= child.due:
                self._start(child)

    def _start(self, child: Child) -> None:
        program = child.program
        try:
            proc = subprocess.Popen(list(program.argv), env=dict(program.env) if program.env is not None else None,
                                    cwd=program.cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
        except OSError as exc:
            child.restarts += 1
            child.due = time.monotonic() + child.backoff
            self.say(f"ragmeter serve: {program.name} could not start ({exc.strerror or exc}); trying again in "
                     f"{child.backoff:g} s")
            child.backoff = min(child.backoff * 2, MAX_BACKOFF)
            return
        child.proc, child.started_at = proc, time.monotonic()
        child.reader = threading.Thread(target=self._forward, args=(program.name, proc), daemon=True,
                                        name=f"ragmeter-serve-{program.name}")
        child.reader.start()
        self.say(f"ragmeter serve: started {program.name} (pid {proc.pid})")

    def _forward(self, name: str, proc: "subprocess.Popen[bytes]") -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            self.say(raw.decode("utf-8", "replace").rstrip("\r\n"), name)

    def shutdown(self) -> int:
        """SIGTERM to every child at once, SIGKILL to those running `grace` s later; the exit code for the signal."""
        running = [c for c in self.children if c.proc is not None and c.proc.poll() is None]
        self.say(f"ragmeter serve: stopping {len(running)} processes" +
                 (f" ({signal.Signals(self.signalled).name})" if self.signalled else ""))
        for child in running:
            _send(child.proc, signal.SIGTERM)
        deadline = time.monotonic() + self.grace
        for child in running:
            assert child.proc is not None
            try:
                child.proc.wait(max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                self.say(f"ragmeter serve: {child.program.name} (pid {child.proc.pid}) did not stop within "
                         f"{self.grace:g} s; killed")
                _send(child.proc, signal.SIGKILL)
                child.proc.wait()
        for child in self.children:
            if child.reader is not None:
                child.reader.join(2.0)
        self.say("ragmeter serve: stopped")
        return 130 if self.signalled == signal.SIGINT else 0


def exit_words(code: Optional[int]) -> str:
    """How a process ended, in words: "exited with code 2", "was killed by SIGKILL"."""
    if code is not None and code < 0:
        try:
            return f"was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"was killed by signal {-code}"
    return f"exited with code {code}"


def _send(proc: Optional["subprocess.Popen[bytes]"], signum: int) -> None:
    if proc is not None and proc.poll() is None:
        try:
            proc.send_signal(signum)
        except ProcessLookupError:
            pass


def _die_with_parent() -> None:  # pragma: no cover - runs in the child, between fork and exec
    """In the child: SIGTERM when the supervisor's starting thread ends (the supervisor killed with -9 too)."""
    if _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    os.setpgrp()  # Ctrl-C in the terminal reaches the supervisor only; it stops the children in order
