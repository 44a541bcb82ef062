"""AIMDLimiter: the limit sequence under throttles and successes, pauses, and thread behaviour.

Time is a fake clock; the fake sleep advances it, so no test really sleeps."""
import threading
import time

import pytest

from evaluator.judges.ratelimit import ERROR, SUCCESS, THROTTLE, AIMDLimiter


class FakeClock:
    def __init__(self):
        self.now = 100.0
        self.slept = []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(round(seconds, 6))
        self.now += seconds


@pytest.fixture
def clock():
    return FakeClock()


def limiter(clock, max_limit=8, min_limit=1):
    return AIMDLimiter(max_limit, min_limit, clock=clock, sleep=clock.sleep)


def run(lim, outcome, retry_after=None):
    lim.release(lim.acquire(), outcome, retry_after)


def test_throttles_halve_and_successes_climb_back_one_per_round(clock):
    lim = limiter(clock, 8)
    run(lim, THROTTLE)
    run(lim, THROTTLE)
    assert lim.history == [8, 4, 2]
    for _ in range(2 + 3 + 4):  # a full round of successes at each limit adds one slot
        run(lim, SUCCESS)
    assert lim.history == [8, 4, 2, 3, 4, 5]


def test_limit_never_leaves_its_bounds(clock):
    lim = limiter(clock, 4, min_limit=2)
    for _ in range(5):
        run(lim, THROTTLE)
    assert lim.limit == 2
    for _ in range(100):
        run(lim, SUCCESS)
    assert lim.limit == 4 and lim.history == [4, 2, 3, 4]


def test_a_throttle_resets_the_success_streak(clock):
    lim = limiter(clock, 8)
    run(lim, THROTTLE)  # 4
    for _ in range(3):
        run(lim, SUCCESS)
    run(lim, THROTTLE)  # 2, and the three successes no longer count
    run(lim, SUCCESS)
    assert lim.history == [8, 4, 2]


def test_errors_change_nothing(clock):
    lim = limiter(clock, 8)
    for _ in range(5):
        run(lim, ERROR)
    assert lim.history == [8] and lim.in_flight == 0


def test_throttles_from_calls_sent_before_a_decrease_halve_only_once(clock):
    lim = limiter(clock, 8)
    permits = [lim.acquire() for _ in range(8)]  # eight calls in flight under limit 8
    for p in permits:
        lim.release(p, THROTTLE)  # all eight get a 429
    assert lim.history == [8, 4]
    run(lim, THROTTLE)  # a call sent after the decrease: new information, halve again
    assert lim.history == [8, 4, 2]


def test_retry_after_pauses_every_new_acquisition(clock):
    lim = limiter(clock, 8)
    run(lim, THROTTLE, retry_after=2.5)
    assert lim.paused_for() == pytest.approx(2.5)
    start = clock.now
    run(lim, SUCCESS)  # waits out the pause through the injected sleep
    assert clock.now - start == pytest.approx(2.5)
    assert clock.slept == [2.5]
    run(lim, SUCCESS)
    assert clock.slept == [2.5]  # the pause is over


def test_a_later_shorter_retry_after_does_not_shorten_the_pause(clock):
    lim = limiter(clock, 8)
    lim.on_throttle(5.0)
    lim.on_throttle(1.0)
    assert lim.paused_for() == pytest.approx(5.0)
    assert lim.history == [8, 4, 2]  # outside a slot every throttle counts


def test_slot_context_manager_records_outcomes(clock):
    lim = limiter(clock, 8)
    with lim.slot():
        assert lim.in_flight == 1
    with lim.slot() as permit:
        permit.throttled(retry_after=1.0)
    assert lim.history == [8, 4] and lim.paused_for() == pytest.approx(1.0)
    with pytest.raises(RuntimeError):
        with lim.slot():
            raise RuntimeError("boom")
    assert lim.in_flight == 0 and lim.history == [8, 4]  # an exception is an error, not a throttle


def test_on_success_outside_a_slot_counts_towards_increase(clock):
    lim = limiter(clock, 4)
    lim.on_throttle()
    lim.on_success()
    lim.on_success()
    assert lim.history == [4, 2, 3]


def test_bad_arguments_are_refused(clock):
    with pytest.raises(ValueError):
        AIMDLimiter(0)
    with pytest.raises(ValueError):
        AIMDLimiter(4, min_limit=5)
    lim = limiter(clock)
    with pytest.raises(ValueError, match="outcome"):
        lim.release(lim.acquire(), "maybe")


def test_acquire_blocks_at_the_limit_until_a_release():
    lim = AIMDLimiter(2)
    a, b = lim.acquire(), lim.acquire()
    got = threading.Event()

    def third():
        lim.release(lim.acquire())
        got.set()

    t = threading.Thread(target=third)
    t.start()
    assert not got.wait(0.2)  # both slots are held
    lim.release(a)
    assert got.wait(2.0)
    lim.release(b)
    t.join()
    assert lim.in_flight == 0 and lim.peak_in_flight == 2


def test_concurrent_threads_never_exceed_the_limit():
    lim = AIMDLimiter(3)
    state = {"now": 0, "peak": 0}
    guard = threading.Lock()

    def work():
        for _ in range(20):
            with lim.slot():
                with guard:
                    state["now"] += 1
                    state["peak"] = max(state["peak"], state["now"])
                time.sleep(0.001)
                with guard:
                    state["now"] -= 1

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert state["peak"] == 3 == lim.peak_in_flight
    assert lim.snapshot()["in_flight"] == 0
