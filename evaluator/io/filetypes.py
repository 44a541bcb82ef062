"""Every file type ragmeter reads or writes, in one table, and the one CSV writer with its formula guard.

A purpose (a dataset, documents, a test set, labels, a report) accepts some of the types; the
extension picks the type (`file_type(path, purpose)`), and a type the purpose does not take is an
error that names the file and lists the types it does take. Adding an input format is a row here
plus its reader (io/csv_rows.py, json_rows.py, arrow_rows.py).

Every CSV ragmeter writes goes through `csv_text`, so no cell a spreadsheet would run as a formula
(one starting with = + - @, or a tab or carriage return some spreadsheets skip before a formula)
ever reaches a user's Excel as one: such a cell gets a leading apostrophe.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, TextIO, Type

from ..errors import DatasetError, MissingExtra, OutputError, RagmeterError, ReviewError


@dataclass(frozen=True)
class Purpose:
    """What a file is for, as the error message says it: ragmeter `verb` `noun` as ..."""

    name: str
    verb: str
    noun: str
    error: Type[RagmeterError]
    also: str = ""  # what else it accepts, for the message


DATASET = Purpose("dataset", "reads", "datasets", DatasetError,
                  " and Hugging Face datasets folders made by save_to_disk")
DOCUMENTS = Purpose("documents", "reads", "documents", DatasetError, " (a table holds one document a row)")
TESTSET = Purpose("testset", "writes", "test sets", DatasetError)
LABELS = Purpose("labels", "writes", "labels", ReviewError)
REPORT = Purpose("report", "writes", "reports", OutputError)
_READ = {DATASET.name, DOCUMENTS.name}


@dataclass(frozen=True)
class FileType:
    """One extension: its format (which reader or writer), its CSV delimiter, and the purposes it serves."""

    suffix: str
    format: str
    purposes: FrozenSet[str]
    delimiter: str = ","

    @property
    def table(self) -> bool:
        """Rows in columns (csv, jsonl, json, parquet), not one document of text."""
        return self.format in ("csv", "jsonl", "json", "parquet", "xlsx")


def _row(suffix: str, fmt: str, *purposes: Purpose, delimiter: str = ",") -> FileType:
    return FileType(suffix, fmt, frozenset(p.name for p in purposes), delimiter)


FILE_TYPES = (
    _row(".csv", "csv", DATASET, DOCUMENTS, TESTSET, LABELS, REPORT),
    _row(".tsv", "csv", DATASET, DOCUMENTS, delimiter="\t"),
    _row(".jsonl", "jsonl", DATASET, DOCUMENTS, TESTSET, LABELS),
    _row(".ndjson", "jsonl", DATASET, DOCUMENTS),
    _row(".json", "json", DATASET, DOCUMENTS, REPORT),
    _row(".parquet", "parquet", DATASET, DOCUMENTS, TESTSET, LABELS, REPORT),
    _row(".eval", "inspect_eval", DATASET),  # an inspect_ai log archive (io/inspect_logs.py)
    _row(".xlsx", "xlsx", DATASET, REPORT),  # an Excel workbook (io/workbooks.py in; report/xlsx.py out)
    _row(".xlsm", "xlsx", DATASET),  # a macro-enabled workbook: its cells are read, its macros never run
    _row(".html", "html", DOCUMENTS, REPORT),
    _row(".htm", "html", DOCUMENTS, REPORT),
    _row(".md", "text", DOCUMENTS),
    _row(".markdown", "text", DOCUMENTS),
    _row(".txt", "text", DOCUMENTS),
    _row(".pdf", "pdf", DOCUMENTS),
)
_BY_SUFFIX: Dict[str, FileType] = {t.suffix: t for t in FILE_TYPES}


def formats_for(purpose: Purpose) -> List[str]:
    """The extensions `purpose` accepts, in the table's order (".csv", ".tsv", ...)."""
    return [t.suffix for t in FILE_TYPES if purpose.name in t.purposes]


def readable_formats() -> List[str]:
    """Every extension ragmeter reads a dataset or documents from (what `ragmeter --help` lists)."""
    return [t.suffix for t in FILE_TYPES if t.purposes & _READ]


def file_type(path: Any, purpose: Purpose) -> FileType:
    """The type of `path` by its extension, if `purpose` takes it; else purpose.error naming the file."""
    name = str(path)
    suffix = (Path(name).suffix or (name if name.startswith(".") else "")).lower()  # ".csv" alone is a suffix
    found = _BY_SUFFIX.get(suffix)
    if found is not None and purpose.name in found.purposes:
        return found
    message = (f"unknown file type '{suffix or '(none)'}'; ragmeter {purpose.verb} {purpose.noun} as "
               f"{', '.join(formats_for(purpose))} files{purpose.also} (rename the file or use one of these formats)")
    if purpose.error is DatasetError:
        raise DatasetError(message, file=name)
    raise purpose.error(f"{path}: {message}")


# -- writing rows --------------------------------------------------------------------------------------
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """Lists and dicts as JSON text (a CSV cell holds them losslessly); text a spreadsheet would run as a
    formula gets a leading ' so it stays text."""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_PREFIXES) else value


def csv_text(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows as CSV with a header of `columns`; every cell through the formula guard.

    Encode with "utf-8-sig" when the file is meant for Excel, so non-Latin text opens correctly."""
    out = io.StringIO()
    write_csv_rows(out, rows, columns)
    return out.getvalue()


def write_csv_rows(f: TextIO, rows: Iterable[Mapping[str, Any]], columns: Optional[Sequence[str]] = None, *,
                   empty: Sequence[str] = ()) -> None:
    """Rows written to `f` one at a time (open it with newline=""), every cell through the formula guard; the
    header is `columns`, else the first row's keys (`empty` when there is no row)."""
    writer: Optional[csv.DictWriter] = None
    for row in rows:
        if writer is None:
            writer = csv.DictWriter(f, fieldnames=list(row if columns is None else columns))
            writer.writeheader()
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    if writer is None:
        csv.DictWriter(f, fieldnames=list(columns or empty)).writeheader()


def rows_bytes(rows: Sequence[Dict[str, Any]], kind: FileType, columns: Sequence[str]) -> bytes:
    """Rows as a .jsonl, .csv (for Excel: with a BOM) or .parquet file's bytes; `columns` head an empty one."""
    if kind.format == "jsonl":
        return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode("utf-8")
    if kind.format == "csv":
        return csv_text(rows, list(rows[0]) if rows else columns).encode("utf-8-sig")
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra("writing Parquet needs pyarrow: pip install 'ragmeter[parquet]'") from None
    table = pa.Table.from_pylist(rows) if rows else pa.table({c: pa.array([], pa.string()) for c in columns})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def write_rows(rows: Sequence[Dict[str, Any]], path: str, purpose: Purpose, columns: Sequence[str]) -> None:
    """Write rows to `path` in the format its extension names (one `purpose` accepts)."""
    Path(path).write_bytes(rows_bytes(rows, file_type(path, purpose), columns))
