"""Read evaluation datasets (CSV, JSON Lines, JSON) into `EvalSample` lists.

Formats, chosen by the file name's extension:
    .csv (.tsv)       a header line, then one sample per row. A header without commas but with
                      semicolons or tabs is read with that delimiter (European Excel exports).
    .jsonl (.ndjson)  one JSON object per line; blank lines are skipped.
    .json             a list of objects, or an object holding that list under "samples" or "data".

Column names (matched case-insensitively, surrounding spaces ignored; first alias found wins):
    question                  question | user_input (ragas) | input (deepeval) | query
    answer                    answer | response (ragas) | actual_output (deepeval)
    contexts                  contexts | retrieved_contexts (ragas) | retrieval_context (deepeval) | context
    ground_truth              ground_truth | reference (ragas) | expected_output (deepeval)
    sample_id                 sample_id | id
    expected_answer_keywords  expected_answer_keywords | keywords
    expected_docs             expected_docs
    category                  category
`mapping={field: column}` overrides detection; a field mapped to None or "" is not read.
`question` and `answer` are required (an empty answer is allowed: faithfulness is then skipped);
a missing `contexts` column means no contexts.

Cell values:
  - contexts: a JSON array of strings (the canonical form), a Python-style list ['a', 'b'] (what
    pandas writes), or one plain string = one context. A context may also be an object
    {"title", "text"}, {"page_content"} (LangChain) or {"content"}; it becomes "title: text".
    A cell that parses as a JSON array is a list; one that starts like a list ("[" then a quote,
    "{" or "]") must parse as one; anything else, like "[1] Refund policy: ...", is plain text,
    except a bare number or a JSON object, which are errors (likely the wrong column).
  - expected_answer_keywords, expected_docs: as above, or "a; b; c", or "a|b".
  - ground_truth, category: blank means none. sample_id: blank gives "row-<n>" (n = 1-based data
    row); ids must be unique.
  - human_<metric> columns (e.g. human_faithfulness): human labels, 0/1, 0–1 or 1–5, stored as
    floats in sample.metadata["human_labels"][<metric>]; blank cells are unlabelled.
  - any other column: kept in sample.metadata as a string (JSON values are serialised).

Encodings: UTF-8 with or without BOM, UTF-16/UTF-32 with BOM. A file that is not valid UTF-8 is
read as Windows-1252 (what Excel writes on Western Windows; Latin-1 for the five bytes cp1252
leaves undefined), with a logged warning and `DatasetPreview.encoding` saying so: text saved in
another code page (e.g. Arabic Windows-1256) will then look garbled, and the fix is to save as
UTF-8. NUL bytes without a BOM (a binary file, or UTF-16 without BOM) and zip/xlsx files are refused.

Every problem raises `DatasetError` naming the file, the place (CSV: physical line, header = line
1; JSONL: line; JSON: item N, 1-based), the column, and what to do. Limits (`max_bytes`,
`max_rows`) are checked before parsing where the size is known, and reading stops at the first
row over the limit.
"""
from __future__ import annotations

import ast
import codecs
import csv
import io
import itertools
import json
import logging
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple

from ..errors import DatasetError
from ..model import EvalSample

log = logging.getLogger("ragmeter")

