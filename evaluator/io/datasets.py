"""Read evaluation datasets (CSV, JSON Lines, JSON, Parquet, saved datasets) into `EvalSample` lists.

This module is the entry point and the map; each step has its own module beside it: sources
(path or upload, size limit), encodings, csv_rows / json_rows / arrow_rows (raw rows per format),
dialects (column names, other tools' files), plans (column -> field), cells (cell values), surfaces
(advice worded for the library, the CLI or the dashboard).

Formats, chosen by the file name's extension (or a folder's contents):
    .csv (.tsv)       a header line, then one sample per row. A header without commas but with
                      semicolons or tabs is read with that delimiter (European Excel exports).
    .jsonl (.ndjson)  one JSON object per line; blank lines are skipped.
    .json             a list of objects, or an object holding that list under "samples" or "data".
    .parquet          one sample per row (pyarrow, read in batches).
    .eval             an inspect_ai log archive (inspect_logs.py; zstandard, the `formats` extra).
    .xlsx .xlsm .ods  a spreadsheet's sheet (workbooks.py, opendocument.py); a header over two rows is one.
    .txt              Excel's "Unicode Text": UTF-16, tab-separated (csv_rows.py).
    .gz .zip          any of these compressed (data.jsonl.gz), unpacked under a byte cap (compressed.py).
    a folder          a Hugging Face `datasets` folder written by save_to_disk (its Arrow files;
                      a DatasetDict folder with one split, or the folder of one split).

Column names (matched case-insensitively, surrounding spaces ignored; first alias found wins):
    question                  question | user_input (ragas) | input (deepeval) | query
    answer                    answer | response (ragas) | actual_output (deepeval) | output (Phoenix, TruLens)
    contexts                  contexts | retrieved_contexts (ragas) | retrieval_context (deepeval) | context
    ground_truth              ground_truth | reference (ragas) | expected_output (deepeval) |
                              ground_truths (ragas 0.0.x)
    sample_id                 sample_id | id
    expected_answer_keywords  expected_answer_keywords | keywords
    expected_docs             expected_docs
    category                  category
    tool_calls                tool_calls | tools_called (deepeval)
    expected_tools            expected_tools (deepeval)
    retrieval_ids             retrieval_ids | retrieved_ids | retrieved_doc_ids | doc_ids (ranked)
    relevance                 relevance | relevance_grades | qrels ({"doc-id": grade})
`mapping={field: column}` overrides detection; a field mapped to None or "" is not read.
`question` and `answer` are required (an empty answer is allowed: faithfulness is then skipped),
except with `needs_answer=False` (a target answers each question): then only `question` is;
a missing `contexts` column means no contexts. Files from deepeval, Phoenix, ragas 0.0.x and TruLens
are recognised and their cells read the way those tools write them (see dialects.py); spans
(OpenInference, OTLP/JSON, Phoenix span exports: one sample per trace, traces.py) and LangSmith,
Langfuse, MLflow and promptfoo files (experiments.py), deepeval test runs (deepeval_runs.py),
inspect_ai logs (inspect_logs.py) and Langfuse traces (langfuse_traces.py) are regrouped into samples;
other tools' grades become external_<tool>_<metric> numbers in sample.metadata["external_scores"]
(grades.py), listed in a note;
`inspect_dataset(...).notes` says what was recognised and how it is read.

Cell values:
  - contexts: a JSON array of strings (the canonical form), a Python-style list ['a', 'b'] (what
    pandas writes), or one plain string = one context. A context may also be an object
    {"title", "text"}, {"page_content"} (LangChain) or {"content"}; it becomes "title: text".
    A numpy array as pandas writes it (['a' 'b'], from Hugging Face datasets) is a list too.
    A cell that parses as a JSON array is a list; one that starts like a list ("[" then a quote,
    "{" or "]") must parse as one; anything else, like "[1] Refund policy: ...", is plain text,
    except a bare number or a JSON object, which are errors (likely the wrong column).
  - expected_answer_keywords, expected_docs, expected_tools: as above, or "a; b; c", or "a|b";
    expected_tools may also list deepeval ToolCall objects ({"name": ...}).
  - retrieval_ids, relevance: see doc_ids.py. Without a retrieval_ids column, the ids carried by
    context objects ({"text", "id"} or {"page_content", "metadata": {"id"|"source"}}) are used.
  - tool_calls: a JSON array of {"name", "arguments"/"input_parameters", "output"} objects
    (deepeval's ToolCall, OpenAI's tool_calls) or of tool names.
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
1; JSONL: line; JSON and Arrow formats: item N, 1-based), the column, and what to do, in the words
of the caller's surface (`surface=CLI` says `--mapping answer=COLUMN`). Limits (`max_bytes`,
`max_rows`) are checked before parsing where the size is known, and reading stops at the first
row over the limit.
"""
from __future__ import annotations

