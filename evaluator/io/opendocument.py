"""OpenDocument spreadsheets (.ods: LibreOffice, Google Sheets' "Download > OpenDocument"), read without openpyxl.

An .ods is a zip whose content.xml holds every sheet as table:table > table:table-row > table:table-cell.
It is read with the standard library only: the zip's declared sizes checked against the decoded budget first
(as for .xlsx, io/workbooks.py), then content.xml streamed with iterparse, one row at a time, elements freed
as they pass. The book below offers the surface of openpyxl's read-only workbook that io/workbooks.py uses,
so sheet choice, header rows (two-row headers too), row numbers, budgets and messages are the workbook's.

Cells: a number (float, percentage, currency) from office:value, a date from office:date-value, a boolean
from office:boolean-value, else the cell's text (its paragraphs joined by line breaks, text:s spaces and
text:tab kept). Repeats are how ODF writes runs (number-rows-repeated, number-columns-repeated: a sheet ends
in a million empty rows): blank runs are kept as positions but never expanded into cells, trailing blanks
are dropped, and a repeated row with values is expanded only as far as the decoded budget lets _rows read.
"""
from __future__ import annotations

import zipfile
from contextlib import contextmanager
from typing import IO, Any, Callable, ContextManager, Iterator, List, Tuple
from xml.etree.ElementTree import Element, iterparse

from ..errors import DatasetError
from .decoded import mb
from .sources import Rows, Source, Where
from .workbooks import sheet_note, workbook_records

ODS_FORMAT = "ods"
_TABLE = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
_OFFICE = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
_TEXT = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
MAX_COLUMNS = 16_384  # the widest sheet LibreOffice and Excel allow: a repeat past it is not data
MAX_ROWS = 1_048_576  # the longest sheet they allow
_SAVE_AS = ("open it in LibreOffice or Google Sheets and save it again as .ods, or save the sheet as "
            "'Text CSV (UTF-8)'")


Content = Callable[[], ContextManager[IO[bytes]]]  # content.xml, opened afresh (and closed) for each read


def _t(name: str, space: str = _TABLE) -> str:
    return f"{{{space}}}{name}"


@contextmanager
def read_ods(src: Source) -> Iterator[Rows]:
    """The reader of .ods (io/filetypes.py): the chosen sheet's rows, as io/workbooks.py reads an .xlsx."""
    columns, header, records, book = workbook_records(src, OdsBook.open)
    yield Rows("binary", columns, header, records, sheet_note(book, "OpenDocument spreadsheet") + book.notes,
               book.sheets, book.sheet, passages=True)


class OdsBook:
    """The sheets of an .ods, each read by streaming content.xml again (openpyxl's read-only surface)."""

    def __init__(self, open_content: Content, sheetnames: List[str]) -> None:
        self._open = open_content
        self.sheetnames = sheetnames

    @classmethod
    def open(cls, src: Source) -> "OdsBook":
        _check_archive(src)

        @contextmanager
        def content() -> Iterator[IO[bytes]]:
            with src.open() as raw, zipfile.ZipFile(raw) as archive, archive.open("content.xml") as stream:
                yield stream

        try:
            names = [e.get(_t("name")) or f"Sheet{i}" for i, e in enumerate(_tables(content), 1)]
        except SyntaxError as exc:  # ParseError: a broken content.xml
            raise Where(src.name).error(f"is a damaged OpenDocument spreadsheet ({exc}); {_SAVE_AS}") from None
        return cls(content, names)

    def __getitem__(self, name: str) -> "OdsSheet":
        return OdsSheet(self._open, name)

    def close(self) -> None:
        """Nothing stays open between reads: each sheet's stream is closed when its rows end."""


class OdsSheet:
    def __init__(self, open_content: Content, name: str) -> None:
        self._open = open_content
        self.name = name

    def reset_dimensions(self) -> None:
        """ODF has no stored dimensions to distrust (openpyxl's surface)."""

    def iter_rows(self, values_only: bool = True) -> Iterator[Tuple[Any, ...]]:
        with self._open() as stream:
            inside = False
            for event, elem in iterparse(stream, events=("start", "end")):
                if elem.tag == _t("table") and event == "start":
                    inside = elem.get(_t("name")) == self.name
                elif elem.tag == _t("table") and event == "end":
                    elem.clear()
                    if inside:
                        return
                elif event == "end" and elem.tag == _t("table-row"):
                    if inside:
                        yield from _row_repeats(elem)
                    elem.clear()


