"""One retry loop for every call ragmeter makes to the outside: the judge wrapper and the targets.

An attempt returns its result, or a `Failed` account of why it failed. The loop tries again while
the failure may be retried and retries are left, sleeping `delay(n, failure)` seconds before retry
n (the caller's backoff: exponential with jitter, or the server's Retry-After), and gives up early
when that wait would not `fit` (a call's total deadline). What surrounds each attempt (a rate-limiter
slot, usage counts, a stop flag) stays with the caller: the loop only decides whether, and when, to
try again, so both callers give up for the same reasons. Core layer: imports nothing of ragmeter.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Generic, TypeVar, Union


class Failed:
    """Base of one failed attempt's account; a subclass says whether another attempt may help."""

    def retryable(self) -> bool:
        return True


T = TypeVar("T")
F = TypeVar("F", bound=Failed)


@dataclass(frozen=True)
class GaveUp(Generic[F]):
    """The last failure, how many retries came before it, and whether time (not retries) ran out."""

    failure: F
    retries: int
    out_of_time: bool = False


def _always(wait: float) -> bool:
    return True


def _nothing(n: int, failure: Any, wait: float) -> None:
    return None


def with_retries(attempt: Callable[[], Union[T, F]], *, retries: int, delay: Callable[[int, F], float],
                 sleep: Callable[[float], Any] = time.sleep, fits: Callable[[float], bool] = _always,
                 on_retry: Callable[[int, F, float], None] = _nothing) -> Union[T, GaveUp[F]]:
    """`attempt()` until it returns something that is not a Failed, or GaveUp; `on_retry(n, failure,
    wait)` runs before the n-th retry's sleep (counting, logging)."""
    n = 0
    while True:
        outcome = attempt()
        if not isinstance(outcome, Failed):
            return outcome
        failure: F = outcome  # type: ignore[assignment]  # a Failed returned by attempt is its F
        wait = delay(n + 1, failure)  # drawn before deciding, so jitter draws do not depend on the outcome
        if not failure.retryable() or n >= retries:
            return GaveUp(failure, n)
        if not fits(wait):
            return GaveUp(failure, n, out_of_time=True)
        n += 1
        on_retry(n, failure, wait)
        sleep(wait)
