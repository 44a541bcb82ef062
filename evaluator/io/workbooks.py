"""Excel workbooks (.xlsx, .xlsm): the sheet that holds the data, its header row and one dict per data row.

Read with openpyxl in read-only mode (rows stream from the sheet's XML; bench/xlsx_read.py measured it
against python-calamine). Before openpyxl parses anything the zip's directory is checked: an .xlsx is a
zip of XML parts, and a few kilobytes can declare gigabytes (a zip bomb). Python's zipfile never unpacks a
member past the size its directory declares, so the declared sizes are a true bound: their sum must fit
the source's decoded budget (`Source.max_decoded`, the byte limit when one is given, as for Parquet).
The cells read are counted against the same budget as rows stream.

Which sheet: `--sheet NAME` (the dashboard's Sheet select), else the first sheet whose header row names a
question (any accepted name or human synonym, see dialects.py); else the first sheet that is not empty.
The header is the sheet's first non-empty row; it must hold text (a sheet whose first row is numbers has
no header, and is refused with what to do). A header over two rows (merged cells: group labels or a title
above the names, names merged down beside sub-names) is read as one (io/headers.py) and said in a note; a
title row over data with no column names is refused, naming the row. Rows are numbered as Excel numbers
them, and every message names the file, the sheet and that row ("data.xlsx, sheet 'Data', line 7").

Cells: text as written; whole numbers without ".0"; dates in ISO form; empty cells as "" (as in a CSV).
A password-protected workbook is not a zip but an encrypted OLE2 file; it is refused with what to do.

Several passages in one contexts cell (`split_passages`): a spreadsheet cell holds one text, so when it
is not a JSON list, passages are separated by an empty line (two line breaks in a row, spaces between
them allowed). A single line break stays inside a passage. The load note says how many cells were split
into how many contexts.
"""
from __future__ import annotations

import datetime as dt
import itertools
import re
import zipfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import IO, Any, Callable, Iterator, List, Optional, Tuple

from ..errors import MissingExtra
from .decoded import Budget, mb, sizes
from .headers import MAX_HEADER_CHARS, merged_title, two_row_header
from .readings import Reading
from .sources import Records, Rows, Source, Where

XLSX_FORMAT = "xlsx"
OLE2_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted (password-protected) workbook, or a legacy .xls
HEADER_SCAN_ROWS = 20  # blank rows above the header that are skipped
PASSAGE_BREAK = re.compile(r"\n[ \t]*\n")  # an empty line between two passages
_SAVE_AS = "open it in Excel and save it again as .xlsx (File > Save As > Excel Workbook), or save the sheet as 'CSV UTF-8'"


@dataclass
class Workbook:
    """A workbook's sheets, the chosen one, and how it was chosen (for the load note)."""

    sheets: List[str]
    sheet: str
    reason: str
    notes: List[str] = field(default_factory=list)  # how its header was read (two rows)


def sheet_where(name: str, sheet: str, line: Optional[int] = None) -> Where:
    return Where(f"{name}, sheet '{sheet}'", line)


def _load(src: Source) -> Any:
    try:
        import openpyxl
    except ImportError:
        raise MissingExtra("reading Excel workbooks needs openpyxl: pip install 'ragmeter[excel]'") from None
    check_archive(src)
    try:
        return openpyxl.load_workbook(src.open(), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, OSError, ValueError, TypeError) as exc:
        raise Where(src.name).error(f"is not a readable Excel workbook ({type(exc).__name__}: {exc}); {_SAVE_AS}") from None
    except Exception as exc:  # openpyxl's own parse errors (broken XML parts) have no common base
        raise Where(src.name).error(f"is a damaged Excel workbook ({type(exc).__name__}: {exc}); {_SAVE_AS}") from None


