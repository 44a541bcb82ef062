"""The contract between the loader and each other tool's format: a `Reading` and a `Tally`.

A format module (dialects.py for column-renaming tools, traces.py, experiments.py, ...) offers a
detector `(by_key, first, mapping) -> Optional[Reading]`; dialects.DETECTORS lists them in the
order they are tried. A Reading says how that tool's file is read:
  - `rules`: cell rewrites applied to the raw row (deepeval's "|" join, TruLens's quoted text),
  - `mapping`: field -> column choices over the name detection,
  - `regroup`: a whole-stream rewrite into rows with ragmeter's own column names (spans grouped
    into traces, nested experiment records flattened). It counts what it read and why it left a
    row out in a `Tally`, whose `notes()` the CLI and the dashboard show.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .sources import Records, Where

CellRule = Callable[[Any, Where, str], Any]
Detector = Callable[[Dict[str, str], Mapping[str, Any], Mapping[str, Optional[str]]], Optional["Reading"]]
MAX_NAMED_SKIPS = 5  # the notes name this many skipped rows; all are counted


@dataclass
class Tally:
    """What a regroup found: counts in words ("24 traces", "23 with retrieval") and named skips."""

    what: str = "rows"  # the unit counted: "traces", "examples", "results"
    found: int = 0
    counts: Dict[str, int] = field(default_factory=dict)  # "with retrieval" -> 23
    skipped: List[Tuple[str, str]] = field(default_factory=list)  # (where/which, reason)

    def count(self, label: str, add: int = 1) -> None:
        self.counts[label] = self.counts.get(label, 0) + add

    def skip(self, which: str, reason: str) -> None:
        self.skipped.append((which, reason))

    def notes(self) -> List[str]:
        if not self.found and not self.skipped:
            return []
        what = self.what[:-1] if self.found == 1 and self.what.endswith("s") else self.what
        parts = [f"{self.found:,} {what}"] + [f"{n:,} {label}" for label, n in self.counts.items()]
        text = ", ".join(parts)
        if self.skipped:
            named = "; ".join(f"{which}: {why}" for which, why in self.skipped[:MAX_NAMED_SKIPS])
            more = f"; and {len(self.skipped) - MAX_NAMED_SKIPS:,} more" if len(self.skipped) > MAX_NAMED_SKIPS else ""
            text += f"; {len(self.skipped):,} skipped ({named}{more})"
        return [text + "."]


Regroup = Callable[[Records, Tally], Records]


@dataclass(frozen=True)
class Reading:
    """How one tool's file is read beyond its column names: cell rules, mapping changes, notes."""

    tool: Optional[str] = None  # "deepeval", "Phoenix", "OpenInference spans", ...; None: nothing special
    rules: Tuple[Tuple[str, CellRule], ...] = ()  # (column, rule) applied to the raw cell first
    mapping: Dict[str, Optional[str]] = field(default_factory=dict)  # field -> column, over detection
    notes: Tuple[str, ...] = ()  # what was recognised and how it is read, in words
    regroup: Optional[Regroup] = None  # raw records -> rows with ragmeter's column names
    what: str = "rows"  # what the regroup counts, for its Tally
    quiet: Tuple[str, ...] = ()  # columns left unread on purpose, said in the notes: no look-alike warning

    def apply(self, row: Dict[str, Any], where: Where) -> Dict[str, Any]:
        """The row with each rule's column rewritten (a new dict; rows without the column unchanged)."""
        if not self.rules:
            return row
        row = dict(row)
        for column, rule in self.rules:
            if column in row:
                row[column] = rule(row[column], where, column)
        return row

    def rows(self, records: Records, tally: Tally) -> Records:
        """The records as rows to plan: regrouped when the format needs it, else unchanged."""
        return records if self.regroup is None else self.regroup(records, tally)