FIELDS: Tuple[str, ...] = (
    "question",
    "answer",
    "contexts",
    "ground_truth",
    "sample_id",
    "expected_answer_keywords",
    "expected_docs",
    "category",
)
REQUIRED: Tuple[str, ...] = ("question", "answer")
ALIASES: Dict[str, Tuple[str, ...]] = {
    "question": ("question", "user_input", "input", "query"),
    "answer": ("answer", "response", "actual_output"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context"),
    "ground_truth": ("ground_truth", "reference", "expected_output"),
    "sample_id": ("sample_id", "id"),
    "expected_answer_keywords": ("expected_answer_keywords", "keywords"),
    "expected_docs": ("expected_docs",),
    "category": ("category",),
}
HUMAN_PREFIX = "human_"
FORMATS: Dict[str, str] = {".csv": "csv", ".tsv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json"}
ACCEPTED = ".csv, .jsonl or .json"

_CHUNK = 1 << 20
# Python's csv refuses cells over 128 KiB by default; real contexts (whole pages) can be larger.
# 2**31-1 is the largest value every platform's C long accepts.
_FIELD_LIMIT = 2**31 - 1
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),  # before UTF-16 LE: its BOM starts the same way
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# "[" followed by a quote, "{", "]" or the end: meant as a list, so it must parse as one.
_LISTISH = re.compile(r"\[\s*(?:[\"'{\]]|$)")
_CONTEXT_TEXT_KEYS = ("text", "page_content", "content")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


@dataclass
class DatasetPreview:
    """What the dashboard shows before loading: the raw first rows and how columns would be read."""

    name: str
    format: str  # "csv", "jsonl" or "json"
    encoding: str
    columns: List[str]
    rows: List[Dict[str, Any]]  # the first rows as read, before any conversion
    mapping: Dict[str, str]  # field -> column, as detected
    row_count: int
    label_columns: List[str] = field(default_factory=list)  # human_<metric> columns
    missing: List[str] = field(default_factory=list)  # required fields with no column


# --- where we are, for error messages ---------------------------------------------------------

@dataclass(frozen=True)
class _Where:
    file: str
    line: Optional[int] = None
    item: Optional[int] = None

    def error(self, message: str, column: Optional[str] = None) -> DatasetError:
        return DatasetError(message, file=self.file, line=self.line, item=self.item, column=column)

    def label(self) -> str:
        return f"line {self.line}" if self.line is not None else f"item {self.item}"


# --- opening the source -----------------------------------------------------------------------

@dataclass(frozen=True)
class _Source:
    name: str
    format: str
    delimiter: str
    open: Callable[[], IO[bytes]]  # a fresh binary stream at offset 0


def _format_of(name: str) -> Tuple[str, str]:
    suffix = Path(name).suffix.lower()
    if suffix not in FORMATS:
        raise DatasetError(f"unknown file type '{suffix or '(none)'}'; ragmeter reads {ACCEPTED} files "
                           "(rename the file or export it in one of these formats)", file=name)
    return FORMATS[suffix], "\t" if suffix == ".tsv" else ","


def _check_size(size: int, max_bytes: Optional[int], name: str) -> None:
    if max_bytes is not None and size > max_bytes:
        raise DatasetError(f"is {size:,} bytes, more than the limit of {max_bytes:,} bytes; raise the "
                           "limit (max_bytes=..., or the dashboard's upload size setting) or split the file",
                           file=name)


def _open_source(source: Any, name: Optional[str], max_bytes: Optional[int]) -> _Source:
    if isinstance(source, (str, os.PathLike)):
        return _open_path(Path(source), name or str(source), max_bytes)
    name = name or getattr(source, "name", None)
    if not name:
        raise DatasetError("cannot tell the file type of an object without a name; pass "
                           f"name='data.csv' (the extension decides the format: {ACCEPTED})")
    fmt, delimiter = _format_of(str(name))
    data = _read_upload(source, str(name), max_bytes)
    return _Source(str(name), fmt, delimiter, lambda: io.BytesIO(data))


def _open_path(path: Path, name: str, max_bytes: Optional[int]) -> _Source:
    fmt, delimiter = _format_of(name)
    try:
        if not path.is_file():
            what = "is a folder, not a file" if path.is_dir() else "does not exist"
            raise DatasetError(f"{what}; check the path", file=name)
        _check_size(path.stat().st_size, max_bytes, name)
    except OSError as exc:
        raise DatasetError(f"cannot be read ({exc.strerror or exc}); check the path and permissions",
                           file=name) from None
    return _Source(name, fmt, delimiter, lambda: path.open("rb"))