import itertools
import json
import logging
from dataclasses import dataclass, field, replace
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ..errors import DatasetError
from ..model import EvalSample
from ..safetext import clean_row, clean_sample
from ..conversation import Conversation
from .doc_ids import context_ids, ids_cell, relevance_cell
from .conversations import conversation_rows, is_conversation_row
from .records import CONVERSATION
from .cells import contexts_cell, label_cell, meta_cell, terms_cell, text_cell, tool_calls_cell, tool_names_cell
from .dialects import (ALIASES, FIELDS, HUMAN_PREFIX, REQUIRED, Reading, detect_mapping, detect_reading, is_label,
                       pipe_warning, split_notes)
from .grades import blank, external_number, grades_note, is_external
from .paths import NestedPaths, nested_paths
from .plans import MissingColumn, Plan, Planner, check_mapping
from .readings import Tally
from .rows import Rows, source_rows
from .sources import Records, Source, Where, open_source
from .surfaces import CLI, DASHBOARD, LIBRARY, Surface
from .lookalikes import lookalike_warnings, unread_columns, unread_note
from .workbooks import with_passage_split

__all__ = ["ALIASES", "CLI", "DASHBOARD", "FIELDS", "HUMAN_PREFIX", "LIBRARY", "REQUIRED",
           "DatasetPreview", "Surface", "detect_mapping", "inspect_dataset", "load_dataset"]
log = logging.getLogger("ragmeter")


@dataclass
class DatasetPreview:
    """What the dashboard shows before loading: the raw first rows and how columns would be read."""

    name: str
    format: str  # "csv", "jsonl", "json", "parquet" or "saved" (a Hugging Face save_to_disk folder)
    encoding: str  # "binary" for the Arrow formats
    columns: List[str]
    rows: List[Dict[str, Any]]  # the first rows as read, before any conversion
    mapping: Dict[str, str]  # field -> column, as detected
    row_count: int
    label_columns: List[str] = field(default_factory=list)  # human_<metric> columns
    missing: List[str] = field(default_factory=list)  # required fields with no column
    notes: List[str] = field(default_factory=list)  # the tool recognised, how its cells are read, doubts
    paths: List[str] = field(default_factory=list)  # nested paths in the first rows (inputs.question)
    warnings: List[str] = field(default_factory=list)  # unread columns that look like a field (io/lookalikes.py)
    quiet: List[str] = field(default_factory=list)  # columns the reader leaves unread on purpose (said in notes)
    sheets: List[str] = field(default_factory=list)  # an Excel workbook's sheets (for a Sheet select)
    sheet: Optional[str] = None  # the sheet read
    tool: Optional[str] = None  # the other tool whose file this is (None for a plain table): its unread columns are named


