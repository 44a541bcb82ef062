"""Every error ragmeter raises on purpose. The tree:

    RagmeterError                  base of everything below
    ├── DatasetError (ValueError)  a dataset file cannot be read: names the file, the line/row,
    │                              the column, and what to do about it
    ├── MetricError (ValueError)   a metric cannot be used: an unknown name (the known ones listed),
    │                              a rubric file or table that is wrong (file, rubric, line named)
    ├── JudgeError                 a judge call failed for good (after retries); the evaluator
    │   │                          catches it and falls back to the heuristic, visibly. `kind`
    │   │                          says why: rejected (a 4xx retrying cannot fix), unreachable
    │   │                          (connection refused, unknown host), exhausted (retries ran out)
    │   └── JudgeConfigError       the judge cannot even start: an unknown judge kind (the
    │                              registered kinds named), no API key, bad base URL, a judge
    │                              plugin that failed to load or to build
    ├── JudgeFailed                the judge as a whole is failing (its first calls rejected or
    │                              unreachable, or most recent calls failing): the run stops early
    │                              instead of scoring everything on heuristics; finished rows are kept
    ├── HistoryError               the run-history database cannot be used (bad path, unknown run)
    ├── QueueFull                  a run cannot be queued: the team's `[runs] max_queued` is reached
    ├── WorkerError                the dashboard's worker process (runs/child.py) cannot start
    ├── RenderError                a chart or PDF could not be drawn: its renderer child crashed,
    │                              ran out of time or memory, or refused the spec (analysis/render.py)
    ├── ReviewError (ValueError)   a review or label file cannot be stored: a verdict, a score off
    │                              the metric's scale, a row naming no sample of the run
    ├── OutputError                a report path (-o) cannot be written: a folder, no permission,
    │                              an extension ragmeter does not write; checked before the run
    ├── ConfigError (ValueError)   the operator's $RAGMETER_CONFIG file is wrong: names the file and key
    ├── NotAllowed (PermissionError)  team mode: this user may not make this write (evaluator.team.access)
    ├── MissingExtra (ImportError) an optional feature's packages are not installed: names the
    │                              `pip install 'ragmeter[extra]'` that adds them
    └── TargetError                a call to the user's pipeline failed (HTTP status, timeout,
        │                          a reply without an answer); the row is kept with this reason
        └── TargetConfigError      the target cannot even start (bad spec, import failure, unset ${VAR})

Messages are written for the person at the keyboard: say what is wrong and what to do.
"""
from __future__ import annotations

from typing import Any, Optional

from .retrying import Failed


class RagmeterError(Exception):
    """Base class of ragmeter's own errors."""


class DatasetError(RagmeterError, ValueError):
    """A dataset cannot be loaded. `str()` gives the whole message, location included."""

    def __init__(
        self,
        message: str,
        *,
        file: Optional[str] = None,
        line: Optional[int] = None,
        column: Optional[str] = None,
        item: Optional[int] = None,
    ) -> None:
        self.file = file
        self.line = line
        self.item = item  # 1-based position in a JSON list, where a file has no useful line
        self.column = column
        self.reason = message
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.file:
            where.append(str(self.file))
        if self.line is not None:
            where.append(f"line {self.line}")
        if self.item is not None:
            where.append(f"item {self.item}")
        if self.column:
            where.append(f"column '{self.column}'")
        return (", ".join(where) + ": " if where else "") + self.reason


class MetricError(RagmeterError, ValueError):
    """A chosen metric is unknown, or a rubric definition is wrong; `str()` says which and how to fix it."""


class JudgeError(RagmeterError):
    """A judge call failed after all retries; the metric falls back to its heuristic.

    `kind` is "rejected" (HTTP 400/401/403/404/422: retrying cannot help), "unreachable"
    (connection refused, unknown host), "exhausted" (retries ran out) or "failed" (anything
    else); `status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, *, kind: str = "failed", status: Optional[int] = None) -> None:
        super().__init__(message)
        self.kind, self.status = kind, status


class JudgeConfigError(JudgeError):
    """The judge is misconfigured (unknown kind, missing key, unusable endpoint, a broken judge plugin)."""


class OutputError(RagmeterError):
    """The report path cannot be written: a folder, no permission, or an unknown extension."""


class JudgeFailed(RagmeterError):
    """The run stopped because the judge is failing; `str()` names the cause and the fix.

    `kind` is the failing calls' kind ("rejected", "unreachable") or "breaker" when most recent
    calls failed; `status` the HTTP status if any; `calls`/`failures` what the run saw. The
    evaluator sets `report` to the rows finished before the stop (they are in the history too).
    """

    def __init__(self, message: str, *, kind: str, status: Optional[int] = None,
                 calls: int = 0, failures: int = 0) -> None:
        super().__init__(message)
        self.kind, self.status, self.calls, self.failures = kind, status, calls, failures
        self.report: Any = None


class HistoryError(RagmeterError):
    """The run-history database cannot be opened or the run asked for does not exist."""


class QueueFull(RagmeterError):
    """The job queue holds `[runs] max_queued` runs already; the message says the cap and what to do."""


class WorkerError(RagmeterError):
    """The process that scores a dashboard's runs cannot start: says why, and where its output is."""


class ReviewError(RagmeterError, ValueError):
    """A review (or a label file's row) cannot be stored as given; the message says what to change."""
class ConfigError(RagmeterError, ValueError):
    """The operator's configuration file ($RAGMETER_CONFIG) is unreadable or wrong; names the file and key."""


class NotAllowed(RagmeterError, PermissionError):
    """The signed-in user's role (or not owning the run) does not allow this write; says who may."""


class MissingExtra(RagmeterError, ImportError):
    """An optional feature (Ray engine, Parquet) needs packages that are not installed."""


class TargetError(RagmeterError, Failed):
    """One call to a target failed. `retryable` calls (429, 5xx, timeouts) are tried again;
    `retry_after` is the server's Retry-After in seconds, when it sent one."""

    def __init__(self, message: str, *, retryable: bool = False, retry_after: Optional[float] = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class TargetConfigError(TargetError):
    """The target is misconfigured (unknown module or function, bad URL or body template)."""


class RenderError(RagmeterError):
    """A chart or PDF the renderer could not make (its child process crashed, ran out of time or memory, or
    refused the spec); the message names the file and why. The process that asked lives on."""