def _read_upload(source: Any, name: str, max_bytes: Optional[int]) -> bytes:
    """The bytes of a file-like object (a Streamlit UploadedFile, BytesIO, an open file)."""
    size = getattr(source, "size", None)
    if isinstance(size, int):
        _check_size(size, max_bytes, name)  # before reading anything
    if hasattr(source, "getvalue"):
        data = source.getvalue()
    else:
        data = source.read(-1 if max_bytes is None else max_bytes + 1)
    if isinstance(data, str):
        data = data.encode("utf-8")
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise DatasetError("is not a readable file (its read() gave no bytes)", file=name)
    _check_size(len(data), max_bytes, name)
    return bytes(data)


# --- encodings ---------------------------------------------------------------------------------

def _decodes(src: _Source, encoding: str) -> bool:
    """Whether the whole stream decodes, checked in chunks so nothing is held in memory."""
    decoder = codecs.getincrementaldecoder(encoding)()
    try:
        with src.open() as f:
            while chunk := f.read(_CHUNK):
                decoder.decode(chunk)
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True


def _choose_encoding(src: _Source) -> str:
    with src.open() as f:
        head = f.read(65536)
    where = _Where(src.name)
    marked = [encoding for bom, encoding in _BOMS if head.startswith(bom)]
    for encoding in marked:  # UTF-16 LE text starting with U+0000 carries the UTF-32 LE mark too
        if _decodes(src, encoding):
            return encoding
    if marked:
        label = marked[-1].replace("-sig", "").upper()
        raise where.error(f"starts with a {label} byte-order mark but is not valid {label}; "
                          "save it again as UTF-8")
    if head.startswith(b"PK\x03\x04"):
        raise where.error("is a zip archive or an Excel workbook, not a text file; in Excel use "
                          "File > Save As > 'CSV UTF-8', or export JSON Lines")
    if b"\x00" in head:
        raise where.error("contains NUL bytes: it is a binary file, or UTF-16 without a byte-order "
                          "mark; save it as UTF-8 text")
    if _decodes(src, "utf-8"):
        return "utf-8"
    encoding = "cp1252" if _decodes(src, "cp1252") else "latin-1"
    log.warning("%s is not valid UTF-8; read as %s. If the text looks garbled, save the file as UTF-8.",
                src.name, encoding)
    return encoding


def _text_stream(src: _Source, encoding: str) -> IO[str]:
    # newline="" keeps line ends as written: csv needs that for quoted line breaks, and line
    # numbers then count the physical lines an editor shows.
    return io.TextIOWrapper(src.open(), encoding=encoding, newline="")


# --- raw records: (where, row dict) from each format --------------------------------------------

Records = Iterator[Tuple[_Where, Dict[str, Any]]]


def _delimiter(header_line: str, default: str) -> str:
    if default == "," and "," not in header_line:
        for candidate in (";", "\t"):
            if candidate in header_line:
                return candidate
    return default


def _csv_header(cells: List[str], where: _Where) -> List[str]:
    """Header names, trimmed; blank names become column_<n>; duplicates are an error."""
    columns = [c.strip() or f"column_{i}" for i, c in enumerate(cells, 1)]
    _check_duplicates(columns, where)
    return columns


def _check_duplicates(columns: Iterable[str], where: _Where) -> None:
    seen: Dict[str, str] = {}
    for col in columns:
        key = _norm(col)
        if key in seen:
            raise where.error(f"the column '{col}' appears twice (also as '{seen[key]}'); "
                              "rename or delete one of them", column=col)
        seen[key] = col


