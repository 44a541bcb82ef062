"""A source's rows, whatever its format: CSV, JSON, JSON Lines, Parquet or a saved dataset.

What every reader shares (single-turn datasets in datasets.py, conversations in conversations.py): the
encoding found, the columns where the format fixes them, then the records with where each one is.
"""
from __future__ import annotations

import csv
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Iterator, List, Optional

from ..errors import DatasetError
from .arrow_rows import parquet_records, saved_dataset_records
from .csv_rows import csv_records
from .encodings import choose_encoding, text_stream
from .inspect_logs import EVAL_FORMAT, eval_records
from .json_rows import json_records, jsonl_records
from .sources import SAVED_DATASET, Records, Source, Where
from .workbooks import XLSX_FORMAT, sheet_note, workbook_records

ARROW_FORMATS = ("parquet", SAVED_DATASET)


@dataclass
class Rows:
    """A source's rows, once its encoding is known: columns where the format fixes them, then records."""

    encoding: str  # "binary" for Arrow formats
    columns: List[str]  # CSV header or Arrow schema; [] for JSON, whose objects each carry their keys
    header: Optional[Where]  # where the columns are (CSV line / Arrow file); None for JSON
    records: Records
    notes: List[str] = field(default_factory=list)  # how the format was read (an Excel workbook: which sheet)
    sheets: List[str] = field(default_factory=list)  # an Excel workbook's sheets; [] for other formats
    sheet: Optional[str] = None  # the sheet read


@contextmanager
def source_rows(src: Source) -> Iterator[Rows]:
    """The rows of a source; read errors that slip past the readers become a DatasetError."""
    try:
        if src.format in ARROW_FORMATS:
            columns, records = (parquet_records if src.format == "parquet" else saved_dataset_records)(src)
            yield Rows("binary", columns, Where(src.name), records)
            return
        if src.format == XLSX_FORMAT:  # a zip of XML sheets
            columns, header, records, book = workbook_records(src)
            yield Rows("binary", columns, header, records, sheet_note(book), book.sheets, book.sheet)
            return
        if src.format == EVAL_FORMAT:  # a zip of JSON samples
            yield Rows("binary", [], None, eval_records(src))
            return
        encoding = choose_encoding(src)
        with text_stream(src, encoding) as text:
            if src.format == "csv":
                columns, header, records = csv_records(text, src)
                yield Rows(encoding, columns, header, records)
            else:
                yield Rows(encoding, [], None, (jsonl_records if src.format == "jsonl" else json_records)(text, src))
    except (UnicodeError, csv.Error, RecursionError) as exc:  # backstop: the readers convert these first
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8 CSV or JSON Lines",
                           file=src.name) from None