def check_archive(src: Source) -> None:
    """Refuse what is not an .xlsx zip (encrypted, legacy .xls, broken) and a zip that declares too much."""
    with src.open() as f:
        head = f.read(8)
    if head == OLE2_MAGIC:
        raise Where(src.name).error(
            "is password-protected (encrypted) or an old-style .xls workbook; ragmeter cannot open it. In Excel "
            "remove the password (File > Info > Protect Workbook > Encrypt with Password, clear it) and save as "
            ".xlsx, or save the sheet as 'CSV UTF-8'")
    if not head.startswith(b"PK"):
        raise Where(src.name).error(f"is not an Excel workbook (an .xlsx file is a zip archive); {_SAVE_AS}")
    try:
        with src.open() as raw, zipfile.ZipFile(raw) as archive:
            declared = sum(info.file_size for info in archive.infolist())
            parts = archive.namelist()
            fits = declared <= src.max_decoded and "xl/workbook.xml" in parts  # only then is a sheet unpacked
            smallest = _smallest_sheet(archive, parts, src) if fits else None
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, zlib.error) as exc:
        raise Where(src.name).error(f"is a damaged Excel workbook (a broken zip: {exc}); {_SAVE_AS}") from None
    if "xl/workbook.xml" not in parts:
        raise Where(src.name).error(f"is a zip archive but not an Excel workbook (no xl/workbook.xml); {_SAVE_AS}")
    if declared > src.max_decoded:
        unpacked, limit = sizes(declared, src.max_decoded)
        raise Where(src.name).error(
            f"unpacks to {unpacked} ({mb(_size(src))} packed), more than the {limit} a dataset may hold here; it may "
            f"be a zip bomb. Delete sheets and columns ragmeter does not read, {src.surface.limit_advice('bytes')}")
    if smallest is not None and src.max_rows is not None and smallest[0] > src.max_rows:
        which = "its sheet" if smallest[1] == 1 else f"the smallest of its {smallest[1]} sheets"
        raise Where(src.name).error(f"has {smallest[0]:,} rows under the header of {which}, more than the limit "
                                    f"of {src.max_rows:,}; {src.surface.limit_advice('rows')}")


def check_rows(book: Any, sheet: str, header_row: int, src: Source) -> None:
    """Refuse the chosen sheet when it has more data rows than `src.max_rows`, before reading one."""
    path, archive = getattr(book[sheet], "_worksheet_path", None), getattr(book, "_archive", None)
    if src.max_rows is None or not path or archive is None:  # (openpyxl's private names may change)
        return
    with archive.open(path) as part:
        rows = count_rows(part) - header_row
    if rows > src.max_rows:
        raise sheet_where(src.name, sheet).error(
            f"has {rows:,} rows under its header, more than the limit of {src.max_rows:,}; "
            f"{src.surface.limit_advice('rows')}")


def _smallest_sheet(archive: zipfile.ZipFile, parts: List[str], src: Source) -> Optional[Tuple[int, int]]:
    """Before openpyxl loads anything (it reads the whole shared-strings table first: 79 s for 300,000 rows on a
    busy machine), the data rows of the workbook's smallest sheet, and how many sheets: when even that one is
    over the row limit (one sheet, usually), the workbook is refused unread. None without a row limit."""
    sheets = [p for p in parts if p.startswith("xl/worksheets/") and p.endswith(".xml")]
    if src.max_rows is None or not sheets:
        return None
    counts = []
    for name in sheets:
        with archive.open(name) as part:
            counts.append(count_rows(part) - 1)  # less its header row
    return min(counts), len(sheets)


def count_rows(part: IO[bytes]) -> int:
    """The `<row>` elements of a sheet's XML, counted in bytes as it streams (a cell's text never holds a raw
    `<`); a writer that prefixes its tags (`<x:row>`) counts 0, and the rows are then counted as read."""
    count, tail = 0, b""
    for chunk in iter(lambda: part.read(1 << 20), b""):
        data = tail + chunk
        count += data.count(b"<row ") + data.count(b"<row>")
        tail = data[-4:]  # "<row" cut by the chunk's end is counted with the next; 4 bytes never hold a whole tag
    return count


def _size(src: Source) -> int:
    with src.open() as f:
        f.seek(0, 2)
        return int(f.tell())


