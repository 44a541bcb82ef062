"""CSV rows: the header's columns and one dict per data row, with physical line numbers.

A header without commas but with semicolons or tabs is read with that delimiter (European Excel
exports). Blank rows are skipped, short rows padded, rows with extra cells refused.
"""
from __future__ import annotations

import csv
import itertools
from contextlib import contextmanager
from typing import IO, Any, Iterator, List, Optional, Tuple

from .dialects import check_duplicates
from .encodings import choose_encoding, text_stream
from .sources import Records, Rows, Source, Where

# Python's csv refuses cells over 128 KiB by default; real contexts (whole pages) can be larger.
# 2**31-1 is the largest value every platform's C long accepts.
_FIELD_LIMIT = 2**31 - 1


@contextmanager
def read_csv(src: Source) -> Iterator[Rows]:
    """The reader of .csv and .tsv (io/filetypes.py): the header's columns, then the rows."""
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        columns, header, records = csv_records(text, src)
        yield Rows(encoding, columns, header, records)


def _delimiter(header_line: str, default: str) -> str:
    if default == "," and "," not in header_line:
        for candidate in (";", "\t"):
            if candidate in header_line:
                return candidate
    return default


def _csv_header(cells: List[str], where: Where) -> List[str]:
    """Header names, trimmed; blank names become column_<n>; duplicates are an error."""
    columns = [c.strip() or f"column_{i}" for i, c in enumerate(cells, 1)]
    check_duplicates(columns, where)
    return columns


def csv_records(text: IO[str], src: Source) -> Tuple[List[str], Where, Records]:
    """The header's columns, where the header is, and the data rows."""
    csv.field_size_limit(_FIELD_LIMIT)  # process-wide, but only ever raised, so harmless to others
    first, skipped = text.readline(), 0
    while first and not first.strip():  # blank lines before the header still count as lines
        first, skipped = text.readline(), skipped + 1
    # strict: an unterminated quote is an error with its line, not a cell that swallows the rest of the file
    reader = csv.reader(itertools.chain([first], text), delimiter=_delimiter(first, src.delimiter), strict=True)
    header = _next_row(reader, Where(src.name, skipped + 1))
    if not header or not any(c.strip() for c in header):
        raise Where(src.name).error("is empty: no header and no rows; a CSV needs a header line "
                                     "(question,answer,contexts,...) and one line per sample")
    header_where = Where(src.name, skipped + 1)
    columns = _csv_header(header, header_where)
    return columns, header_where, _csv_rows(reader, columns, src.name, skipped)


def _next_row(reader: Any, where: Where) -> Optional[List[str]]:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise where.error(f"is not valid CSV ({exc}); check the quoting of this row") from None


def _csv_rows(reader: Any, columns: List[str], name: str, skipped: int) -> Records:
    width = len(columns)
    while True:
        # A quoted cell may span lines: report the line where the row starts.
        start = skipped + reader.line_num + 1
        cells = _next_row(reader, Where(name, start))
        if cells is None:
            return
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > width:
            raise Where(name, start).error(
                f"has {len(cells)} cells but the header has {width} columns; put double quotes around "
                'cells that contain the delimiter ("like, this") or add the missing header')
        if len(cells) < width:  # trailing empty cells left out, as some exporters do
            cells += [""] * (width - len(cells))
        yield Where(name, start), dict(zip(columns, cells))
