"""A Python function as a target: `package.module:function` or `path/to/file.py:function`.

The function takes the question and returns a string, `(answer, contexts)` or a dict with
`answer`, `contexts` and optional `tool_calls` (see shapes.py for the forms each may take).
`async def` functions run on one event loop per worker thread, so clients bound to a loop keep
working from call to call; their timeout is enforced by cancelling them. A plain function runs on
a helper thread kept for each worker thread (thread-local state stays valid from call to call),
and the worker waits for it at most `timeout` seconds, or until the run is stopped: a Python
thread cannot be killed, so a call past its timeout is abandoned, not ended. It goes on in the
background (a daemon thread, so it never keeps the process alive) and whatever it returns is
dropped; the next call gets a fresh helper thread.
"""
from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import os
import queue
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Optional

from ..errors import TargetConfigError, TargetError
from .base import TargetStopped
from ..io.shapes import TargetResponse, response_from_value

_POLL = 0.1  # seconds between looks at the stop flag while a call runs
_GRACE = 1.0  # seconds past its timeout an async call gets to end by cancellation before it is abandoned


def load_function(spec: str) -> Callable[..., Any]:
    """The function named by `module.sub:function` or `path/file.py:function` (TargetConfigError if not)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name.isidentifier():
        raise TargetConfigError(f"a Python target is written 'package.module:function' or "
                                f"'path/to/file.py:function', not {spec!r}")
    module = _module_from_file(where) if where.endswith(".py") else _module_by_name(where)
    function = getattr(module, name, None)
    if not callable(function):
        raise TargetConfigError(f"{where} has no function {name!r}; check the name after the ':'")
    return function


def _module_by_name(name: str) -> Any:
    if os.getcwd() not in sys.path:  # as `python -m` does: the user's own modules are importable
        sys.path.insert(0, os.getcwd())
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise TargetConfigError(f"cannot import {name!r} ({exc}); run ragmeter from the folder that "
                                "holds it, or set PYTHONPATH") from None


def _module_from_file(path: str) -> Any:
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise TargetConfigError(f"{path} does not exist; check the path before the ':'")
    if str(file.parent) not in sys.path:  # the file may import its neighbours, as when run as a script
        sys.path.insert(0, str(file.parent))
    spec = importlib.util.spec_from_file_location(f"ragmeter_target_{file.stem}", file)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    try:
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    except Exception as exc:
        raise TargetConfigError(f"{path} failed to load: {type(exc).__name__}: {exc}") from None
    return module


class FunctionTarget:
    """Calls a Python function (sync or async) with each question."""

    def __init__(self, function: Callable[..., Any], *, spec: Optional[str] = None, timeout: float = 60.0) -> None:
        self.function, self.spec, self.timeout = function, spec, timeout
        self._is_async = inspect.iscoroutinefunction(function)
        self._local = threading.local()

    @classmethod
    def from_spec(cls, spec: str, *, timeout: float = 60.0) -> "FunctionTarget":
        return cls(load_function(spec), spec=spec, timeout=timeout)

    def call(self, question: str, stop: Optional[threading.Event] = None) -> TargetResponse:
        value = self._run_async(question) if self._is_async else self._run_sync(question, stop)
        if inspect.isawaitable(value):  # a plain function that returned a coroutine
            value = self._await(value)
        return response_from_value(value)

    def _run_sync(self, question: str, stop: Optional[threading.Event]) -> Any:
        helper = getattr(self._local, "helper", None)
        if helper is None:
            helper = self._local.helper = _Helper()
        job = helper.submit(self.function, question)
        deadline = time.monotonic() + self.timeout
        while not job.done.wait(max(0.0, min(_POLL, deadline - time.monotonic()))):
            if stop is not None and stop.is_set() or time.monotonic() >= deadline:
                helper.retire()  # it finishes the abandoned call, drops its result, and ends
                self._local.helper = None
                if stop is not None and stop.is_set():
                    raise TargetStopped()
                raise TargetError(f"the target timed out after {self.timeout:g} s (the call was abandoned "
                                  "and may still be running)")
        if job.error is not None:
            raise job.error
        return job.value

    def _run_async(self, question: str) -> Any:
        return self._await(self.function(question))

    def _await(self, awaitable: Any) -> Any:
        """Run `awaitable` to its end. A thread whose own event loop is running (a notebook, a test
        driver) cannot run another, so the coroutine then runs on a loop of its own on a daemon thread.
        That thread is waited on for the timeout and a grace period: a coroutine that blocks its loop
        (so the timeout cannot cancel it) is abandoned as a hung plain function is, never waited on."""
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return self._loop().run_until_complete(self._bounded(awaitable))
        job = _Job(asyncio.run, self._bounded(awaitable))
        threading.Thread(target=job.run, name="ragmeter-target-call", daemon=True).start()
        if not job.done.wait(self.timeout + _GRACE):
            raise TargetError(f"the target timed out after {self.timeout:g} s (the call was abandoned "
                              "and may still be running)")
        if job.error is not None:
            raise job.error
        return job.value

    async def _bounded(self, awaitable: Any) -> Any:
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except asyncio.TimeoutError:
            raise TargetError(f"the target timed out after {self.timeout:g} s") from None

    def _loop(self) -> asyncio.AbstractEventLoop:
        loop = getattr(self._local, "loop", None)
        if loop is None or loop.is_closed():
            loop = self._local.loop = asyncio.new_event_loop()
        return loop

    def describe(self) -> Dict[str, Any]:
        name = self.spec or f"{getattr(self.function, '__module__', '?')}:{getattr(self.function, '__qualname__', '?')}"
        return {"kind": "python", "function": name, "timeout_s": self.timeout}


class _Job:
    """One call, `function(argument)`, whose value or error a waiting worker reads once `done` is set."""

    def __init__(self, function: Callable[..., Any], argument: Any) -> None:
        self.function, self.argument = function, argument
        self.done = threading.Event()
        self.value: Any = None
        self.error: Optional[BaseException] = None

    def run(self) -> None:
        try:
            self.value = self.function(self.argument)
        except BaseException as exc:  # handed to the waiting worker, which raises it there
            self.error = exc
        finally:
            self.done.set()


class _Helper:
    """A daemon thread that runs one worker's calls, one at a time."""

    def __init__(self) -> None:
        self._jobs: "queue.Queue[Optional[_Job]]" = queue.Queue()
        threading.Thread(target=self._loop, name="ragmeter-target-call", daemon=True).start()

    def submit(self, function: Callable[..., Any], question: str) -> _Job:
        job = _Job(function, question)
        self._jobs.put(job)
        return job

    def retire(self) -> None:
        self._jobs.put(None)  # read once the abandoned call returns, if it ever does

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            job.run()