def cell_text(value: Any) -> Any:
    """A cell as the loader reads it: text kept, whole numbers without '.0', dates as ISO text, empty as ""."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    return str(value)


def _header_of(rows: Iterator[Tuple[int, Tuple[Any, ...]]]) -> Optional[Tuple[int, Tuple[Any, ...]]]:
    for number, cells in rows:
        if any(c not in (None, "") for c in cells):
            return number, cells
        if number >= HEADER_SCAN_ROWS:
            return None
    return None


def _numbered(ws: Any) -> Iterator[Tuple[int, Tuple[Any, ...]]]:
    # A sheet's stored dimensions can be wrong (some writers leave them out or stale); read-only openpyxl trusts
    # them unless reset, and would cut rows short. Reset, rows come as stored (a short row is padded later).
    ws.reset_dimensions()
    return enumerate(ws.iter_rows(values_only=True), 1)


def _names_question(cells: Tuple[Any, ...]) -> bool:
    from .dialects import detect_mapping

    return "question" in detect_mapping(str(c) for c in cells if isinstance(c, str))


def choose_sheet(book: Any, src: Source) -> Workbook:
    """The sheet to read: the one asked for, else the first whose header names a question, else the first with data."""
    names = list(book.sheetnames)
    if src.sheet is not None:
        if src.sheet in names:
            return Workbook(names, src.sheet, "chosen")
        raise Where(src.name).error(f"has no sheet named '{src.sheet}'; its sheets are: "
                                    f"{', '.join(repr(n) for n in names)}. Choose one of these")
    first_full: Optional[str] = None
    for name in names:
        found = _header_of(_numbered(book[name]))
        if found is None:
            continue
        if _names_question(found[1]):
            return Workbook(names, name, "its header names a question")
        first_full = first_full or name
    if first_full is None:
        raise Where(src.name).error("has no data: every sheet is empty; put a header row (Question, Answer, "
                                    "Contexts, ...) and one row per sample in a sheet")
    return Workbook(names, first_full, "the first sheet with data")


@contextmanager
def read_workbook(src: Source) -> Iterator[Rows]:
    """The reader of .xlsx and .xlsm (io/filetypes.py): a zip of XML sheets, the chosen sheet's rows."""
    columns, header, records, book = workbook_records(src)
    yield Rows("binary", columns, header, records, sheet_note(book) + book.notes, book.sheets, book.sheet,
               passages=True)


def workbook_records(src: Source, load: Callable[[Source], Any] = _load) -> Tuple[List[str], Where, Records, Workbook]:
    """The chosen sheet's header columns, where the header is, its data rows, and the workbook's sheets (`load`:
    a Source to a book with openpyxl's read-only surface; an .ods book in io/opendocument.py)."""
    book = load(src)
    try:
        chosen = choose_sheet(book, src)
        rows = _numbered(book[chosen.sheet])
        found = _header_of(rows)
        if found is None:
            raise sheet_where(src.name, chosen.sheet).error(
                f"is empty (no row in its first {HEADER_SCAN_ROWS}); choose the sheet that holds the data")
        check_rows(book, chosen.sheet, found[0], src)
        columns, header, rows = _header(found, rows, src.name, chosen)
    except BaseException:
        book.close()
        raise
    return columns, header, _rows(book, rows, columns, src, chosen.sheet), chosen


Numbered = Iterator[Tuple[int, Tuple[Any, ...]]]


def _header(found: Tuple[int, Tuple[Any, ...]], rows: Numbered, name: str,
            chosen: Workbook) -> Tuple[List[str], Where, Numbered]:
    """The columns from the header row, or from two header rows (io/headers.py); the rows left after them."""
    number, cells = found
    following = _header_of(rows)
    if following is None:
        return _columns(cells, sheet_where(name, chosen.sheet, number)), sheet_where(name, chosen.sheet, number), rows
    second_number, second = following
    two = two_row_header(_trimmed(cells), _trimmed(second))
    if two is not None:
        where = sheet_where(name, chosen.sheet, second_number)
        chosen.notes.append(f"Header on rows {number} and {second_number} (merged cells) read as one: "
                            f"{', '.join(repr(c) for c in two if c)}.")
        return _columns(tuple(two), where), where, rows
    title = merged_title(cells, second)
    if title is not None:
        raise sheet_where(name, chosen.sheet, number).error(
            f"holds one merged cell ('{title[:40]}') and no column names: it is a title, and the row under it "
            f"(row {second_number}) is data. Insert a header row naming each column (Question, Answer, Contexts, "
            "Reference answer, ID) under the title, or delete the title row so the column names are the first row")
    where = sheet_where(name, chosen.sheet, number)
    return _columns(cells, where), where, itertools.chain([following], rows)