def _csv_records(text: IO[str], src: _Source) -> Tuple[List[str], _Where, Records]:
    """The header's columns, where the header is, and the data rows."""
    csv.field_size_limit(_FIELD_LIMIT)  # process-wide, but only ever raised, so harmless to others
    first, skipped = text.readline(), 0
    while first and not first.strip():  # blank lines before the header still count as lines
        first, skipped = text.readline(), skipped + 1
    # strict: an unterminated quote is an error with its line, not a cell that swallows the rest of the file
    reader = csv.reader(itertools.chain([first], text), delimiter=_delimiter(first, src.delimiter), strict=True)
    header = _next_row(reader, _Where(src.name, skipped + 1))
    if not header or not any(c.strip() for c in header):
        raise _Where(src.name).error("is empty: no header and no rows; a CSV needs a header line "
                                     "(question,answer,contexts,...) and one line per sample")
    header_where = _Where(src.name, skipped + 1)
    columns = _csv_header(header, header_where)
    return columns, header_where, _csv_rows(reader, columns, src.name, skipped)


def _next_row(reader: Any, where: _Where) -> Optional[List[str]]:
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
        cells = _next_row(reader, _Where(name, start))
        if cells is None:
            return
        if not any(c.strip() for c in cells):
            continue
        if len(cells) > width:
            raise _Where(name, start).error(
                f"has {len(cells)} cells but the header has {width} columns; put double quotes around "
                'cells that contain the delimiter ("like, this") or add the missing header')
        if len(cells) < width:  # trailing empty cells left out, as some exporters do
            cells += [""] * (width - len(cells))
        yield _Where(name, start), dict(zip(columns, cells))


def _jsonl_records(text: IO[str], src: _Source) -> Records:
    for lineno, raw in enumerate(text, 1):
        if not raw.strip():
            continue
        where = _Where(src.name, lineno)
        obj = _parse_json(raw, where, "each line of a .jsonl file must be one complete JSON object")
        if not isinstance(obj, dict):
            hint = " If the file is one JSON list, rename it to .json." if isinstance(obj, list) else ""
            raise where.error(f"is a JSON {_json_type(obj)}, not an object; write one object per line, "
                              f'like {{"question": "...", "answer": "...", "contexts": ["..."]}}.{hint}')
        yield where, obj


def _json_records(text: IO[str], src: _Source) -> Records:
    where = _Where(src.name)
    raw = text.read()
    if not raw.strip():
        return  # an empty file has no rows, which the caller reports
    data = _parse_json(raw, where, "fix the syntax (a JSON validator shows the spot); if the "
                                   "file holds one object per line, rename it to .jsonl")
    del raw  # the text is not needed once parsed: 100,000 rows should not be held twice
    items = data
    if isinstance(data, dict):
        items = data.get("samples", data.get("data"))
    if not isinstance(items, list):
        raise where.error('must hold a list of objects, or an object with a "samples" (or "data") list; '
                          f"found a JSON {_json_type(data)}")
    del data
    for index, obj in enumerate(items):
        here = _Where(src.name, item=index + 1)
        if not isinstance(obj, dict):
            raise here.error(f"is a JSON {_json_type(obj)}, not an object with question/answer fields")
        items[index] = None  # let each parsed object go once it has become a sample
        yield here, obj


