"""Test doubles that are real implementations of the judge interface (`.generate(prompt) -> str`), and plugin
distributions installed for real on sys.path."""
from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Sequence, Union

from openai_server import each_part  # tests/ is on sys.path under pytest

Reply = Union[str, Exception, Callable[[str], str]]


class ScriptedJudge:
    """A judge that answers from a script: a fixed reply, a queue, or a function of the prompt.

    Every prompt it receives is recorded, so tests can count calls and read what was sent. A prompt asking for
    several metrics at once gets the reply under each metric's name (openai_server.each_part), as a model would.
    """

    def __init__(self, reply: Reply = '{"score": 0.8, "reasoning": "ok"}',
                 queue: Optional[List[Reply]] = None) -> None:
        self.reply = reply
        self.queue = list(queue or [])
        self.prompts: List[str] = []
        self._lock = threading.Lock()

    def generate(self, prompt: str) -> str:
        with self._lock:
            self.prompts.append(prompt)
            reply = self.queue.pop(0) if self.queue else self.reply
        if isinstance(reply, Exception):
            raise reply
        return each_part(reply(prompt) if callable(reply) else reply, prompt)

    @property
    def calls(self) -> int:
        return len(self.prompts)


class FakeClock:
    """Time that only moves when the code under test sleeps; every sleep is recorded in `slept`."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: List[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.slept.append(seconds)
            self.now += seconds


def install_plugin(site, dist: str, entry_points: str, module: Optional[str] = None, code: str = "", *,
                   group: str) -> None:
    """A minimal installed distribution in the folder `site` (on sys.path): a module, and a .dist-info whose
    entry_points.txt offers `entry_points` lines under `group` (ragmeter.judges, ragmeter.metrics, ...)."""
    if module:
        (site / f"{module}.py").write_text(code, encoding="utf-8")
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(f"[{group}]\n{entry_points}", encoding="utf-8")


@contextmanager
def plugin_site(folder: Any, monkeypatch: Any, plugins: Any, modules: Sequence[str] = ()) -> Iterator[Any]:
    """`folder` on sys.path to install plugin distributions in; afterwards the PluginGroup's registry is as it
    was and its plugins are loaded again from what is really installed."""
    folder.mkdir(exist_ok=True)
    monkeypatch.syspath_prepend(str(folder))
    # installed for every process, as a real install is: the dashboard's worker process imports it too
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(folder), os.environ.get("PYTHONPATH")) if p))
    before = dict(plugins.registry)
    yield folder
    plugins.registry.clear()
    plugins.registry.update(before)
    for name in modules:
        sys.modules.pop(name, None)
    monkeypatch.undo()
    plugins.load(reload=True)
