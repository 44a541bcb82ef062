"""Where dataset rows come from: a path or an upload, its format, and places for error messages.

`open_source` checks the extension and the size limit before anything is parsed, and gives a
`Source` whose `open()` returns a fresh binary stream each time (encoding detection reads the
file more than once). `Where` is the place of a row (file, physical line or 1-based item) that
every `DatasetError` names.
"""
from __future__ import annotations

import io
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Callable, ContextManager, Dict, Iterator, List, Optional, Tuple

from ..errors import DatasetError
from .decoded import DEFAULT_MAX_DECODED
from .filetypes import DATASET, file_type, formats_for
from .surfaces import LIBRARY, Surface

SAVED_DATASET = "saved"  # the format of a Hugging Face `save_to_disk` folder
# Files that `Dataset.save_to_disk` / `DatasetDict.save_to_disk` write beside their Arrow data.
_SAVED_MARKERS = ("state.json", "dataset_dict.json")
GISKARD_REPORT = "giskard_report"  # a Giskard RAGET report.save() folder, read by giskard_reports.py
GISKARD_MARKERS = ("testset.jsonl", "agent_answer.json")


@dataclass(frozen=True)
class Where:
    """The place of a row, for error messages: a physical line (CSV, JSONL) or a 1-based item (JSON)."""

    file: str
    line: Optional[int] = None
    item: Optional[int] = None

    def error(self, message: str, column: Optional[str] = None) -> DatasetError:
        return DatasetError(message, file=self.file, line=self.line, item=self.item, column=column)

    def label(self) -> str:
        return f"line {self.line}" if self.line is not None else f"item {self.item}"


# (where, raw row) pairs, as each reader yields them
Records = Iterator[Tuple[Where, Dict[str, Any]]]


@dataclass(frozen=True)
class Source:
    """An opened dataset: its name for messages, its format, and how to read its bytes again."""

    name: str
    format: str
    delimiter: str
    open: Callable[[], IO[bytes]]  # a fresh binary stream at offset 0
    folder: Optional[Path] = None  # a saved Hugging Face dataset: the folder, read by arrow_rows
    # The decoded bytes its cells may take (io.decoded): the byte limit when one is given, since a
    # compressed file must not hold more text than an uncompressed one may.
    max_decoded: int = DEFAULT_MAX_DECODED
    sheet: Optional[str] = None  # an Excel workbook's sheet to read (None: found, io/workbooks.py)
    max_rows: Optional[int] = None  # a reader that can count rows before reading them refuses more (workbooks)
    surface: Surface = LIBRARY  # whose words a refusal's advice uses


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
    # A spreadsheet's cells (CSV, .xlsx, .ods, tab text): passages in one contexts cell are separated by an
    # empty line, and split there (io/workbooks.py PassageSplit); JSON and Arrow cells hold lists instead.
    passages: bool = False


# What a format's registration names as its reader (io/filetypes.py `reader=`): a source in, its rows out,
# open while the caller reads them (a text file's stream, a workbook) and closed after.
Reader = Callable[[Source], ContextManager[Rows]]


def _check_size(size: int, max_bytes: Optional[int], name: str, surface: Surface) -> None:
    if max_bytes is not None and size > max_bytes:
        raise DatasetError(f"is {size:,} bytes, more than the limit of {max_bytes:,} bytes; "
                           f"{surface.limit_advice('bytes')}", file=name)


def open_source(source: Any, name: Optional[str], max_bytes: Optional[int], surface: Surface = LIBRARY,
                sheet: Optional[str] = None) -> Source:
    """A path or file-like object as a Source, after the extension and size checks (`sheet`: a workbook's)."""
    if isinstance(source, (str, os.PathLike)):
        return replace(_open_path(Path(source), name or str(source), max_bytes, surface),
                       max_decoded=max_bytes or DEFAULT_MAX_DECODED, sheet=sheet, surface=surface)
    name = name or getattr(source, "name", None)
    if not name:
        raise DatasetError("cannot tell the file type of an object without a name; pass "
                           f"name='data.csv' (the extension decides the format: {', '.join(formats_for(DATASET))})")
    kind = file_type(name, DATASET)
    data = _read_upload(source, str(name), max_bytes, surface)
    return Source(str(name), kind.format, kind.delimiter, lambda: io.BytesIO(data),
                  max_decoded=max_bytes or DEFAULT_MAX_DECODED, sheet=sheet, surface=surface)


def _open_path(path: Path, name: str, max_bytes: Optional[int], surface: Surface) -> Source:
    if path.is_dir() and any((path / marker).is_file() for marker in _SAVED_MARKERS):
        _check_size(sum(p.stat().st_size for p in path.rglob("*.arrow")), max_bytes, name, surface)
        return Source(name, SAVED_DATASET, "", lambda: io.BytesIO(b""), folder=path)
    if path.is_dir() and all((path / marker).is_file() for marker in GISKARD_MARKERS):
        _check_size(sum(p.stat().st_size for p in path.glob("*.json*")), max_bytes, name, surface)
        return Source(name, GISKARD_REPORT, "", lambda: io.BytesIO(b""), folder=path)
    if path.is_dir():
        raise DatasetError(_unknown_folder(path), file=name)
    kind = file_type(name, DATASET)
    try:
        if not path.is_file():
            raise DatasetError("does not exist; check the path", file=name)
        _check_size(path.stat().st_size, max_bytes, name, surface)
    except OSError as exc:
        raise DatasetError(f"cannot be read ({exc.strerror or exc}); check the path and permissions",
                           file=name) from None
    return Source(name, kind.format, kind.delimiter, lambda: path.open("rb"))


def _unknown_folder(path: Path) -> str:
    """What a folder that is no known report is, and what to pass instead (one of its readable files)."""
    readable = set(formats_for(DATASET))
    files = sorted(p.name for p in path.iterdir() if p.is_file() and p.suffix.lower() in readable)
    known = ("ragmeter reads a folder only when it is a Hugging Face save_to_disk folder (state.json or "
             "dataset_dict.json) or a Giskard RAGET report.save() folder (testset.jsonl and agent_answer.json)")
    if not files:
        return f"is a folder holding no file ragmeter reads; {known}: pass a dataset file instead"
    shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
    return f"is a folder, not a report ragmeter knows ({known}); pass one of its files: {shown}"


def _read_upload(source: Any, name: str, max_bytes: Optional[int], surface: Surface) -> bytes:
    """The bytes of a file-like object (a Streamlit UploadedFile, BytesIO, an open file)."""
    size = getattr(source, "size", None)
    if isinstance(size, int):
        _check_size(size, max_bytes, name, surface)  # before reading anything
    if hasattr(source, "getvalue"):
        data = source.getvalue()
    else:
        data = source.read(-1 if max_bytes is None else max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DatasetError("is not a readable file (its read() gave no bytes)", file=name)
    _check_size(len(data), max_bytes, name, surface)
    return bytes(data)


def folder_json(path: Path, name: str, kind: type, save_again: str) -> Any:
    """A JSON file inside a saved folder (a dataset's state, a report's answers), of type `kind`; DatasetError
    naming the file and `save_again` (how to write the folder anew) when it cannot be read as one."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"has an unreadable {path.name} ({exc}); {save_again}", file=name) from None
    if not isinstance(value, kind):
        raise DatasetError(f"has a {path.name} that is not a JSON {kind.__name__}; {save_again}", file=name)
    return value