def _metadata(row: Dict[str, Any], plan: Plan, where: Where) -> Dict[str, Any]:
    meta: Dict[str, Any] = {}
    external: Dict[str, float] = {}
    for column in plan.extra:
        number = external_number(row.get(column)) if is_external(column) else None
        if number is not None:  # another tool's grade, as a number beside our scores (grades.py)
            external[column.strip()] = number
            continue
        value = meta_cell(row.get(column), where, column)
        if value:
            meta[column] = value
    if external:
        meta["external_scores"] = external
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
    ids = _retrieval_ids(row, cols, where)
    return EvalSample(
        question=question,
        answer=text("answer"),
        no_answer_reason=_no_answer(row, cols),
        contexts=contexts,
        ground_truth=text("ground_truth") or None,
        sample_id=text("sample_id") or f"row-{number}",
        expected_answer_keywords=terms("expected_answer_keywords"),
        expected_docs=terms("expected_docs"),
        category=text("category") or None,
        metadata=_metadata(row, plan, where),
        tool_calls=tool_calls_cell(row.get(cols["tool_calls"]), where, cols["tool_calls"]) if "tool_calls" in cols else [],
        expected_tools=tool_names_cell(row.get(cols["expected_tools"]), where, cols["expected_tools"])
        if "expected_tools" in cols else None,
        retrieval_ids=ids,
        relevance=relevance_cell(row.get(cols["relevance"]), where, cols["relevance"]) if "relevance" in cols else None,
    )


def _retrieval_ids(row: Dict[str, Any], cols: Dict[str, str], where: Where) -> Optional[List[str]]:
    """The row's ranked document ids: its retrieval_ids column, else the ids its context objects carry."""
    if "retrieval_ids" in cols:
        return ids_cell(row.get(cols["retrieval_ids"]), where, cols["retrieval_ids"])
    if "contexts" in cols:
        return context_ids(row.get(cols["contexts"]), where, cols["contexts"])
    return None


NO_ANSWER = "No answer: the file gives none for this row (the cell is missing or null), so nothing that reads the answer is scored."


def _no_answer(row: Dict[str, Any], cols: Dict[str, str]) -> Optional[str]:
    """Why the row has no answer at all, or None when it has one. A missing or null cell is no answer
    (deepeval goldens without actual_output); "" is an answer that is truly empty, and is scored."""
    if "answer" in cols and row.get(cols["answer"]) is not None:
        return None
    return NO_ANSWER


def _peek(rows: Rows, mapping: Dict[str, Optional[str]]) -> Reading:
    """The Reading for these rows, from their columns and first row (kept for iteration)."""
    first = next(rows.records, None)
    if first is not None:
        rows.records = itertools.chain([first], rows.records)
    columns = rows.columns or ([str(k) for k in first[1]] if first else [])
    return detect_reading(columns, first[1] if first else None, mapping)


def _too_many(max_rows: int, name: str, surface: Surface) -> DatasetError:
    return DatasetError(f"has more than {max_rows:,} rows; {surface.limit_advice('rows')}", file=name)


def _no_rows(name: str) -> DatasetError:
    return DatasetError("has no rows (it is empty or holds only a header); add one row per sample "
                        "with at least question and answer", file=name)


# --- public entry points ------------------------------------------------------------------------