def _trimmed(cells: Tuple[Any, ...]) -> Tuple[Any, ...]:
    while cells and cells[-1] in (None, ""):
        cells = cells[:-1]
    return cells


def _columns(cells: Tuple[Any, ...], where: Where) -> List[str]:
    from .dialects import check_duplicates

    cells = _trimmed(cells)
    if not any(isinstance(c, str) and c.strip() for c in cells) or any(
            (isinstance(c, (int, float, dt.date)) and not isinstance(c, bool))
            or (isinstance(c, str) and ("\n" in c or len(c) > MAX_HEADER_CHARS)) for c in cells):
        shown = ", ".join(repr(cell_text(c)[:24]) for c in cells[:4])
        raise where.error(f"has no header row: its first row holds values ({shown}), not column names; insert "
                          "a row above the data naming each column (Question, Answer, Contexts, Reference answer, ID)")
    columns = [(c.strip() if isinstance(c, str) else cell_text(c)) or f"column_{i}" for i, c in enumerate(cells, 1)]
    check_duplicates(columns, where)
    return columns


def _rows(book: Any, rows: Iterator[Tuple[int, Tuple[Any, ...]]], columns: List[str], src: Source,
          sheet: str) -> Records:
    budget = Budget(src.name, src.max_decoded)
    width = len(columns)
    try:
        for number, cells in rows:
            values = [cell_text(c) for c in cells]
            extra = [v for v in values[width:] if v != ""]
            if not any(v != "" for v in values):
                continue
            where = sheet_where(src.name, sheet, number)
            if extra:
                raise where.error(f"has a value in column {width + 1 + next(i for i, v in enumerate(values[width:]) if v)}, "
                                  "right of the last named column; give that column a header or clear the cell")
            budget.spend(sum(len(v) for v in values), f"sheet '{sheet}' up to row {number}")
            values += [""] * (width - len(values))
            yield where, dict(zip(columns, values[:width]))
    finally:
        book.close()


# -- several passages in one contexts cell ------------------------------------------------------------

@dataclass
class PassageSplit:
    """The spreadsheet rule for one contexts column, counting what it split for the load note."""

    column: str
    cells: int = 0
    passages: int = 0

    def __call__(self, value: Any, where: Where, column: str) -> Any:
        if not isinstance(value, str) or value.lstrip().startswith("[") or not PASSAGE_BREAK.search(value.strip()):
            return value
        parts = [p.strip() for p in PASSAGE_BREAK.split(value.strip()) if p.strip()]
        self.cells += 1
        self.passages += len(parts)
        return parts

    def note(self) -> List[str]:
        if not self.cells:
            return []
        cells = "1 cell" if self.cells == 1 else f"{self.cells:,} cells"
        return [f"{self.column}: {cells} with an empty line between passages split into {self.passages:,} contexts "
                "(a single line break stays inside a passage)."]


def with_passage_split(reading: Reading, contexts: Optional[str]) -> Tuple[Reading, Optional[PassageSplit]]:
    """The reading with the spreadsheet passage rule on the contexts column (when there is one)."""
    if not contexts or any(column == contexts for column, _ in reading.rules):
        return reading, None
    split = PassageSplit(contexts)
    return replace(reading, rules=reading.rules + ((contexts, split),)), split


def sheet_note(book: Workbook, kind: str = "Excel workbook") -> List[str]:
    """Which sheet was read, and why, when the workbook has more than one."""
    if len(book.sheets) < 2:
        return [f"{kind}: sheet '{book.sheet}' read."]
    others = ", ".join(repr(n) for n in book.sheets if n != book.sheet)
    return [f"{kind}: sheet '{book.sheet}' read ({book.reason}); other sheets not read: {others} "
            "(choose another with --sheet NAME, or the Sheet select in the dashboard)."]

