"""A run's downloads, each built only when asked: CSV, Excel, JSON, Parquet, the HTML report and the PDF summary.

The rows come from the report held in memory, or from the history a page at a time (never the whole run at
once); the HTML report of a large stored run embeds its worst rows, chosen by SQL. The writers are
report/files.py's and report/export.py's, loaded on the first download.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Tuple

from ..analysis.summary import RunSummary
from ..model import EvalReport, EvalResult
from ..store import pages
from ..store.history import RunStore
from .header import RunHeader


@dataclass(frozen=True)
class RunFiles:
    """What a run's files are written from: its summary and settings, and its rows in `report` (held in memory)
    or in `store` under `run_id`. `reviewed` gives, when the HTML is built, each metric's line about the
    reviewers' corrected mean."""

    dataset_name: str
    summary: RunSummary
    settings: Dict[str, Any]
    report: Optional[EvalReport] = None
    store: Optional[RunStore] = None
    run_id: Optional[str] = None
    labels_agreement: Any = None
    reviewed: Optional[Callable[[], Dict[str, str]]] = None
    date: str = ""  # when the run was made (the exports' provenance caption; now when empty)
    title: str = ""  # the run's name (the service's run_title); the dataset's when empty
    page: str = ""  # the PDF's page, "a4" or "letter" ("": RAGMETER_PDF_PAGE, else A4)

    def header(self) -> RunHeader:
        """What the Excel Summary and the PDF open with: the run's name, provenance and notes."""
        return RunHeader.of(title=self.title, dataset=self.dataset_name, settings=self.settings,
                            summary=self.summary, date=self.date, run_id=self.run_id or "", notes=self.notes())

    @property
    def names(self) -> List[str]:
        return list(self.summary.metric_names)

    def rows(self) -> Iterator[Tuple[int, EvalResult]]:
        """The run's rows in order, from memory or from the history a page at a time (a fresh pass each call)."""
        if self.report is not None:
            return enumerate(self.report.results)
        if self.store is None or not self.run_id:
            raise ValueError("RunFiles needs a report or a store and a run id")
        return self.store.iter_results(self.run_id)

    def embedded(self) -> Any:
        """What the HTML report embeds: every row, or of a larger stored run its worst rows, read by SQL."""
        from . import export

        if self.report is not None or self.summary.n_rows <= export.DEFAULT_MAX_SAMPLES:
            return self.rows()
        assert self.store is not None and self.run_id
        return pages.worst_rows(self.store, self.run_id, export.DEFAULT_MAX_SAMPLES)

    def csv(self) -> bytes:
        from . import files

        return files.csv_bytes(self.rows(), self.names)

    def xlsx(self) -> bytes:
        """The Excel workbook: a Summary sheet and a Samples sheet (report/xlsx.py)."""
        from . import xlsx

        return xlsx.xlsx_bytes(self.rows(), self.summary, settings=self.settings, dataset=self.dataset_name,
                               header=self.header())

    def json(self) -> bytes:
        from . import files

        return files.json_bytes(self.rows, self.summary, self.settings)

    def parquet(self) -> bytes:
        from . import files

        return files.parquet_bytes(self.rows(), self.names)

    def pdf(self) -> bytes:
        """The one-page PDF summary (report/pdf.py): headline, means chart, advice, the worst rows, provenance."""
        from . import pdf

        return pdf.summary_pdf(self.summary, self.worst(pdf.WORST), settings=self.settings, header=self.header(),
                               page=self.page)

    def notes(self) -> List[Tuple[str, str]]:
        """The run's notes as (who, when and on what; the text), oldest first; none for a run not in a history."""
        if self.store is None or not self.run_id:
            return []
        from ..store.notes import notes_of

        return [(f"{n.author} · {n.created_at[:16].replace('T', ' ')} · on {n.on}", n.text)
                for n in notes_of(self.store, self.run_id)]

    def worst(self, limit: int) -> Any:
        """The `limit` rows with the lowest overall score, worst first (unscored rows count as 0)."""
        if self.report is not None:
            scored = sorted(enumerate(self.report.results), key=lambda p: (p[1].overall_score() or 0.0, p[0]))
            return scored[:limit]
        assert self.store is not None and self.run_id
        return pages.worst_rows(self.store, self.run_id, limit)

    def html(self) -> str:
        from . import export

        return export.summary_html(self.summary, self.embedded, title=f"ragmeter report: {self.dataset_name}",
                                   dataset_name=self.dataset_name, settings=self.settings,
                                   labels_agreement=self.labels_agreement,
                                   reviewed=self.reviewed() if self.reviewed is not None else None,
                                   run_id=self.run_id or "", date=self.date, notes=self.notes())
