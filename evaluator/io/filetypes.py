"""Every file type ragmeter reads or writes, in one table, and the one CSV writer with its formula guard.

A purpose (a dataset, documents, a test set, labels, a report) accepts some of the types; the
extension picks the type (`file_type(path, purpose)`), and a type the purpose does not take is an
error that names the file and lists the types it does take.

A row names everything its lists need: the reader that reads it ("module:function", loaded on first use, so
this table imports no reader), a fixture a contract test loads, and what it is for `--help` and the docs'
formats table. `register_file_type` is the one door: the built-in rows below come in by it, and so does a
new format (one reader module, one row here; docs/extending.md). `reader_for(format)` is what io/rows.py
calls, so there is no other list of formats to extend.

Every CSV ragmeter writes goes through `csv_text`, so no cell a spreadsheet would run as a formula
(one starting with = + - @, or a tab or carriage return some spreadsheets skip before a formula)
ever reaches a user's Excel as one: such a cell gets a leading apostrophe. Every field is quoted, and the
apostrophe also goes after any separator a spreadsheet may split a field on (`,` `;` tab, a line break):
Excel in a locale whose list separator is `;` splits `note;=cmd|...` into a cell `=cmd|...` otherwise
(OWASP's CSV-injection guidance).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Any, Callable, Dict, FrozenSet, Iterable, List, Mapping, Optional, Sequence, TextIO, Type

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
    """One extension: its format, its CSV delimiter, the purposes it serves, and for a table read as a dataset
    its reader ("evaluator.io.csv_rows:read_csv": a context manager from a Source to its Rows, io/sources.py),
    a fixture that reads (a path from the checkout's root, loaded by tests/test_extending.py) and a few
    words on what it is for `--help` and the docs."""

    suffix: str
    format: str
    purposes: FrozenSet[str]
    delimiter: str = ","
    reader: str = ""
    fixture: str = ""
    about: str = ""  # "an inspect_ai log": said beside the extension in `ragmeter --help`

    @property
    def table(self) -> bool:
        """Rows in columns (csv, jsonl, json, parquet, xlsx: a type with a reader), not one document of text.

        A .txt is both: a dataset in Excel's "Unicode Text" (tab-separated), and one document for `generate`."""
        return bool(self.reader) and self.format != TEXT


def _row(suffix: str, fmt: str, *purposes: Purpose, delimiter: str = ",", reader: str = "", fixture: str = "",
         about: str = "") -> FileType:
    return FileType(suffix, fmt, frozenset(p.name for p in purposes), delimiter, reader, fixture, about)


FILE_TYPES: List[FileType] = []  # in registration order: the order of every list and table made from it
_BY_SUFFIX: Dict[str, FileType] = {}


def register_file_type(kind: FileType) -> FileType:
    """Add a file type, so its extension is read (or written) and listed; an extension already taken is an
    error. A type read as a dataset names its reader, which must say its columns or carry them per record."""
    if not kind.suffix.startswith("."):
        raise ValueError(f"file type {kind.suffix!r}: the suffix starts with a dot, like '.csv'")
    if kind.suffix in _BY_SUFFIX:
        raise ValueError(f"file type {kind.suffix!r} is already registered (as {_BY_SUFFIX[kind.suffix].format})")
    if DATASET.name in kind.purposes and not kind.reader:
        raise ValueError(f"file type {kind.suffix!r} is read as a dataset but names no reader= 'module:function'")
    FILE_TYPES.append(kind)
    _BY_SUFFIX[kind.suffix] = kind
    return kind


def unregister_file_type(suffix: str) -> None:
    """Take a file type out again (a test's toy format, a plugin replaced)."""
    FILE_TYPES.remove(_BY_SUFFIX.pop(suffix))


def reader_for(fmt: str) -> Callable[..., Any]:
    """The reader a registered file type names for format `fmt` (a context manager: Source -> Rows)."""
    named = next((t.reader for t in FILE_TYPES if t.format == fmt and t.reader), "")
    if not named:
        raise DatasetError(f"ragmeter has no reader for {fmt} files; use one of {', '.join(formats_for(DATASET))}")
    module, _, function = named.partition(":")
    return getattr(import_module(module), function)


TEXT = "text"  # a document of text; as a dataset (.txt), tab-separated rows (Excel's "Unicode Text")
_CSV = "evaluator.io.csv_rows:read_csv"
_JSONL = "evaluator.io.json_rows:read_jsonl"
_XLSX = "evaluator.io.workbooks:read_workbook"
_FIXTURES = "tests/fixtures/"
for _kind in (
    _row(".csv", "csv", DATASET, DOCUMENTS, TESTSET, LABELS, REPORT, reader=_CSV, fixture="sample_data/sample.csv"),
    _row(".tsv", "csv", DATASET, DOCUMENTS, delimiter="\t", reader=_CSV, fixture=_FIXTURES + "sample.tsv"),
    _row(".jsonl", "jsonl", DATASET, DOCUMENTS, TESTSET, LABELS, reader=_JSONL, fixture="sample_data/sample.jsonl"),
    _row(".ndjson", "jsonl", DATASET, DOCUMENTS, reader=_JSONL, fixture=_FIXTURES + "sample.ndjson"),
    _row(".json", "json", DATASET, DOCUMENTS, REPORT, reader="evaluator.io.json_rows:read_json",
         fixture=_FIXTURES + "deepeval_test_run.json"),
    _row(".parquet", "parquet", DATASET, DOCUMENTS, TESTSET, LABELS, REPORT,
         reader="evaluator.io.arrow_rows:read_parquet", fixture=_FIXTURES + "ragas_v0.parquet"),
    _row(".eval", "inspect_eval", DATASET, reader="evaluator.io.inspect_logs:read_eval",
         fixture=_FIXTURES + "inspect_log.eval", about="an inspect_ai log"),
    # an Excel workbook (io/workbooks.py in; report/xlsx.py out)
    _row(".xlsx", "xlsx", DATASET, REPORT, reader=_XLSX, fixture=_FIXTURES + "excel_two_sheets.xlsx"),
    # a macro-enabled workbook: its cells are read, its macros never run
    _row(".xlsm", "xlsx", DATASET, reader=_XLSX, fixture=_FIXTURES + "excel_macros.xlsm"),
    # an OpenDocument spreadsheet (LibreOffice, Google Sheets' download): read without openpyxl
    _row(".ods", "ods", DATASET, reader="evaluator.io.opendocument:read_ods", fixture=_FIXTURES + "sheets_two_sheets.ods",
         about="an OpenDocument spreadsheet"),
    # compressed: the name inside picks the reader (data.jsonl.gz, data.csv.zip), unpacked under a byte cap
    _row(".gz", "gzip", DATASET, reader="evaluator.io.compressed:read_gzip", fixture=_FIXTURES + "sample.jsonl.gz",
         about="a gzip of any of these, named after it (data.jsonl.gz)"),
    _row(".zip", "zip", DATASET, reader="evaluator.io.compressed:read_zip", fixture=_FIXTURES + "sample.csv.zip",
         about="a zip holding one of these"),
    _row(".html", "html", DOCUMENTS, REPORT),
    _row(".htm", "html", DOCUMENTS, REPORT),
    _row(".md", "text", DOCUMENTS),
    _row(".markdown", "text", DOCUMENTS),
    # a document for `generate`; a dataset as Excel's "Save As > Unicode Text" writes it (UTF-16, tabs)
    _row(".txt", TEXT, DATASET, DOCUMENTS, delimiter="\t", reader="evaluator.io.csv_rows:read_tab_text",
         fixture=_FIXTURES + "excel_unicode_text.txt", about="tab-separated text, as Excel's Unicode Text"),
    _row(".pdf", "pdf", DOCUMENTS, REPORT),  # read for `generate`; written as the one-page summary
):
    register_file_type(_kind)


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
# A formula prefix at the start of the text or right after a separator some spreadsheet splits on. Only the
# very next character counts: JSON's ", -2" in a list cell stays valid JSON (its piece starts with a space).
_FORMULA_STARTS = re.compile(r"(?:^|(?<=[,;\t\r\n]))(?=[=+\-@\t\r])")


def csv_cell(value: Any) -> Any:
    """Lists and dicts as JSON text (a CSV cell holds them losslessly); text a spreadsheet would run as a
    formula, at its start or after a separator inside it, gets a ' there so every piece stays text.
    Numbers are left alone: a negative score is a number, not a formula."""
    if isinstance(value, (list, dict)):
        value = json.dumps(value, ensure_ascii=False)
    return _FORMULA_STARTS.sub("'", value) if isinstance(value, str) else value


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
            writer = csv.DictWriter(f, fieldnames=list(row if columns is None else columns), quoting=csv.QUOTE_ALL)
            writer.writeheader()
        writer.writerow({k: csv_cell(v) for k, v in row.items()})
    if writer is None:
        csv.DictWriter(f, fieldnames=list(columns or empty), quoting=csv.QUOTE_ALL).writeheader()


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
