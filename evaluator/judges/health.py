"""JudgeHealth: stop a run whose judge is failing, instead of grinding every row into fallbacks.

A single failed judge call degrades one score to its heuristic, visibly; that is right for a
flaky server. A judge that is *broken* (wrong key, unknown model, nothing listening) or goes bad
midway would otherwise turn the whole run into heuristic scores that read like a pass. Two rules
stop it, each with one message naming the cause:

- early stop: the first `early_failures` calls of a run were rejected (HTTP 400/401/403/404/422),
  could not reach the server or timed out, or the first `early_unusable` replies were all
  unusable (prose, no verdicts, JSON cut off), and no call gave a usable reply;
- circuit breaker: more than `max_failure_rate` of the last `window` calls failed;
- timeouts hold the run: once a call times out before any call succeeded, no new call starts
  (WatchedJudge waits) while calls are in flight; if one of them succeeds, all go on; if the last of
  them ends with still no success, the run stops (issue 49: it used to send one more probe, a whole
  deadline more). A judge that trickles bytes past each call's deadline so ends a run within one call
  deadline (the first wave; a try that timed out is not retried before the judge has ever answered,
  judges/resilient.py), not after two or three deadlines in a row.

A reply that answers HTTP 200 but cannot be scored is a failed call here: the metric that asked
reports it (`reply_unusable`), turning the call WatchedJudge counted as a success into a failure.

`WatchedJudge` wraps any judge, records each call's outcome here, and once the run is stopping
fails further calls at once (no request), so every worker winds down within one call.
"""
from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass
from typing import Any, Deque, Dict, Optional

from ..errors import JudgeError, JudgeFailed
from .base import accepts

# Where a stopped run's report.usage keeps JudgeFailed's message (the history stores usage).
STOPPED_KEY = "stopped_on_judge_failure"
# Where report.usage counts the replies that answered but held no score (prose, no verdicts, cut-off JSON).
UNUSABLE_KEY = "unusable_replies"
# JudgeError kinds that mean "this judge will not work at all", not "this call was unlucky".
FATAL_KINDS = ("rejected", "unreachable")
TIMEOUT_KIND = "timeout"  # JudgeError.kind of a call that timed out on its last try (judges/resilient.py)
UNUSABLE_KIND = "unusable"  # a reply that answered but carried no score


@dataclass(frozen=True)
class HealthPolicy:
    """When a run stops on judge failure. Bounds are about judge calls, not samples."""

    early_failures: int = 3  # rejected/unreachable calls, before any success, that stop the run
    window: int = 20  # recent calls the circuit breaker looks at
    max_failure_rate: float = 0.5  # the breaker trips when more than this share of the window failed
    early_unusable: int = 20  # unusable replies, before any usable one, that stop the run


