"""CSV rows: the header's columns and one dict per data row, with physical line numbers.

A header without commas but with semicolons or tabs is read with that delimiter (European Excel
exports). Blank rows are skipped, short rows padded, rows with extra cells refused.

A .txt dataset is what Excel's "Save As > Unicode Text" writes: UTF-16 with a byte-order mark, cells
separated by tabs, lines ending in CRLF, quoted like a CSV where a cell holds a tab or a line break. It is
read as a .tsv (the encoding found from its mark); a .txt whose first line has no tab is plain text, refused
with what to do.
"""
from __future__ import annotations

import csv
import itertools
from contextlib import contextmanager
from typing import IO, Any, Iterator, List, Optional, Tuple

from .dialects import check_duplicates
from .encodings import choose_encoding, text_stream
from .headers import merged_title, two_row_header
from .sources import Records, Rows, Source, Where

# Python's csv refuses cells over 128 KiB by default; real contexts (whole pages) can be larger.
# 2**31-1 is the largest value every platform's C long accepts.
_FIELD_LIMIT = 2**31 - 1


@contextmanager
def read_csv(src: Source) -> Iterator[Rows]:
    """The reader of .csv and .tsv (io/filetypes.py): the header's columns, then the rows."""
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        columns, header, records, notes = csv_records(text, src)
        yield Rows(encoding, columns, header, records, notes, passages=True)


@contextmanager
def read_tab_text(src: Source) -> Iterator[Rows]:
    """The reader of .txt datasets (io/filetypes.py): Excel's Unicode Text, tab-separated, read as a .tsv."""
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        first = next((line for line in text if line.strip()), "")
    if "\t" not in first:
        raise Where(src.name).error(
            "is plain text, not a table: a .txt dataset is tab-separated, as Excel's 'Save As > Unicode Text' writes "
            "it, with a header line (Question, Answer, Contexts, ...). Save the sheet that way or as 'CSV UTF-8'; "
            "to make questions from a text document, give it to ragmeter generate --docs")
    with read_csv(src) as rows:
        yield rows


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


def csv_records(text: IO[str], src: Source) -> Tuple[List[str], Where, Records, List[str]]:
    """The header's columns, where the header is, the data rows, and a note when the header spans two lines."""
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
    columns, rows = _two_rows(header, reader, src.name, skipped)
    if columns is None:
        columns = _csv_header(header, header_where)
        return columns, header_where, _csv_rows(rows, reader, columns, src.name, skipped), []
    second = Where(src.name, skipped + reader.line_num)
    check_duplicates(columns, second)
    note = (f"Header on lines {skipped + 1} and {second.line} read as one (a sheet's merged cells, saved as CSV): "
            f"{', '.join(repr(c) for c in columns)}.")
    return columns, second, _csv_rows(rows, reader, columns, src.name, skipped), [note]


Pending = List[Tuple[int, List[str]]]  # a row read ahead, with the line it starts on


def _two_rows(header: List[str], reader: Any, name: str, skipped: int) -> Tuple[Optional[List[str]], Pending]:
    """The columns of a header over two lines (a sheet's merged cells saved as CSV: io/headers.py), with no row
    left to read; else None and the line after the header, to be read as data. A title line over data is refused."""
    start = skipped + reader.line_num + 1
    second = _next_row(reader, Where(name, start))
    if second is None:
        return None, []
    two = two_row_header(header, second)
    if two is not None:
        return [c or f"column_{i}" for i, c in enumerate(two, 1)], []
    title = merged_title(header, second)
    if title is not None:
        raise Where(name, skipped + 1).error(
            f"holds one cell ('{title[:40]}') and no column names: it is a title (a merged cell, saved as CSV), and "
            f"line {start} is data. Put a header line naming each column (Question, Answer, Contexts, Reference "
            "answer, ID) under the title, or delete the title line so the column names come first")
    return None, [(start, second)]


def _next_row(reader: Any, where: Where) -> Optional[List[str]]:
    try:
        return next(reader)
    except StopIteration:
        return None
    except csv.Error as exc:
        raise where.error(f"is not valid CSV ({exc}); check the quoting of this row") from None


def _csv_rows(pending: Pending, reader: Any, columns: List[str], name: str, skipped: int) -> Records:
    width = len(columns)
    while True:
        if pending:  # the line after the header, read ahead to tell a second header line from data
            start, cells = pending.pop()
        else:
            # A quoted cell may span lines: report the line where the row starts.
            start = skipped + reader.line_num + 1
            row = _next_row(reader, Where(name, start))
            if row is None:
                return
            cells = row
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > width:
            raise Where(name, start).error(
                f"has {len(cells)} cells but the header has {width} columns; put double quotes around "
                'cells that contain the delimiter ("like, this") or add the missing header')
        if len(cells) < width:  # trailing empty cells left out, as some exporters do
            cells += [""] * (width - len(cells))
        yield Where(name, start), dict(zip(columns, cells))