def _tables(content: Content) -> Iterator[Element]:
    with content() as stream:
        for event, elem in iterparse(stream, events=("start", "end")):
            if elem.tag == _t("table") and event == "start":
                yield elem
            elif event == "end" and elem.tag == _t("table-row"):
                elem.clear()  # only the names are wanted here: rows are freed at once


def _row_repeats(row: Element) -> Iterator[Tuple[Any, ...]]:
    cells = _cells(row)
    repeat = min(int(row.get(_t("number-rows-repeated"), "1") or 1), MAX_ROWS)
    yield cells
    if cells:  # a blank run is one blank row: row numbers past it only matter where data follows
        for _ in range(repeat - 1):
            yield cells
    else:
        for _ in range(min(repeat, 2) - 1):
            yield cells


def _cells(row: Element) -> Tuple[Any, ...]:
    values: List[Any] = []
    blanks = 0
    for cell in row:
        if cell.tag not in (_t("table-cell"), _t("covered-table-cell")):
            continue
        repeat = int(cell.get(_t("number-columns-repeated"), "1") or 1)
        value = _value(cell)
        if value is None:
            blanks += repeat
            continue
        width = min(len(values) + blanks + repeat, MAX_COLUMNS)
        values += [None] * blanks
        values += [value] * max(width - len(values), 0)
        blanks = 0
    return tuple(values)


def _value(cell: Element) -> Any:
    kind = cell.get(_t("value-type", _OFFICE))
    if kind in ("float", "percentage", "currency"):
        return float(cell.get(_t("value", _OFFICE)) or 0)
    if kind == "date":
        return cell.get(_t("date-value", _OFFICE))
    if kind == "boolean":
        return cell.get(_t("boolean-value", _OFFICE)) == "true"
    text = "\n".join(_text(p) for p in cell if p.tag == _t("p", _TEXT))
    return text or None


def _text(elem: Element) -> str:
    """A paragraph's text: spans and links inline, text:s as its spaces, text:tab and text:line-break kept."""
    parts = [elem.text or ""]
    for child in elem:
        if child.tag == _t("s", _TEXT):
            parts.append(" " * int(child.get(_t("c", _TEXT), "1") or 1))
        elif child.tag == _t("tab", _TEXT):
            parts.append("\t")
        elif child.tag == _t("line-break", _TEXT):
            parts.append("\n")
        else:
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _check_archive(src: Source) -> None:
    """Refuse what is not an .ods zip, and a zip whose declared sizes pass the decoded budget (a zip bomb)."""
    where = Where(src.name)
    with src.open() as f:
        head = f.read(4)
    if head != b"PK\x03\x04":
        raise where.error(f"is not an OpenDocument spreadsheet (an .ods file is a zip archive); {_SAVE_AS}")
    try:
        with src.open() as raw, zipfile.ZipFile(raw) as archive:
            declared = sum(i.file_size for i in archive.infolist())
            mimetype = archive.read("mimetype")[:100] if "mimetype" in archive.namelist() else b""
            has_content = "content.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise where.error(f"is a damaged OpenDocument spreadsheet (a broken zip: {exc}); {_SAVE_AS}") from None
    if not has_content or b"spreadsheet" not in mimetype:
        what = mimetype.decode("ascii", "replace") or "no mimetype"
        raise where.error(f"is a zip archive but not an OpenDocument spreadsheet ({what}); {_SAVE_AS}")
    if declared > src.max_decoded:
        raise DatasetError(f"unpacks to {mb(declared)}, more than the {mb(src.max_decoded)} a dataset may hold here; "
                           "it may be a zip bomb. Split the spreadsheet, or delete sheets and columns ragmeter "
                           "does not read", file=src.name)