def load_dataset(source: Any, mapping: Optional[Mapping[str, Optional[str]]] = None, *,
                 max_rows: Optional[int] = None, max_bytes: Optional[int] = None,
                 name: Optional[str] = None, surface: Surface = LIBRARY,
                 needs_answer: bool = True, notes: Optional[List[str]] = None,
                 tool_evidence: bool = True, sheet: Optional[str] = None,
                 warnings: Optional[List[str]] = None) -> List[EvalSample]:
    """Read a dataset file (a path, a file-like object with `.name`, or a `save_to_disk` folder).

    `mapping` maps EvalSample fields to column names, or to nested paths inside a column
    (`inputs.question`, `outputs.documents[].page_content`), and overrides detection. `max_rows` and
    `max_bytes` refuse bigger files with a clear DatasetError. `name` replaces the file name in
    messages (and decides the format for objects without `.name`). `surface` (io.surfaces: LIBRARY,
    CLI or DASHBOARD) words the advice in errors the way that surface lets a user act on it. See
    the module docstring for accepted columns, cell forms, encodings and other tools' files.
    `needs_answer=False` reads files without answers (a target will answer each question).
    `notes`, when given, receives what was recognised and how it was read (also logged), including
    rows another tool's format left out and why; the notes said before a DatasetError stay in it.
    `tool_evidence` (conversations): a tool's reply is a context of the assistant turn after it.
    `sheet` names an Excel workbook's sheet to read (else it is found: io/workbooks.py).
    `warnings`, when given, receives a line for each unread column that looks like a reference, contexts or ids
    by its name (io/lookalikes.py): nothing a user meant to be scored is dropped without a word.
    """
    src = replace(open_source(source, name, max_bytes, surface, sheet), max_rows=max_rows)
    said = notes if notes is not None else []
    with source_rows(src) as rows:
        said.extend(rows.notes)
        first = next(rows.records, None)
        rows.records = itertools.chain([first] if first is not None else [], rows.records)
        if first is not None and is_conversation_row(first[1], mapping):  # every row a conversation
            return conversation_rows(rows.records, src.name, max_rows, surface, said, mapping, tool_evidence)
        user = check_mapping(mapping)
        reading = _peek(rows, user)
        said.extend(f"{reading.tool} recognised. {n}" if i == 0 and reading.tool else n
                    for i, n in enumerate(reading.notes))
        merged = {**reading.mapping, **user}
        split = None
        if rows.passages:  # a spreadsheet's cell: several passages in one, by the documented rule
            reading, split = with_passage_split(reading, _contexts_column(rows, merged))
        required = REQUIRED if needs_answer else ("question",)
        tally, paths = Tally(reading.what), NestedPaths(merged, required)
        planner = Planner(merged, surface, required)
        records = Counted(_prepared(rows.records, reading, tally, paths))
        told = len(said)  # the grades note goes before the tally's, which ends the notes
        read = Columns()
        failed = False
        try:
            if rows.header is not None and reading.regroup is None:  # one plan for every row, checked first
                planner.fix(paths.columns(rows.columns), rows.header)
            samples = _load(iter(records), src, planner, max_rows, surface, read)
        except MissingColumn as exc:
            if reading.tool is None or exc.fields != ("answer",) or records.count > 1:
                failed = True
                raise
            raise _test_set(iter(records), reading, tally, src.name, surface) from None  # the whole file, counted
        except DatasetError as exc:
            failed = True
            if tally.skipped and str(exc) == str(_no_rows(src.name)):  # every row was left out: say why
                raise DatasetError(f"has no usable rows: {' '.join(tally.notes())}", file=src.name) from None
            raise
        finally:  # after an error the count is of the rows read before it, never the file's ("1 record." of 3)
            said.extend(f"Read before the error: {n}" if failed else n for n in tally.notes())
    said[told:told] = grades_note(k for s in samples for k in s.metadata.get("external_scores", {}))
    if warnings is not None:
        unread = [c for c in read.unread if c not in reading.quiet]
        # a regrouped format's leftover columns may be partly read (a path inside them): its own notes say what it read
        named = unread_note(reading.tool, unread, surface) if reading.regroup is None else []
        warnings.extend(lookalike_warnings(unread, read.fields, surface) + named)
    if split is not None:
        said[told:told] = split.note()
    for note in said:
        log.info("%s: %s", src.name, note)
    return samples


class Counted:
    """Records that count how many were taken: a golden set is told apart from a file whose later row fails."""

    def __init__(self, records: Records) -> None:
        self.records, self.count = records, 0

    def __iter__(self) -> Records:
        for item in self.records:
            self.count += 1
            yield item


