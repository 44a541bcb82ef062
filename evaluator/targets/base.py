"""The target interface, and the retrying call every kind of target goes through.

A target is anything with `call(question) -> TargetResponse` that raises `TargetError` on a
failed call, plus `describe()`: what the run history keeps about it (never a header value).
`ask` wraps one call with retries and timing and never raises: a failure comes back as a
`TargetResponse` whose `error` names it, so the row is kept.
"""
from __future__ import annotations

import inspect
import random
import threading
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Dict, Optional, Protocol, Union, runtime_checkable

from ..bounded import MAX_RETRY_AFTER
from ..errors import TargetError
from ..io.shapes import TargetResponse
from ..retrying import GaveUp, with_retries


@runtime_checkable
class Target(Protocol):
    """The user's pipeline or agent, as ragmeter calls it."""

    def call(self, question: str) -> TargetResponse:
        """Answer one question; raise TargetError (retryable or not) when the call fails."""
        ...

    def describe(self) -> Dict[str, Any]:
        """Kind, location and options of the target, as run settings (no secrets)."""
        ...


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed call is tried again (429, 5xx, timeouts only)."""

    retries: int = 3
    base_delay: float = 0.5  # doubled each attempt, with jitter
    max_delay: float = MAX_RETRY_AFTER  # backoff never waits longer (a longer Retry-After fails the call: http.py)

    def delay(self, retry: int, failed: TargetError) -> float:
        """Seconds before retry `retry` (1, 2, ...): the server's Retry-After, else the backoff."""
        if failed.retry_after is not None:
            return min(max(0.0, failed.retry_after), self.max_delay)
        return min(self.base_delay * 2 ** (retry - 1) * (0.5 + random.random() / 2), self.max_delay)


NO_RETRY = RetryPolicy(retries=0)
# The error of a call abandoned because the run is stopping: the row stays unanswered (resume asks again).
STOPPED = "stopped before the target answered"


class TargetStopped(TargetError):
    """The run stopped while the call was in flight; the call was abandoned, not failed."""

    def __init__(self) -> None:
        super().__init__(STOPPED)


def _call(target: Target, question: str, stop: Optional[threading.Event]) -> TargetResponse:
    """target.call, handing it the stop flag when it can abandon a call on it (FunctionTarget)."""
    try:
        takes_stop = "stop" in inspect.signature(target.call).parameters
    except (TypeError, ValueError):
        takes_stop = False
    return target.call(question, stop=stop) if takes_stop else target.call(question)  # type: ignore[call-arg]


def ask(target: Target, question: str, policy: RetryPolicy = RetryPolicy(),
        stop: Optional[threading.Event] = None, sleep: Callable[[float], Any] = time.sleep) -> TargetResponse:
    """Call `target` with retries; the response carries the latency (all attempts) or the error."""
    start = time.perf_counter()
    outcome: Union[TargetResponse, GaveUp[TargetError]] = with_retries(
        lambda: _attempt(target, question, stop), retries=policy.retries, delay=policy.delay, sleep=sleep,
        fits=lambda wait: stop is None or not stop.is_set())  # a stopping run retries nothing
    if isinstance(outcome, GaveUp):
        tries = f" (after {outcome.retries + 1} attempts)" if outcome.retries else ""
        outcome = TargetResponse(error=f"{outcome.failure}{tries}")
    return _timed(outcome, start)


def _attempt(target: Target, question: str, stop: Optional[threading.Event]) -> Union[TargetResponse, TargetError]:
    try:
        return _call(target, question, stop)
    except TargetStopped:
        return TargetResponse(error=STOPPED)
    except TargetError as exc:
        return exc  # a failed attempt: the retry loop decides what comes next
    except Exception as exc:  # the user's own code raised: a failed row, never a crashed run
        return TargetResponse(error=f"the target raised {type(exc).__name__}: {exc}")


def _timed(response: TargetResponse, start: float) -> TargetResponse:
    latency = round((time.perf_counter() - start) * 1000, 1)
    return replace(response, contexts=list(response.contexts), tool_calls=list(response.tool_calls),
                   latency_ms=latency)  # every other field (retrieval ids included) kept as the target gave it