def _parse_json(text: str, where: _Where, advice: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = exc.lineno if where.line is None else where.line
        raise DatasetError(f"is not valid JSON ({exc.msg} at column {exc.colno}); {advice}",
                           file=where.file, line=line) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python converts
        raise where.error(f"is not valid JSON ({exc}); {advice}") from None
    except RecursionError:
        raise where.error("nests JSON too deeply to read; flatten the data") from None


def _json_type(value: Any) -> str:
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


# --- columns -> fields --------------------------------------------------------------------------

def _norm(column: str) -> str:
    """How column names are compared: trimmed and case-folded ("µ" and "Μ" are the same letter)."""
    return column.strip().casefold()


def _is_label(column: str) -> bool:
    key = _norm(column)
    return key.startswith(HUMAN_PREFIX) and len(key) > len(HUMAN_PREFIX)


def detect_mapping(columns: Iterable[str]) -> Dict[str, str]:
    """EvalSample field -> column name, from the known aliases (case-insensitive, spaces trimmed)."""
    by_key: Dict[str, str] = {}
    for col in columns:
        by_key.setdefault(_norm(str(col)), col)
    mapping = {}
    for name, aliases in ALIASES.items():
        found = next((by_key[a] for a in aliases if a in by_key), None)
        if found is not None:
            mapping[name] = found
    return mapping


@dataclass(frozen=True)
class _Plan:
    """Which key of a row feeds which field; computed once per distinct set of keys."""

    fields: Dict[str, str]
    labels: Tuple[Tuple[str, str], ...]  # (metric, column) for human_<metric> columns
    extra: Tuple[str, ...]  # columns kept as metadata


def _check_mapping(mapping: Optional[Dict[str, Optional[str]]]) -> Dict[str, Optional[str]]:
    mapping = dict(mapping or {})
    unknown = [f for f in mapping if f not in FIELDS]
    if unknown:
        raise DatasetError(f"the mapping names unknown field(s) {', '.join(map(repr, unknown))}; "
                           f"the fields are {', '.join(FIELDS)}")
    return mapping


def _apply_mapping(columns: List[str], mapping: Dict[str, Optional[str]], where: _Where,
                   strict: bool) -> Dict[str, str]:
    fields = detect_mapping(columns)
    by_key = {_norm(c): c for c in columns}
    for name, wanted in mapping.items():
        column = by_key.get(_norm(str(wanted or "")))
        if wanted and column is None and strict:
            raise where.error(f"the mapping reads {name} from column '{wanted}', which is not in the file; "
                              f"columns found: {', '.join(columns) or '(none)'}")
        fields.pop(name, None)
        if column is not None:
            fields[name] = column
    _check_one_use(fields, where)
    return fields


def _check_one_use(fields: Dict[str, str], where: _Where) -> None:
    used: Dict[str, str] = {}
    for name, column in fields.items():
        if column in used:
            raise where.error(f"the column '{column}' is mapped to both {used[column]} and {name}; "
                              "map each field to its own column", column=column)
        used[column] = name


def _require(fields: Dict[str, str], columns: List[str], where: _Where) -> None:
    for name in REQUIRED:
        if name not in fields:
            raise where.error(
                f"no {name} column. Columns found: {', '.join(columns) or '(none)'}. Accepted names: "
                f"{', '.join(ALIASES[name])}. Rename the column or pass mapping={{'{name}': '<your column>'}}")


def _make_plan(columns: List[str], mapping: Dict[str, Optional[str]], where: _Where, strict: bool) -> _Plan:
    _check_duplicates(columns, where)
    fields = _apply_mapping(columns, mapping, where, strict)
    _require(fields, columns, where)
    used = set(fields.values())
    rest = [c for c in columns if c not in used]
    labels = tuple((_norm(c)[len(HUMAN_PREFIX):], c) for c in rest if _is_label(c))
    label_cols = {c for _, c in labels}
    return _Plan(fields, labels, tuple(c for c in rest if c not in label_cols))


class _Planner:
    """Plans for rows: one fixed plan for a CSV header, one per distinct key set for JSON objects."""

    def __init__(self, mapping: Dict[str, Optional[str]]) -> None:
        self.mapping = mapping
        self._fixed: Optional[_Plan] = None
        self._cache: Dict[Tuple[str, ...], _Plan] = {}
        self._columns: Dict[str, str] = {}  # every key seen in JSON objects, by _norm

    def fix(self, columns: List[str], where: _Where) -> None:
        """Use one plan for every row (a CSV header), checked now, before any row is read."""
        self._fixed = _make_plan(columns, self.mapping, where, strict=True)

    def plan(self, row: Dict[str, Any], where: _Where) -> _Plan:
        if self._fixed is not None:
            return self._fixed
        keys = tuple(row)
        plan = self._cache.get(keys)
        if plan is None:
            if len(self._cache) > 64:  # rows with ever-different keys must not grow memory
                self._cache.clear()
            # Objects may omit optional keys, so a mapped column is only checked at the end (finish).
            plan = _make_plan([str(k) for k in keys], self.mapping, where, strict=False)
            self._columns.update((_norm(str(k)), str(k)) for k in keys)
            self._cache[keys] = plan
        return plan

    def finish(self, name: str) -> None:
        """Every mapped column must have appeared in at least one JSON object."""
        if self._fixed is not None:
            return
        for field_name, wanted in self.mapping.items():
            if wanted and _norm(str(wanted)) not in self._columns:
                raise DatasetError(f"the mapping reads {field_name} from column '{wanted}', which no row has; "
                                   f"columns found: {', '.join(self._columns.values()) or '(none)'}", file=name)


# --- values -> sample fields --------------------------------------------------------------------

def _text(value: Any, where: _Where, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"must be text, not a JSON {_json_type(value)}; write the value as a string",
                      column=column)


def _list_cell(value: str, where: _Where, column: str) -> Optional[List[Any]]:
    """A list written inside a cell: JSON array, or the Python repr pandas writes; None if plain text."""
    if not value.startswith("["):
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, RecursionError):
        parsed = None
    if isinstance(parsed, list):
        return parsed
    if not _LISTISH.match(value):  # "[1] Refund policy: ..." is text that happens to start with "["
        return None
    parsed = _python_list(value)
    if not isinstance(parsed, list):
        raise where.error('looks like a list but is not valid JSON; write it as a JSON array with double '
                          'quotes, e.g. ["first text", "second text"], or as plain text without brackets',
                          column=column)
    return parsed