def _test_set(records: Records, reading: Reading, tally: Tally, name: str, surface: Surface) -> DatasetError:
    """A golden set (another tool's examples without model answers), said with its count, not at its first row."""
    answers = [not blank(row.get("answer")) for _, row in records]  # the rows after the one that failed
    found = tally.found if reading.regroup is not None else len(answers) + 1
    what = reading.what[:-1] if found == 1 and reading.what.endswith("s") else reading.what
    ask = surface.ask_target.removeprefix("or ")
    if any(answers):
        return DatasetError(f"{reading.tool}: {found:,} {what}, only {sum(answers):,} with a model answer. Give "
                            f"every row an answer, or {ask}", file=name)
    none = "it has no" if found == 1 else "none has a"
    return DatasetError(f"{reading.tool}: {found:,} {what}, {none} model answer (a test set): {ask}", file=name)


def _prepared(records: Records, reading: Reading, tally: Tally, paths: NestedPaths) -> Records:
    """Rows as the plan reads them: regrouped (traces), cells rewritten (deepeval), nested paths added."""
    for where, row in reading.rows(records, tally):
        yield where, paths.apply(reading.apply(row, where), where)


@dataclass
class Columns:
    """The columns the plans read (field -> column) and those they left unread, over every row's plan."""

    fields: Dict[str, str] = field(default_factory=dict)
    unread: Dict[str, None] = field(default_factory=dict)  # in first-seen order
    plans: List[int] = field(default_factory=list)

    def add(self, plan: Plan) -> None:
        if id(plan) in self.plans[-64:]:
            return
        self.plans.append(id(plan))
        self.fields.update(plan.fields)
        self.unread.update((c, None) for c in plan.extra)


def _load(records: Records, src: Source, planner: Planner, max_rows: Optional[int],
          surface: Surface, read: Optional[Columns] = None) -> List[EvalSample]:
    samples: List[EvalSample] = []
    seen: Dict[str, Where] = {}
    for where, row in records:
        if max_rows is not None and len(samples) >= max_rows:
            raise _too_many(max_rows, src.name, surface)
        plan = planner.plan(row, where)
        if read is not None:
            read.add(plan)
        sample = clean_sample(_build(row, plan, where, len(samples) + 1))  # NULs, lone surrogates: noted
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


def _contexts_column(rows: Rows, mapping: Mapping[str, Optional[str]]) -> Optional[str]:
    """The column the contexts come from: the mapping's, else the detected one."""
    if "contexts" in mapping:
        return mapping["contexts"]
    return detect_mapping(rows.columns).get("contexts")


def inspect_dataset(source: Any, *, preview_rows: int = 5, max_bytes: Optional[int] = None,
                    name: Optional[str] = None, surface: Surface = LIBRARY,
                    sheet: Optional[str] = None) -> DatasetPreview:
    """Look at a dataset without converting it: format, columns, first raw rows, detected mapping.

    Raises DatasetError only when the file cannot be read at all (type, size, encoding, syntax);
    a missing question or answer column is reported in `missing`, so a UI can ask for a mapping.
    `notes` says which tool's file was recognised and how its cells will be read; `sheet` as in load_dataset
    (the preview's `sheets` lists a workbook's sheets).
    """
    src = open_source(source, name, max_bytes, surface, sheet)
    with source_rows(src) as rows:
        reading = _peek(rows, {})
        first = next(rows.records, None)  # raw: its nested paths are offered even when the rows regroup
        if first is not None:
            rows.records = itertools.chain([first], rows.records)
        tally = Tally(reading.what)
        if reading.regroup is not None:  # show the rows as they will be read: one per trace, flattened
            rows.records, rows.columns = reading.rows(rows.records, tally), []
        columns, raw, count = _scan(rows, preview_rows)
        read_notes, sheets, chosen, passages = rows.notes, rows.sheets, rows.sheet, rows.passages
    mapping = {f: c for f, c in {**detect_mapping(columns), **reading.mapping}.items() if c}
    said = [f"{reading.tool} recognised. {n}" if i == 0 and reading.tool else n for i, n in enumerate(reading.notes)]
    return DatasetPreview(
        name=src.name, format=src.format, encoding=rows.encoding, columns=columns, rows=raw,
        mapping=mapping, row_count=count,
        label_columns=[c for c in columns if is_label(c)],
        missing=[f for f in REQUIRED if f not in mapping],
        notes=read_notes + said + _grades_seen(columns, raw) + tally.notes() + split_notes(raw, reading)
        + pipe_warning(raw, mapping.get("contexts"), reading) + _passages_seen(passages, src, raw, mapping.get("contexts")),
        paths=nested_paths(([first[1]] if first else []) + raw), sheets=sheets, sheet=chosen,
        warnings=lookalike_warnings(unread_columns(columns, mapping.values()), mapping, surface, reading.quiet),
        quiet=list(reading.quiet), tool=reading.tool if reading.regroup is None else None,
    )


