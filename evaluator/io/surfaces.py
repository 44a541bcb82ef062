"""Where a dataset is being loaded from, so error advice uses that surface's own words.

A user of the CLI fixes a missing column with `--mapping answer=COLUMN`, a dashboard user with the
Column mapping selectors, a library user with `mapping={...}`: advice in any other syntax would send
them looking for an option they do not have. Callers pass one of the three constants below to
`load_dataset(..., surface=...)`; the library's is the default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List


@dataclass(frozen=True)
class Surface:
    """How a user of one surface picks a column or raises a limit (each text ends without a period)."""

    name: str
    map_column: str  # "{field}" is replaced by the sample field, e.g. answer
    raise_rows: str  # "" where the surface has no row limit to raise
    raise_bytes: str
    ask_target: str = ""  # how this surface gets the answers from the user's pipeline instead

    def map_advice(self, field: str) -> str:
        """What to do when `field` has no column: rename it, or map it the way this surface does
        (an answer may also come from the user's pipeline, called for each question)."""
        advice = f"Rename the column or {self.map_column.format(field=field)}"
        return advice + (f", {self.ask_target}" if field == "answer" and self.ask_target else "")

    def map_all_advice(self, fields: List[str]) -> str:
        """What to do when several fields have no column: one line mapping them all, in this surface's words."""
        if self.name == "cli":
            return "Rename the columns or pass " + " ".join(f"--mapping {f}=COLUMN" for f in fields)
        return "Rename the columns or " + "; ".join(self.map_column.format(field=f) for f in fields)

    def limit_advice(self, which: str) -> str:
        """How to get past a limit (`which`: "rows" or "bytes"): raise it where possible, or split the file."""
        raise_it = self.raise_rows if which == "rows" else self.raise_bytes
        return f"{raise_it}, or split the file" if raise_it else "split the file"


LIBRARY = Surface("library", "pass mapping={{'{field}': '<your column>'}}",
                  "raise max_rows=...", "raise max_bytes=...",
                  "or give a target that answers each question (evaluator.targets; load with needs_answer=False)")
CLI = Surface("cli", "pass --mapping {field}=COLUMN",
              "raise it with --max-rows N (or RAGMETER_MAX_ROWS, the team file's [inputs] max_rows)",
              "raise it with --max-mb MB (or RAGMETER_MAX_MB, the team file's [inputs] max_mb)",
              "or give a target that answers each question: --target URL or module:function")
DASHBOARD = Surface("dashboard", "choose the column for {field} under Column mapping",
                    "raise Max rows under Upload limits", "raise Max file size under Upload limits",
                    "or choose Answers: call my pipeline")