def _python_list(value: str) -> Any:
    try:
        return ast.literal_eval(value)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _context_item(item: Any, where: _Where, column: str) -> str:
    if isinstance(item, str):
        return item.strip()
    if isinstance(item, dict):
        return _context_from_dict(item, where, column)
    raise where.error(f"each context must be text or an object with a 'text' field, not a JSON "
                      f"{_json_type(item)}", column=column)


def _context_from_dict(item: Dict[str, Any], where: _Where, column: str) -> str:
    text = next((item[k] for k in _CONTEXT_TEXT_KEYS if k in item), None)
    meta = item.get("metadata")
    title = item.get("title") or (meta.get("title") if isinstance(meta, dict) else None)
    if not isinstance(text, str) or not isinstance(title, (str, type(None))):
        raise where.error("a context object needs a text field ('text', 'page_content' or 'content') "
                          "and an optional 'title', all strings", column=column)
    text = text.strip()
    return f"{title.strip()}: {text}" if title and title.strip() else text


def _misplaced(text: str) -> Any:
    """A cell holding a bare number or a JSON object, which a contexts column cannot be; else the text."""
    if _NUMBER.fullmatch(text):
        return float(text)
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except (ValueError, RecursionError):
            return text
        return parsed if isinstance(parsed, dict) else text
    return text


