"""engines/pool.py: at most N tasks in flight, each handed back as it finishes; stop starts no more."""
import threading
import time

import pytest

from evaluator.engines.pool import Pool


def tasks(n, work):
    queue = iter(range(n))

    def next_task():
        i = next(queue, None)
        return None if i is None else (i, lambda: work(i))

    return next_task


def test_never_more_than_workers_in_flight_and_every_task_comes_back():
    lock, running, peak = threading.Lock(), [0], [0]

    def work(i):
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1
        return i * i

    with Pool(3, "test") as pool:
        got = {key: future.result() for key, future in pool.completed(tasks(12, work))}
    assert got == {i: i * i for i in range(12)} and peak[0] <= 3


def test_stop_starts_nothing_new_and_the_tasks_in_flight_still_finish():
    stop = threading.Event()
    started = []

    def work(i):
        started.append(i)
        time.sleep(0.02)
        return i

    with Pool(2) as pool:
        finished = []
        for key, future in pool.completed(tasks(50, work), stop=stop.is_set):
            finished.append(future.result())
            stop.set()
    assert sorted(finished) == sorted(started) and len(started) <= 3


def test_a_source_with_nothing_now_is_asked_again_after_the_next_task_finishes():
    waiting = [3]  # one task unlocks the next: like a writer that may retry a rejected slot
    done = []

    def next_task():
        if waiting[0] and len(done) + pool.in_flight < 3:
            waiting[0] -= 1
            return waiting[0], lambda: None
        return None

    with Pool(4) as pool:
        for key, _ in pool.completed(next_task):
            done.append(key)
    assert sorted(done) == [0, 1, 2]


def test_map_keeps_input_order_and_raises_the_first_failure_in_that_order():
    with Pool(4) as pool:
        assert pool.map(lambda i: (time.sleep(0.001 * (10 - i)), i)[1], range(10)) == list(range(10))

    def failing(i):
        if i in (2, 5):
            raise ValueError(i)
        return i

    with Pool(4) as pool, pytest.raises(ValueError, match="2"):
        pool.map(failing, range(8))


def test_leaving_the_block_cancels_what_has_not_started():
    ran = []
    with pytest.raises(RuntimeError):
        with Pool(1) as pool:
            pool.submit("first", lambda: time.sleep(0.2))
            pool.submit("second", lambda: ran.append("second"))  # queued behind the first one
            raise RuntimeError("the caller failed")
    assert ran == []
