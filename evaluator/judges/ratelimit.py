"""Adaptive concurrency for judge calls: additive increase, multiplicative decrease (AIMD).

Every HTTP call a judge makes holds one slot of an `AIMDLimiter`. The number of slots (the
limit) starts at `max_limit`. A throttle signal (HTTP 429, 503, a timeout) halves it and, when
the server said how long to wait (`Retry-After`), holds back every new call until then; each
run of `limit` successes in a row adds one slot back, up to `max_limit`. So a rate-limited key
settles near what the server accepts instead of retrying in a storm, then climbs back.

Calls already in flight when the limit drops were sent under the old limit; their throttles
say nothing new, so a throttle only halves the limit once per "generation" (the way TCP
halves its window once per round trip, not once per lost packet).

    limiter = AIMDLimiter(16)
    with limiter.slot() as permit:
        reply = send()              # raise -> counted as an error, nothing else changes
        if throttled:
            permit.throttled(retry_after=2.0)

The clock and sleep are injectable so tests drive time by hand.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional

SUCCESS = "success"
THROTTLE = "throttle"
ERROR = "error"  # a failure that says nothing about load (bad request, dropped connection)
OUTCOMES = (SUCCESS, THROTTLE, ERROR)


@dataclass
class Permit:
    """One held slot; set its outcome before the `slot()` block ends (success by default)."""

    generation: int
    outcome: str = SUCCESS
    retry_after: Optional[float] = None

    def throttled(self, retry_after: Optional[float] = None) -> None:
        self.outcome, self.retry_after = THROTTLE, retry_after

    def failed(self) -> None:
        self.outcome = ERROR


class AIMDLimiter:
    """A counting semaphore whose size adapts to throttling (see the module docstring)."""

    def __init__(self, max_limit: int, min_limit: int = 1, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if max_limit < 1 or not 1 <= min_limit <= max_limit:
            raise ValueError(f"need 1 <= min_limit <= max_limit, got min {min_limit}, max {max_limit}")
        self.max_limit, self.min_limit = max_limit, min_limit
        self._clock, self._sleep = clock, sleep
        self._cond = threading.Condition()
        self._limit = max_limit
        self._in_flight = 0
        self._streak = 0  # successes in a row since the limit last changed
        self._generation = 0  # bumped on every decrease
        self._paused_until = 0.0
        self.history: List[int] = [max_limit]  # every limit it has had, in order
        self.peak_in_flight = 0
        self.throttles = 0

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def paused_for(self) -> float:
        """Seconds until new calls may start again (0 when not paused)."""
        return max(0.0, self._paused_until - self._clock())

    def acquire(self) -> Permit:
        """Block until a slot is free and no pause is in force; return the held slot."""
        while True:
            with self._cond:
                pause = self._paused_until - self._clock()
                if pause <= 0 and self._in_flight < self._limit:
                    self._in_flight += 1
                    self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
                    return Permit(self._generation)
                if pause <= 0:
                    # Woken by release() or an increase; the timeout re-checks a pause set meanwhile.
                    self._cond.wait(timeout=1.0)
                    continue
            self._sleep(pause)

    def release(self, permit: Permit, outcome: Optional[str] = None,
                retry_after: Optional[float] = None) -> None:
        """Free `permit`'s slot and feed its outcome (default: the permit's own) to the limit."""
        outcome = outcome or permit.outcome
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, not {outcome!r}")
        with self._cond:
            self._in_flight -= 1
            if outcome == SUCCESS:
                self._success()
            elif outcome == THROTTLE:
                self._throttle(retry_after if retry_after is not None else permit.retry_after,
                               permit.generation)
            self._cond.notify_all()

    @contextmanager
    def slot(self) -> Iterator[Permit]:
        """Hold a slot for the `with` block; an exception leaving the block counts as an error."""
        permit = self.acquire()
        try:
            yield permit
        except BaseException:
            permit.failed()
            raise
        finally:
            self.release(permit)

    def on_success(self) -> None:
        """Record a success outside any slot (additive increase bookkeeping)."""
        with self._cond:
            self._success()
            self._cond.notify_all()

    def on_throttle(self, retry_after: Optional[float] = None) -> None:
        """Record a throttle outside any slot: always halves, and pauses for `retry_after` s."""
        with self._cond:
            self._throttle(retry_after, self._generation)

    def _success(self) -> None:
        self._streak += 1
        if self._streak >= self._limit and self._limit < self.max_limit:
            self._set_limit(self._limit + 1)

    def _throttle(self, retry_after: Optional[float], generation: int) -> None:
        self.throttles += 1
        if retry_after is not None and retry_after > 0:
            self._paused_until = max(self._paused_until, self._clock() + retry_after)
        if generation == self._generation:
            self._generation += 1
            self._set_limit(max(self.min_limit, self._limit // 2))
        self._streak = 0

    def _set_limit(self, value: int) -> None:
        self._streak = 0
        if value != self._limit:
            self._limit = value
            self.history.append(value)

    def snapshot(self) -> dict:
        """Current state, for progress displays and reports."""
        with self._cond:
            return {"limit": self._limit, "in_flight": self._in_flight, "max_limit": self.max_limit,
                    "peak_in_flight": self.peak_in_flight, "throttles": self.throttles,
                    "paused_for": round(self.paused_for(), 3)}