def _contexts(value: Any, where: _Where, column: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = value.strip()
        parsed = _list_cell(value, where, column)
        if parsed is None:
            value = _misplaced(value)
            if isinstance(value, str):
                return [value] if value else []
        else:
            value = parsed
    if not isinstance(value, list):
        raise where.error(f"contexts must be a list of texts (a JSON array) or one text, not a JSON "
                          f"{_json_type(value)}", column=column)
    items = (_context_item(item, where, column) for item in value)
    return [c for c in items if c]


def _terms(value: Any, where: _Where, column: str) -> Optional[List[str]]:
    """Keywords or document titles: a list, or one string split on ';' or '|'."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        parsed = _list_cell(value, where, column)
        if parsed is None:
            sep = ";" if ";" in value else "|"
            parsed = value.split(sep)
        value = parsed
    if not isinstance(value, list):
        raise where.error(f"must be a list of texts, or one text like 'a; b; c', not a JSON "
                          f"{_json_type(value)}", column=column)
    terms = [_text(v, where, column) for v in value]
    return [t for t in terms if t] or None


def _label(value: Any, where: _Where, column: str) -> Optional[float]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not 0.0 <= number <= 5.0:  # also refuses NaN
        raise where.error(f"a human label must be a number: 0/1, 0–1 or 1–5 (blank when unlabelled), "
                          f"not {str(value)[:40]!r}", column=column)
    return number


def _meta_value(value: Any, where: _Where, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    try:
        return json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError):
        raise where.error("nests JSON too deeply to keep; flatten this value", column=column) from None


def _metadata(row: Dict[str, Any], plan: _Plan, where: _Where) -> Dict[str, Any]:
    meta: Dict[str, Any] = {}
    for column in plan.extra:
        value = _meta_value(row.get(column), where, column)
        if value:
            meta[column] = value
    labels = {}
    for metric, column in plan.labels:
        label = _label(row.get(column), where, column)
        if label is not None:
            labels[metric] = label
    if labels:
        meta["human_labels"] = labels
    return meta


def _build(row: Dict[str, Any], plan: _Plan, where: _Where, number: int) -> EvalSample:
    cols = plan.fields

    def text(name: str) -> str:
        return _text(row.get(cols[name]), where, cols[name]) if name in cols else ""

    def terms(name: str) -> Optional[List[str]]:
        return _terms(row.get(cols[name]), where, cols[name]) if name in cols else None

    question = text("question")
    if not question:
        raise where.error("the question is empty; fill it in or delete the row", column=cols["question"])
    contexts = _contexts(row.get(cols["contexts"]), where, cols["contexts"]) if "contexts" in cols else []
    return EvalSample(
        question=question,
        answer=text("answer"),
        contexts=contexts,
        ground_truth=text("ground_truth") or None,
        sample_id=text("sample_id") or f"row-{number}",
        expected_answer_keywords=terms("expected_answer_keywords"),
        expected_docs=terms("expected_docs"),
        category=text("category") or None,
        metadata=_metadata(row, plan, where),
    )


# --- public entry points ------------------------------------------------------------------------

def _records(text: IO[str], src: _Source, planner: Optional[_Planner]) -> Tuple[List[str], Records]:
    """Column names (CSV; [] for JSON, whose objects each carry theirs) and the row records."""
    if src.format == "csv":
        columns, header, records = _csv_records(text, src)
        if planner is not None:
            planner.fix(columns, header)
        return columns, records
    reader = _jsonl_records if src.format == "jsonl" else _json_records
    return [], reader(text, src)


def _too_many(max_rows: int, name: str) -> DatasetError:
    return DatasetError(f"has more than {max_rows:,} rows; raise the limit (max_rows=..., or the "
                        "dashboard's row limit setting) or split the file", file=name)


def _no_rows(name: str) -> DatasetError:
    return DatasetError("has no rows (it is empty or holds only a header); add one row per sample "
                        "with at least question and answer", file=name)


def load_dataset(source: Any, mapping: Optional[Dict[str, Optional[str]]] = None, *,
                 max_rows: Optional[int] = None, max_bytes: Optional[int] = None,
                 name: Optional[str] = None) -> List[EvalSample]:
    """Read a .csv, .jsonl or .json dataset (a path, or a file-like object with `.name`).

    `mapping` maps EvalSample fields to column names and overrides detection. `max_rows` and
    `max_bytes` refuse bigger files with a clear DatasetError. `name` replaces the file name in
    messages (and decides the format for objects without `.name`). See the module docstring for
    accepted columns, cell forms and encodings.
    """
    planner = _Planner(_check_mapping(mapping))
    src = _open_source(source, name, max_bytes)
    try:
        with _text_stream(src, _choose_encoding(src)) as text:
            return _load(text, src, planner, max_rows)
    except (UnicodeError, csv.Error, RecursionError) as exc:  # backstop: the readers convert these first
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8 "
                           f"{ACCEPTED[1:]}", file=src.name) from None


def _load(text: IO[str], src: _Source, planner: _Planner, max_rows: Optional[int]) -> List[EvalSample]:
    samples: List[EvalSample] = []
    seen: Dict[str, _Where] = {}
    _, records = _records(text, src, planner)
    for where, row in records:
        if max_rows is not None and len(samples) >= max_rows:
            raise _too_many(max_rows, src.name)
        plan = planner.plan(row, where)
        sample = _build(row, plan, where, len(samples) + 1)
        _check_unique(sample, seen, where, plan)
        samples.append(sample)
    if not samples:
        raise _no_rows(src.name)
    planner.finish(src.name)
    return samples


def _check_unique(sample: EvalSample, seen: Dict[str, _Where], where: _Where, plan: _Plan) -> None:
    first = seen.get(str(sample.sample_id))
    if first is None:
        seen[str(sample.sample_id)] = where
    else:
        raise where.error(f"sample_id '{sample.sample_id}' is used twice: on {first.label()} and on "
                          f"{where.label()}; make the ids unique, or leave the column blank to number "
                          "rows automatically", column=plan.fields.get("sample_id"))


def inspect_dataset(source: Any, *, preview_rows: int = 5, max_bytes: Optional[int] = None,
                    name: Optional[str] = None) -> DatasetPreview:
    """Look at a dataset without converting it: format, columns, first raw rows, detected mapping.

    Raises DatasetError only when the file cannot be read at all (type, size, encoding, syntax);
    a missing question or answer column is reported in `missing`, so a UI can ask for a mapping.
    """
    src = _open_source(source, name, max_bytes)
    encoding = _choose_encoding(src)
    try:
        with _text_stream(src, encoding) as text:
            columns, rows, count = _scan(text, src, preview_rows)
    except (UnicodeError, csv.Error, RecursionError) as exc:
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8",
                           file=src.name) from None
    mapping = detect_mapping(columns)
    return DatasetPreview(
        name=src.name, format=src.format, encoding=encoding, columns=columns, rows=rows,
        mapping=mapping, row_count=count,
        label_columns=[c for c in columns if _is_label(c)],
        missing=[f for f in REQUIRED if f not in mapping],
    )


def _scan(text: IO[str], src: _Source, preview_rows: int) -> Tuple[List[str], List[Dict[str, Any]], int]:
    columns, records = _records(text, src, None)
    seen = dict.fromkeys(columns)
    rows: List[Dict[str, Any]] = []
    count = 0
    for _, row in records:
        count += 1
        if len(rows) < preview_rows:
            rows.append(row)
        if not columns:  # JSON: the union of keys, in first-seen order
            seen.update(dict.fromkeys(str(k) for k in row))
    return list(seen), rows, count


def samples_from_rows(rows: Iterable[Tuple[Optional[int], Dict[str, Any]]],
                      mapping: Optional[Dict[str, Optional[str]]] = None, *,
                      name: str = "data frame") -> List[EvalSample]:
    """Samples from rows another reader already split into cells (a data frame, a Parquet batch).

    `rows` are (number, row) pairs: `number` is the row's 1-based position in the whole dataset,
    used in messages and for the default "row-<n>" id, or None when the reader does not know it
    (a partition of a distributed dataset); a row without an id then gets sample_id None. Columns
    and cells follow the same rules as `load_dataset`, so the same rows give the same samples.
    """
    planner = _Planner(_check_mapping(mapping))
    samples = []
    for number, row in rows:
        where = _Where(name, item=number)
        plan = planner.plan(row, where)
        sample = _build(row, plan, where, number or 0)
        id_column = plan.fields.get("sample_id")
        if number is None and not _text(row.get(id_column) if id_column else None, where, str(id_column)):
            sample.sample_id = None
        samples.append(sample)
    if samples:
        planner.finish(name)
    return samples
