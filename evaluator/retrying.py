"""One retry loop for every call ragmeter makes to the outside: the judge wrapper and the targets.

An attempt returns its result or a `Failed` (a judge's Failure, a TargetError). The loop tries again
while the failure is retryable and retries are left, sleeping `delay(n, failure)` before retry n (the
caller's backoff, or the server's Retry-After), and gives up early when that wait does not `fit` (a
call's total deadline, a run that is stopping). What surrounds an attempt (the rate limiter, usage
counts) stays with the caller. Core layer: imports nothing of ragmeter.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Generic, Optional, TypeVar, Union, cast


class Failed:
    """One failed attempt; `retryable` says whether another attempt may help."""

    retryable: bool = True


T = TypeVar("T")
F = TypeVar("F", bound=Failed)


@dataclass(frozen=True)
class GaveUp(Generic[F]):
    """The last failure, how many retries came before it, and whether the wait (not the count) ended it."""

    failure: F
    retries: int
    out_of_time: bool = False


def with_retries(attempt: Callable[[], Union[T, F]], *, retries: int, delay: Callable[[int, F], float],
                 sleep: Callable[[float], Any] = time.sleep, fits: Optional[Callable[[float], bool]] = None,
                 on_retry: Optional[Callable[[int, F, float], None]] = None) -> Union[T, GaveUp[F]]:
    """`attempt()` until it returns something that is not a Failed, or GaveUp; `on_retry(n, failure,
    wait)` runs before the n-th retry's sleep."""
    n = 0
    while True:
        outcome = attempt()
        if not isinstance(outcome, Failed):
            return outcome
        failure = cast(F, outcome)
        wait = delay(n + 1, failure)  # drawn before deciding, as both callers did (the same jitter draws)
        if not failure.retryable or n >= retries:
            return GaveUp(failure, n)
        if fits is not None and not fits(wait):
            return GaveUp(failure, n, out_of_time=True)
        n += 1
        if on_retry is not None:
            on_retry(n, failure, wait)
        sleep(wait)