class JudgeHealth:
    """Counts one run's judge calls and decides when the run must stop. Thread-safe."""

    def __init__(self, policy: HealthPolicy = HealthPolicy()) -> None:
        self.policy = policy
        self.calls = self.failures = self.successes = 0
        self.unusable = self.not_json = self.timeouts = 0  # kinds of failure the messages name
        self._recent: Deque[bool] = deque(maxlen=policy.window)  # True = failed
        self._last: Optional[BaseException] = None
        self._trip: Optional[str] = None  # "rejected" | "unreachable" | "timeout" | "unusable" | "breaker"
        self._at_trip = (0, 0, 0)  # (unusable, timeouts, calls) when it tripped: the message's numbers
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)  # a call ended, or the run tripped
        self._adopted: Optional[JudgeFailed] = None  # another watch's verdict (adopt)
        self.in_flight = 0
        self._holding = False  # a call timed out before any success: one call at a time (module docstring)

    @property
    def tripped(self) -> bool:
        return self._trip is not None

    def begin(self) -> None:
        """A call may start: waits while timeouts hold the run; JudgeError once the run is stopping."""
        with self._lock:
            while self._holding and self.in_flight and self._trip is None:  # one probe at a time
                self._changed.wait()
            if self._trip is not None:
                raise JudgeError("The run is stopping because the judge is failing.", kind="stopped")
            self.in_flight += 1

    def record_success(self) -> None:
        with self._lock:
            self.calls += 1
            self.successes += 1
            self._recent.append(False)
            self._ended()
            self._holding = False  # the judge answers after all: the waiting calls go on

    def record_failure(self, exc: BaseException) -> None:
        with self._lock:
            self.calls += 1
            self.failures += 1
            self._recent.append(True)
            self._last = exc
            kind = getattr(exc, "kind", "failed")
            self.timeouts += kind == TIMEOUT_KIND
            self._ended()
            if kind == TIMEOUT_KIND and not self.successes:
                self._holding = True  # start nothing new until the calls in flight show the judge answers
            self._settle(kind)

    def _ended(self) -> None:
        self.in_flight = max(0, self.in_flight - 1)
        self._changed.notify_all()

    def record_unusable(self, reason: str, not_json: bool = False) -> None:
        """A call counted as a success gave a reply with no score: count it as a failed call."""
        with self._lock:
            self.successes = max(0, self.successes - 1)
            self.failures += 1
            self.unusable += 1
            self.not_json += not_json
            _flip_last_success(self._recent)
            self._last = JudgeError(reason, kind=UNUSABLE_KIND)
            self._settle(UNUSABLE_KIND)

    def _settle(self, kind: str) -> None:
        """Trip once, keeping the counts that tripped it (calls still in flight finish after)."""
        if self._trip is None:
            self._trip = self._decide(kind)
            self._at_trip = (self.unusable, self.timeouts, self.calls)
            if self._trip is not None:
                self._changed.notify_all()

    def _decide(self, kind: str) -> Optional[str]:
        p = self.policy
        if not self.successes and kind in FATAL_KINDS and self.failures >= p.early_failures:
            return kind
        if not self.successes and kind == TIMEOUT_KIND and self.timeouts >= p.early_failures:
            return kind
        if not self.successes and self._holding and not self.in_flight:  # the whole first wave timed out
            return TIMEOUT_KIND
        if not self.successes and kind == UNUSABLE_KIND and self.unusable >= p.early_unusable:
            return kind
        window_full = len(self._recent) >= p.window
        if window_full and sum(self._recent) > p.max_failure_rate * len(self._recent):
            return "breaker"
        return None

    def adopt(self, failure: JudgeFailed) -> None:
        """Trip on another watch's verdict: Ray's driver adopts the first its workers report, so the run stops
        and says why exactly as a local run would (each worker watches its own share of the calls)."""
        with self._lock:
            if self._trip is None:
                self._trip, self._adopted = failure.kind, failure
                self._changed.notify_all()

    def check(self) -> None:
        """Raise JudgeFailed once the run must stop; nothing otherwise."""
        if self._trip is not None:
            raise self.failure()

    def failure(self) -> JudgeFailed:
        """The JudgeFailed that describes why this run stopped."""
        if self._adopted is not None:
            return failed_from(failed_data(self._adopted))  # a fresh copy: the caller sets its report
        with self._lock:
            cause = str(self._last) if self._last is not None else "unknown judge failure"
            status = getattr(self._last, "status", None)
            if self._trip == "breaker":
                n, failed = len(self._recent), sum(self._recent)
                message = (f"The judge failed {failed} of its last {n} calls, so the run stopped instead of "
                           f"scoring the rest on heuristics. Last error: {cause}")
            elif self._trip == UNUSABLE_KIND:
                unusable, _, calls = self._at_trip
                what = "not JSON" if self.not_json == self.unusable else "not usable"
                message = (f"judge replies are {what}: {unusable} of the first {calls}, so the run "
                           f"stopped instead of scoring the rest on heuristics. Last reply: {cause}")
            elif self._trip == TIMEOUT_KIND:
                _, timeouts, calls = self._at_trip
                message = (f"judge timed out: {timeouts} of the first {calls} calls, so the run "
                           f"stopped (a slow judge needs a longer timeout: --judge-timeout). Last error: {cause}")
            else:
                message = cause
            return JudgeFailed(message, kind=self._trip or "failed", status=status,
                               calls=self.calls, failures=self.failures)


class WatchedJudge:
    """A judge whose calls are reported to a JudgeHealth; every other attribute is the judge's own."""

    def __init__(self, judge: Any, health: JudgeHealth) -> None:
        self._judge, self.health = judge, health

    def generate(self, prompt: str, **options: Any) -> str:
        self.health.begin()  # raises once the run is stopping; waits while timeouts hold it
        try:
            reply = self._judge.generate(prompt, **options)
        except Exception as exc:
            self.health.record_failure(exc)
            raise
        self.health.record_success()
        return reply

    def reply_unusable(self, reason: str, not_json: bool = False) -> None:
        """The reply this thread's last generate() returned had no score (metrics/judging.py says so); the
        wrapped judge hears it too (a caching judge then forgets that reply)."""
        self.health.record_unusable(reason, not_json)
        inner = getattr(self._judge, "reply_unusable", None)
        if callable(inner):
            inner(reason, not_json)

    def accepts_option(self, option: str) -> bool:
        """The wrapped judge's generate options (repeat, top_logprobs) pass through (judges.base.accepts)."""
        return accepts(self._judge, option)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._judge, name)


def failed_data(failure: JudgeFailed) -> Dict[str, Any]:
    """A JudgeFailed as plain data, to travel from a Ray worker to the driver."""
    return {"message": str(failure), "kind": failure.kind, "status": failure.status, "calls": failure.calls,
            "failures": failure.failures}


def failed_from(data: Dict[str, Any]) -> JudgeFailed:
    """The JudgeFailed that `failed_data` gave."""
    return JudgeFailed(str(data["message"]), kind=str(data["kind"]), status=data.get("status"),
                       calls=int(data.get("calls") or 0), failures=int(data.get("failures") or 0))


def _flip_last_success(recent: Deque[bool]) -> None:
    """Mark the newest success in the breaker's window as a failure (a reply found unusable after the call)."""
    for i in range(len(recent) - 1, -1, -1):
        if not recent[i]:
            recent[i] = True
            return
