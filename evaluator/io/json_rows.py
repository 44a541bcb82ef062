"""JSON Lines and JSON rows: one object per line, or a list of objects (bare or under "samples"/"data";
an OTLP file's "resourceSpans"; promptfoo's "results"."results"; a deepeval test run's "testCases";
an inspect_ai log's "samples")."""
from __future__ import annotations

import json
import re
from contextlib import contextmanager
from typing import IO, Any, Iterator, Optional

from ..errors import DatasetError
from .cells import json_type
from .encodings import choose_encoding, text_stream
from .sources import Records, Rows, Source, Where

_LINE_ADVICE = "each line of a .jsonl file must be one complete JSON object"
# A key as JSON writes it, followed by its colon: the last one before a syntax error names the column.
_KEY = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:')


@contextmanager
def read_jsonl(src: Source) -> Iterator[Rows]:
    """The reader of .jsonl and .ndjson (io/filetypes.py): one object a line, each carrying its keys."""
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        yield Rows(encoding, [], None, jsonl_records(text, src))


@contextmanager
def read_json(src: Source) -> Iterator[Rows]:
    """The reader of .json (io/filetypes.py): a list of objects, bare or under a known key."""
    encoding = choose_encoding(src)
    with text_stream(src, encoding) as text:
        yield Rows(encoding, [], None, json_records(text, src))


def jsonl_records(text: IO[str], src: Source) -> Records:
    """One object per non-blank line, with its line number."""
    for lineno, raw in enumerate(text, 1):
        if not raw.strip():
            continue
        where = Where(src.name, lineno)
        obj = _parse_line(raw.rstrip("\r\n"), where)
        if not isinstance(obj, dict):
            hint = " If the file is one JSON list, rename it to .json." if isinstance(obj, list) else ""
            raise where.error(f"is a JSON {json_type(obj)}, not an object; write one object per line, "
                              f'like {{"question": "...", "answer": "...", "contexts": ["..."]}}.{hint}')
        yield where, obj


def json_records(text: IO[str], src: Source) -> Records:
    """The objects of a JSON list (bare, or under "samples"/"data"), each with its 1-based item."""
    where = Where(src.name)
    raw = text.read()
    if not raw.strip():
        return  # an empty file has no rows, which the caller reports
    data = _parse_json(raw, where, "fix the syntax (a JSON validator shows the spot); if the "
                                   "file holds one object per line, rename it to .jsonl")
    del raw  # the text is not needed once parsed: 100,000 rows should not be held twice
    items = data
    if isinstance(data, dict) and query_responses(data):  # LlamaIndex QueryResponseDataset: two id -> text maps
        data = items = [{"query_id": k, "query": q, "reference_response": data["responses"].get(k)}
                        for k, q in data["queries"].items()]
    if isinstance(data, dict):
        _refuse_known(data, where)
        items = next((data[k] for k in _LIST_KEYS if data.get(k) is not None), None)
        if isinstance(items, list) and isinstance(data.get("conversationalTestCases"), list):  # deepeval: the
            items = items + data["conversationalTestCases"]  # reader names each one it cannot read
        if items is None and isinstance(data.get("results"), list):  # RAGChecker's input and output
            items = data["results"]
        if items is None and isinstance(data.get("results"), dict):  # promptfoo eval -o json
            items = data["results"].get("results")
        if isinstance(items, dict) and isinstance(items.get("examples"), list):  # Phoenix: {"data": {"examples"}}
            items = items["examples"]
    if not isinstance(items, list):
        raise where.error('must hold a list of objects, or an object with a "samples" (or "data", "results") list; '
                          f"found a JSON {json_type(data)}")
    del data
    for index, obj in enumerate(items):
        here = Where(src.name, item=index + 1)
        if not isinstance(obj, dict):
            raise here.error(f"is a JSON {json_type(obj)}, not an object with question/answer fields")
        items[index] = None  # let each parsed object go once it has become a sample
        yield here, obj


_LIST_KEYS = ("samples", "data", "resourceSpans", "testCases",  # testCases: a deepeval test run
              "examples")  # LlamaIndex's LabelledRagDataset.save_json (io/llamaindex_datasets.py)


def query_responses(data: dict) -> bool:
    """Whether a JSON object is LlamaIndex's QueryResponseDataset.save_json: {"queries": {id: q}, "responses": {id: r}}."""
    return set(data) == {"queries", "responses"} and all(isinstance(data[k], dict) for k in data)


def _refuse_known(data: dict, where: Where) -> None:
    """Files another tool wrote that ragmeter recognises but cannot read: say which, and what to do."""
    if "testCases" in data and not data["testCases"] and data.get("conversationalTestCases"):
        raise where.error("is a deepeval test run of conversational test cases only, which ragmeter does not read "
                          "from a test run; save the conversations with EvaluationDataset.save_as('jsonl') (goldens "
                          "with turns) and load that file")
    if "eval" in data and "samples" not in data and isinstance(data.get("eval"), dict):
        raise where.error("is an inspect_ai log without samples (written with --no-log-samples, or a header "
                          "only); run the eval again with samples logged (the default) and load its log")


def _parse_line(line: str, where: Where) -> Any:
    """One JSONL line; a syntax error names the column (key) it happened in, not a character count."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        column = _last_key(line[:exc.pos])
        if exc.pos >= len(line.rstrip()) and line.lstrip().startswith("{"):
            reason = ("ends before its object is closed: the closing } (or a ] or quote before it) is "
                      "missing at the end of the line")
        else:
            reason = f"is not valid JSON ({exc.msg} at character {exc.colno})"
        raise where.error(f"{reason}; {_LINE_ADVICE}", column=column) from None
    except (ValueError, RecursionError):
        return _parse_json(line, where, _LINE_ADVICE)


def _last_key(prefix: str) -> Optional[str]:
    keys = _KEY.findall(prefix)
    if not keys:
        return None
    try:
        return str(json.loads(f'"{keys[-1]}"'))
    except ValueError:
        return keys[-1]


def _parse_json(text: str, where: Where, advice: str) -> Any:
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
