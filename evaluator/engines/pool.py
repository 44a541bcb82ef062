"""`Pool`: the one thread pool. At most `workers` tasks at once, each handed back as it finishes.

Everything ragmeter does concurrently goes through it (scoring a dataset, asking a target and judging
its answers, a data frame's rows, writing a test set, a sample's judge calls), so this is the one
place a ThreadPoolExecutor is built:

    with Pool(4, "ragmeter") as pool:
        for key, future in pool.completed(next_task, stop=stopping):   # 4 in flight, as they finish
            ... future.result() ...
        pool.map(function, items)                                     # in input order

`completed` asks `next_task()` for a `(key, call)` whenever fewer than `workers` tasks are in
flight and `stop()` is false. None means "nothing now": it is asked again after the next task
finishes, so a source whose work depends on what finished (generate/runner.py) needs no loop of its
own. Tasks are only submitted while a worker is free, never queued ahead: Stop then wastes at most
the tasks in flight. Leaving the `with` block cancels any task not started and waits for those
running (a task cannot be killed; one that may hang bounds itself, as targets and judges do).
"""
from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, TypeVar

T = TypeVar("T")
R = TypeVar("R")
Task = Tuple[Any, Callable[[], Any]]  # (the key it is known by, what to run)


def _never() -> bool:
    return False


class Pool:
    """`workers` threads named `name`-N; the tasks in flight, each known by its key."""

    def __init__(self, workers: int, name: str = "ragmeter") -> None:
        self.workers = max(1, workers)
        self._executor = ThreadPoolExecutor(self.workers, thread_name_prefix=name)
        self._pending: Dict["Future[Any]", Any] = {}

    def __enter__(self) -> "Pool":
        return self

    def __exit__(self, *exc: object) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def submit(self, key: Any, call: Callable[[], Any]) -> None:
        """Start `call()` now, or as soon as a worker is free."""
        self._pending[self._executor.submit(call)] = key

    def finished(self) -> List[Tuple[Any, "Future[Any]"]]:
        """Wait until a task in flight finishes; (key, future) of each that has, no longer in flight."""
        done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
        return [(self._pending.pop(future), future) for future in done]

    def completed(self, next_task: Callable[[], Optional[Task]],
                  stop: Callable[[], bool] = _never) -> Iterator[Tuple[Any, "Future[Any]"]]:
        """(key, future) of every task as it finishes, keeping up to `workers` in flight (module docstring);
        ends when nothing is in flight and nothing more is given (or `stop()` holds)."""
        while True:
            while self.in_flight < self.workers and not stop():
                task = next_task()
                if task is None:
                    break
                self.submit(*task)
            if not self._pending:
                return
            yield from self.finished()

    def map(self, function: Callable[[T], R], items: Iterable[T]) -> List[R]:
        """`function(item)` for every item, `workers` at a time; the results in input order (the first
        failure in input order is raised, once every call has ended)."""
        queue = iter(enumerate(items))

        def next_task() -> Optional[Task]:
            item = next(queue, None)
            return None if item is None else (item[0], lambda: function(item[1]))

        futures: Dict[int, "Future[Any]"] = {}
        for index, future in self.completed(next_task):
            futures[index] = future
        return [futures[i].result() for i in range(len(futures))]
