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

import csv
from dataclasses import dataclass, field
from typing import IO, Any, Dict, List, Optional, Tuple

from ..errors import DatasetError
from ..model import EvalSample
from .cells import contexts_cell, label_cell, meta_cell, terms_cell, text_cell
from .csv_rows import csv_records
from .dialects import ALIASES, FIELDS, HUMAN_PREFIX, REQUIRED, detect_mapping, is_label
from .encodings import choose_encoding, text_stream
from .json_rows import json_records, jsonl_records
from .plans import Plan, Planner, check_mapping
from .sources import ACCEPTED, FORMATS, Records, Source, Where, open_source

__all__ = ["ALIASES", "FIELDS", "FORMATS", "HUMAN_PREFIX", "REQUIRED", "DatasetPreview", "detect_mapping",
           "inspect_dataset", "load_dataset"]


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


def _metadata(row: Dict[str, Any], plan: Plan, where: Where) -> Dict[str, Any]:
    meta: Dict[str, Any] = {}
    for column in plan.extra:
        value = meta_cell(row.get(column), where, column)
        if value:
            meta[column] = value
    labels = {}
    for metric, column in plan.labels:
        label = label_cell(row.get(column), where, column)
        if label is not None:
            labels[metric] = label
    if labels:
        meta["human_labels"] = labels
    return meta


def _build(row: Dict[str, Any], plan: Plan, where: Where, number: int) -> EvalSample:
    cols = plan.fields

    def text(name: str) -> str:
        return text_cell(row.get(cols[name]), where, cols[name]) if name in cols else ""

    def terms(name: str) -> Optional[List[str]]:
        return terms_cell(row.get(cols[name]), where, cols[name]) if name in cols else None

    question = text("question")
    if not question:
        raise where.error("the question is empty; fill it in or delete the row", column=cols["question"])
    contexts = contexts_cell(row.get(cols["contexts"]), where, cols["contexts"]) if "contexts" in cols else []
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


def _records(text: IO[str], src: Source, planner: Optional[Planner]) -> Tuple[List[str], Records]:
    """Column names (CSV; [] for JSON, whose objects each carry theirs) and the row records."""
    if src.format == "csv":
        columns, header, records = csv_records(text, src)
        if planner is not None:
            planner.fix(columns, header)
        return columns, records
    reader = jsonl_records if src.format == "jsonl" else json_records
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
    planner = Planner(check_mapping(mapping))
    src = open_source(source, name, max_bytes)
    try:
        with text_stream(src, choose_encoding(src)) as text:
            return _load(text, src, planner, max_rows)
    except (UnicodeError, csv.Error, RecursionError) as exc:  # backstop: the readers convert these first
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8 "
                           f"{ACCEPTED[1:]}", file=src.name) from None


def _load(text: IO[str], src: Source, planner: Planner, max_rows: Optional[int]) -> List[EvalSample]:
    samples: List[EvalSample] = []
    seen: Dict[str, Where] = {}
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


def _check_unique(sample: EvalSample, seen: Dict[str, Where], where: Where, plan: Plan) -> None:
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
    src = open_source(source, name, max_bytes)
    encoding = choose_encoding(src)
    try:
        with text_stream(src, encoding) as text:
            columns, rows, count = _scan(text, src, preview_rows)
    except (UnicodeError, csv.Error, RecursionError) as exc:
        raise DatasetError(f"cannot be read ({type(exc).__name__}: {exc}); save it as UTF-8",
                           file=src.name) from None
    mapping = detect_mapping(columns)
    return DatasetPreview(
        name=src.name, format=src.format, encoding=encoding, columns=columns, rows=rows,
        mapping=mapping, row_count=count,
        label_columns=[c for c in columns if is_label(c)],
        missing=[f for f in REQUIRED if f not in mapping],
    )


def _scan(text: IO[str], src: Source, preview_rows: int) -> Tuple[List[str], List[Dict[str, Any]], int]:
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
