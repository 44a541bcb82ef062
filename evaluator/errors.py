"""Every error ragmeter raises on purpose. The tree:

    RagmeterError                  base of everything below
    ├── DatasetError (ValueError)  a dataset file cannot be read: names the file, the line/row,
    │                              the column, and what to do about it
    ├── JudgeError                 a judge call failed for good (after retries); the evaluator
    │   │                          catches it and falls back to the heuristic, visibly
    │   └── JudgeConfigError       the judge cannot even start (no API key, bad base URL)
    ├── HistoryError               the run-history database cannot be used (bad path, unknown run)
    └── MissingExtra (ImportError) an optional feature's packages are not installed: names the
                                   `pip install 'ragmeter[extra]'` that adds them

Messages are written for the person at the keyboard: say what is wrong and what to do.
"""
from __future__ import annotations

from typing import Optional


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


class JudgeError(RagmeterError):
    """A judge call failed after all retries; the metric falls back to its heuristic."""


class JudgeConfigError(JudgeError):
    """The judge is misconfigured (missing key, unusable endpoint)."""


class HistoryError(RagmeterError):
    """The run-history database cannot be opened or the run asked for does not exist."""


class MissingExtra(RagmeterError, ImportError):
    """An optional feature (Ray engine, Parquet) needs packages that are not installed."""
