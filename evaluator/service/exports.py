"""A run's files: the one use case under the Report page's downloads and `ragmeter export RUN_ID -o FILE`.

Each type is a row of EXPORT_TYPES (its extension, MIME type and what it holds); `export_bytes` builds one from
a run's `RunFiles` (report/downloads.py: rows from the history a page at a time, never the run whole), so the
button and the command write the same bytes from the same summary, notes and reviewers' lines.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Dict, Mapping, Optional, Sequence

from ..analysis.provenance import file_name
from ..analysis.summary import RunSummary
from ..errors import RagmeterError
from ..report.downloads import RunFiles
from ..report.header import Note, RunHeader
from ..review.agreement import FEW_REVIEWS, ReviewAgreement, corrected_line
from ..scoring import summaries
from ..store.exams import with_exam
from ..store.history import RunStore
from ..store.naming import default_name
from .reviews import agreement, review_store


@dataclass(frozen=True)
class ExportType:
    """One file a run downloads as: its extension, MIME type, what it holds, and how RunFiles builds it."""

    ext: str
    mime: str
    what: str
    build: Callable[[RunFiles], bytes]
    kind: str  # the download name's <kind>: ragmeter-<dataset>-<run>-<kind>.<ext>


def _text(build: Callable[[RunFiles], str]) -> Callable[[RunFiles], bytes]:
    return lambda files: build(files).encode("utf-8")


EXPORT_TYPES: Dict[str, ExportType] = {t.ext: t for t in (
    ExportType("pdf", "application/pdf", "the one-page PDF summary", RunFiles.pdf, "summary"),
    ExportType("html", "text/html", "the HTML report", _text(RunFiles.html), "report"),
    ExportType("xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
               "the Excel workbook (Summary and Samples sheets)", RunFiles.xlsx, "results"),
    ExportType("csv", "text/csv", "every row as CSV", RunFiles.csv, "rows"),
    ExportType("json", "application/json", "the figures and every row as JSON", RunFiles.json, "results"),
    ExportType("parquet", "application/vnd.apache.parquet", "every row as Parquet", RunFiles.parquet, "rows"),
)}


def export_type(path: str) -> ExportType:
    """The file type `path`'s extension names; RagmeterError naming the supported ones otherwise."""
    ext = Path(path).suffix.lower().lstrip(".")
    found = EXPORT_TYPES.get(ext)
    if found is None:
        said = f".{ext}" if ext else "a file without an extension"
        raise RagmeterError(f"{path}: a run is exported as {', '.join('.' + e for e in EXPORT_TYPES)}, not {said} "
                            "(e.g. -o report.pdf)")
    return found


def export_bytes(files: RunFiles, ext: str) -> bytes:
    """The run's file of type `ext` (a key of EXPORT_TYPES), built now."""
    return EXPORT_TYPES[ext].build(files)


def export_file_name(dataset_name: str, run_id: Optional[str], ext: str) -> str:
    """The download's name, `ragmeter-<dataset>-<run>-<kind>.<ext>` (e.g. ragmeter-faq-3f2a9c-summary.pdf), made
    safe by the one sanitiser every download name goes through (analysis/provenance.py name_part): two runs'
    files never collide, and no name can carry markup, quotes, a path or a bidi control."""
    return file_name(dataset_name, run_id or "", EXPORT_TYPES[ext].kind, ext)


def run_title(dataset_name: str, settings: Mapping[str, Any], date: str = "", name: Optional[str] = None) -> str:
    """A run's name as its files and the Report's header show it: its own `name` when it has one, else
    "<dataset> · <scorer> · <date time>" (store/naming.py, the one place a run's default name is made)."""
    if name and name.strip():
        return " ".join(name.split())
    return default_name(Path(dataset_name).name if dataset_name else "", settings, date or "")


def run_header(dataset_name: str, summary: RunSummary, settings: Mapping[str, Any], *, run_id: Optional[str],
               date: str, notes: Sequence[Note] = (), name: Optional[str] = None) -> RunHeader:
    """What a run's workbook and PDF open with: its name, provenance and notes (`evaluate -o`)."""
    return RunHeader.of(title=run_title(dataset_name, settings, date, name), dataset=dataset_name,
                        settings=settings, summary=summary, date=date, run_id=run_id or "", notes=notes)


def reviewed_line(a: ReviewAgreement) -> str:
    """The exports' line about a metric's reviews: no interval from fewer than FEW_REVIEWS labels."""
    if a.n_reviews < FEW_REVIEWS:
        return f"{a.n_reviews} review{'' if a.n_reviews == 1 else 's'}: too few reviews for an interval"
    return corrected_line(a)


def reviewed_lines(store: RunStore, run_id: Optional[str]) -> Dict[str, str]:
    """Per reviewed metric, the line the HTML report prints about its reviewers' corrected mean."""
    return {m: reviewed_line(a) for m, a in agreement(review_store(store), run_id).items()}


def stored_run_files(store: RunStore, run_id: str, page: str = "") -> RunFiles:
    """The files of a stored run (HistoryError for an unknown id), its summary built once if it has none."""
    info = store.get_run(run_id)
    summary = summaries.stored(store, run_id)
    return RunFiles(info.dataset_name, summary, with_exam(store, info.settings), store=store, run_id=run_id,
                    labels_agreement=dict(summary.agreement) or None,
                    reviewed=lambda: reviewed_lines(store, run_id), date=info.created_at,
                    title=run_title(info.dataset_name, info.settings, info.created_at, info.name), page=page)


def export_run(store: RunStore, run_id: str, path: str, page: str = "") -> ExportType:
    """Write the stored run's file of the type `path` names to `path` (a PDF on `page`: a4, letter); the type
    written."""
    kind = export_type(path)  # the extension first: a typo costs no read of the run
    try:
        store.get_run(run_id)
    except RagmeterError:
        raise RagmeterError(f"no run {run_id!r} in {store.shown}; list the saved runs (and their ids) with: "
                            "ragmeter runs") from None
    data = export_bytes(stored_run_files(store, run_id, page), kind.ext)
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    except OSError as exc:
        raise RagmeterError(f"{path}: the file cannot be written there ({exc.strerror or exc}); "
                            "choose another path") from None
    return kind
