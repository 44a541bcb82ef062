"""What a run's files say about the run before its figures: its name, its provenance (dataset, data version,
judge, date, run id, ragmeter version) and its notes. The Excel Summary sheet and the PDF summary open with it, so
a file forwarded alone still says which run it is."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Mapping, Sequence, Tuple

from ..analysis.provenance import Provenance

Note = Tuple[str, str]  # (who, when and on what; the note's text)


@dataclass(frozen=True)
class RunHeader:
    """A run as its files name it: `title` (its name), where it came from, and its notes oldest first."""

    title: str
    provenance: Provenance
    notes: Tuple[Note, ...] = ()

    @classmethod
    def of(cls, *, title: str, dataset: str, settings: Mapping[str, Any], summary: Any, date: str, run_id: str,
           notes: Sequence[Note] = ()) -> "RunHeader":
        provenance = Provenance.of_summary(dataset=dataset, settings=settings, summary=summary, date=date,
                                           run_id=run_id)
        return cls(title or provenance.dataset, provenance, tuple(notes))

    def rows(self) -> List[Tuple[str, str]]:
        """(label, value) lines: run, dataset, date, data version, judge, run id, ragmeter version."""
        p = self.provenance
        return [("Run", self.title), ("Dataset", p.dataset), ("Date", p.date or "not recorded"),
                ("Data version", p.version), ("Judge", p.judge), ("Run id", p.run_id), ("ragmeter version", p.ragmeter)]