def _passages_seen(passages: bool, src: Source, raw: List[Dict[str, Any]], column: Optional[str]) -> List[str]:
    """The preview's note on a spreadsheet's contexts cells split into passages (its first rows)."""
    if not passages or not column:
        return []
    _, split = with_passage_split(Reading(), column)
    assert split is not None
    for row in raw:
        split(row.get(column), Where(src.name), column)
    return [n.replace(" split ", " (in the first rows) split ", 1) for n in split.note()]


def _grades_seen(columns: List[str], raw: List[Dict[str, Any]]) -> List[str]:
    """The preview's note on other tools' grades: external_ columns holding numbers in the first rows."""
    return grades_note(c for c in columns if is_external(c) and any(external_number(r.get(c)) is not None for r in raw))


def _scan(rows: Rows, preview_rows: int) -> Tuple[List[str], List[Dict[str, Any]], int]:
    seen = dict.fromkeys(rows.columns)
    raw: List[Dict[str, Any]] = []
    count = 0
    for _, row in rows.records:
        count += 1
        if len(raw) < preview_rows:
            raw.append(clean_row(row))  # a lone surrogate breaks the page's data frame
        if not rows.columns:  # JSON: the union of keys, in first-seen order
            seen.update(dict.fromkeys(str(k) for k in row))
    return list(seen), raw, count


def samples_from_rows(rows: Iterable[Tuple[Optional[int], Dict[str, Any]]],
                      mapping: Optional[Dict[str, Optional[str]]] = None, *,
                      name: str = "data frame", surface: Surface = LIBRARY) -> List[EvalSample]:
    """Samples from rows another reader already split into cells (a data frame, a Parquet batch).

    `rows` are (number, row) pairs: `number` is the row's 1-based position in the whole dataset,
    used in messages and for the default "row-<n>" id, or None when the reader does not know it
    (a partition of a distributed dataset); a row without an id then gets sample_id None. Columns,
    other tools' layouts and cells follow the same rules as `load_dataset`, so the same rows give
    the same samples.
    """
    rows = list(rows)
    if not rows:
        return []
    if CONVERSATION in rows[0][1]:  # a conversation's row, its turns as samples_frame wrote them
        return [EvalSample.from_conversation(Conversation.from_dict(_json(row[CONVERSATION]))) for _, row in rows]
    user = check_mapping(mapping)
    reading = detect_reading([str(k) for k in rows[0][1]], rows[0][1], user)
    merged = {**reading.mapping, **user}
    planner, paths = Planner(merged, surface), NestedPaths(merged)
    samples = []
    for number, row in rows:
        where = Where(name, item=number)
        row = paths.apply(reading.apply(row, where), where)
        plan = planner.plan(row, where)
        sample = _build(row, plan, where, number or 0)
        id_column = plan.fields.get("sample_id")
        if number is None and not text_cell(row.get(id_column) if id_column else None, where, str(id_column)):
            sample.sample_id = None
        samples.append(clean_sample(sample))
    planner.finish(name)
    return samples


def _json(cell: Any) -> Dict[str, Any]:
    return json.loads(cell) if isinstance(cell, str) else dict(cell)
