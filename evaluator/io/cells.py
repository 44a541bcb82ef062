"""Cell values -> sample field values: text, lists written inside a cell, contexts, labels.

contexts: a JSON array of strings (the canonical form), a Python-style list ['a', 'b'] (what pandas
writes), or one plain string = one context. A context may also be an object {"title", "text"},
{"page_content"} (LangChain) or {"content"}; it becomes "title: text". A cell that parses as a
JSON array is a list; one that starts like a list ("[" then a quote, "{" or "]") must parse as one;
anything else, like "[1] Refund policy: ...", is plain text, except a bare number or a JSON object,
which are errors (likely the wrong column). Keywords and doc titles also accept "a; b; c" or "a|b".
"""
from __future__ import annotations

import json
import math
import re
from typing import Any, Dict, List, Optional

from ..errors import DatasetError
from .literals import STRING, parse_literal, string_token
from .sources import Where

# "[" followed by a quote, "{", "]" or the end: meant as a list, so it must parse as one.
_LISTISH = re.compile(r"\[\s*(?:[\"'{\]]|$)")
# numpy's array repr: Python string literals (repr() of each item) with no commas between them.
# Possessive, so a 50 MB cell is matched without a backtracking frame per item.
_NUMPY_STRINGS = re.compile(rf"\[\s*+(?:(?:{STRING.pattern})\s*+)*+\]")
_CONTEXT_TEXT_KEYS = ("text", "page_content", "content")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages ("object", "list", ...)."""
    names = {dict: "object", list: "list", str: "string", bool: "boolean", type(None): "null"}
    return names.get(type(value), "number")


def text_cell(value: Any, where: Where, column: str) -> str:
    """A text field: strings trimmed, numbers as written, None as ""; lists and objects refused."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise where.error(f"must be text, not a JSON {json_type(value)}; write the value as a string",
                      column=column)


def _json_as(text: str, kind: type) -> Any:
    """`text` parsed as JSON when it is a `kind` (list, dict, str), else None (invalid JSON included)."""
    try:
        parsed = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return parsed if isinstance(parsed, kind) else None


def list_cell(value: str, where: Where, column: str) -> Optional[List[Any]]:
    """A list written inside a cell: JSON array, or the Python repr pandas writes; None if plain text."""
    if not value.startswith("["):
        return None
    parsed = _json_as(value, list)
    if parsed is not None:
        return parsed
    if not _LISTISH.match(value):  # "[1] Refund policy: ..." is text that happens to start with "["
        return None
    # numpy's form first: literal_eval would glue ['a' 'b'] into one string, 'ab'.
    parsed = _numpy_list(value)
    if parsed is None:
        parsed = _python_list(value)
    if not isinstance(parsed, list):
        raise where.error('looks like a list but is not valid JSON; write it as a JSON array with double '
                          'quotes, e.g. ["first text", "second text"], or as plain text without brackets',
                          column=column)
    return parsed


def _python_list(value: str) -> Any:
    """A Python list literal, read in bounded memory (literals.py; not ast.literal_eval)."""
    return parse_literal(value)


def _numpy_list(value: str) -> Optional[List[str]]:
    """A numpy array of strings as pandas writes it: ['a' 'b'], items split by spaces or line breaks.

    Hugging Face datasets turn list columns into numpy arrays in `to_pandas()`, and `to_csv()`
    then writes str(array): Python string literals with no commas between them.
    """
    if not _NUMPY_STRINGS.fullmatch(value):
        return None
    return [string_token(m.group()) for m in STRING.finditer(value, 1, len(value) - 1)]


def _context_item(item: Any, where: Where, column: str) -> str:
    if isinstance(item, str):
        return item.strip()
    if isinstance(item, dict):
        return _context_from_dict(item, where, column)
    raise where.error(f"each context must be text or an object with a 'text' field, not a JSON "
                      f"{json_type(item)}", column=column)


def _context_from_dict(item: Dict[str, Any], where: Where, column: str) -> str:
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
        parsed = _json_as(text, dict)
        return text if parsed is None else parsed
    return text


def contexts_cell(value: Any, where: Where, column: str) -> List[str]:
    """Retrieved contexts from any accepted cell form (see the module docstring); blanks dropped."""
    if value is None:
        return []
    if isinstance(value, str):
        value = value.strip()
        parsed = list_cell(value, where, column)
        if parsed is None:
            value = _misplaced(value)
            if isinstance(value, str):
                return [value] if value else []
        else:
            value = parsed
    if not isinstance(value, list):
        raise where.error(f"contexts must be a list of texts (a JSON array) or one text, not a JSON "
                          f"{json_type(value)}", column=column)
    items = (_context_item(item, where, column) for item in value)
    return [c for c in items if c]


def terms_cell(value: Any, where: Where, column: str) -> Optional[List[str]]:
    """Keywords or document titles: a list, or one string split on ';' or '|'."""
    if value is None:
        return None
    if isinstance(value, str):
        value = value.strip()
        parsed = list_cell(value, where, column)
        if parsed is None:
            sep = ";" if ";" in value else "|"
            parsed = value.split(sep)
        value = parsed
    if not isinstance(value, list):
        raise where.error(f"must be a list of texts, or one text like 'a; b; c', not a JSON "
                          f"{json_type(value)}", column=column)
    terms = [text_cell(v, where, column) for v in value]
    return [t for t in terms if t] or None


_DECIMAL_COMMA = re.compile(r"[+-]?\d+,\d+")


def decimal_point(text: str) -> str:
    """A number written with a decimal comma ("0,5", as Excel writes on a German or French locale) with a point;
    any other text unchanged ("1,000" is read as 1.000 only because a label or grade is never a thousand)."""
    return text.replace(",", ".") if _DECIMAL_COMMA.fullmatch(text) else text


def label_cell(value: Any, where: Where, column: str) -> Optional[float]:
    """A human label (0/1, 0–1 or 1–5) or None when blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(decimal_point(value.strip()) if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not 0.0 <= number <= 5.0:  # also refuses NaN
        raise where.error(f"a human label must be a number: 0/1, 0–1 or 1–5 (blank when unlabelled), "
                          f"not {str(value)[:40]!r}", column=column)
    return number


def meta_cell(value: Any, where: Where, column: str) -> str:
    """Any other column, kept as a string (JSON values serialised; dates and other Arrow values as text)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        raise where.error("nests JSON too deeply to keep; flatten this value", column=column) from None


# --- cells as other tools write them: applied to the raw value before the rules above -----------
# Each takes (value, where, column) and returns the value the rules above then read.

def pipe_split(value: Any, where: Where, column: str) -> Any:
    """deepeval's joined list: "a|b" -> ["a", "b"]. Lists, list-looking cells and Markdown tables are left alone."""
    if isinstance(value, str) and "|" in value and not value.lstrip().startswith("[") and not markdown_table(value):
        return value.split("|")
    return value


# A Markdown table's separator row: |---|:---:| or ---|--- (at least one pipe between dash runs).
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$", re.MULTILINE)
_TABLE_ROW = re.compile(r"^\s*\|.*\|\s*$", re.MULTILINE)


def markdown_table(text: str) -> bool:
    """Whether text holds a Markdown table (a separator row, or two lines framed by pipes): its "|" are not joins."""
    return bool(_TABLE_RULE.search(text)) or len(_TABLE_ROW.findall(text)) >= 2


def json_unquoted(value: Any, where: Where, column: str) -> Any:
    """TruLens stores input/output JSON-encoded: '"What is X?"' -> 'What is X?'. Other values unchanged."""
    if isinstance(value, str):
        text = value.strip()
        if len(text) >= 2 and text[0] == text[-1] == '"':
            parsed = _json_as(text, str)
            return value if parsed is None else parsed
    return value


def first_item(value: Any, where: Where, column: str) -> Any:
    """ragas 0.0.x ground_truths: a list of answers; its first one is the reference. Text unchanged."""
    if isinstance(value, str):
        parsed = list_cell(value.strip(), where, column)
        value = parsed if parsed is not None else value
    if isinstance(value, (list, tuple)):
        return next((v for v in value if isinstance(v, str) and v.strip()), None)
    return value


def pipe_joined(value: Any) -> bool:
    """Whether a raw contexts cell holds one text with " | " inside: maybe several passages joined."""
    if isinstance(value, str):
        text = value.strip()
        items: List[Any] = [text]
        if text.startswith("["):
            try:
                items = list_cell(text, Where(""), "") or [text]
            except DatasetError:
                return False
    elif isinstance(value, list):
        items = value
    else:
        return False
    return any(isinstance(item, str) and " | " in item for item in items)


def tool_calls_cell(value: Any, where: Where, column: str) -> List[Dict[str, Any]]:
    """Tool calls (a JSON array, or a cell holding one) as [{"name", "arguments", "output"}]: deepeval's
    ToolCall objects, OpenAI tool_calls entries, or bare tool names."""
    from ..errors import TargetError
    from .shapes import tool_calls_of  # the one reader of tool calls, shared with targets

    if isinstance(value, str):
        value = value.strip()
        if not value:
            return []
        value = list_cell(value, where, column) if value.startswith("[") else [value]
    try:
        return tool_calls_of(value)
    except TargetError as exc:
        raise where.error(f"{exc}; write tool calls as a JSON array of objects with a 'name'", column=column) from None


def tool_names_cell(value: Any, where: Where, column: str) -> Optional[List[str]]:
    """Expected tools: names ("a; b", a JSON array), or deepeval ToolCall objects whose names are taken."""
    if isinstance(value, str) and value.strip().startswith("["):
        value = list_cell(value.strip(), where, column) or value
    if isinstance(value, list):
        value = [v.get("name") if isinstance(v, dict) else v for v in value]
    return terms_cell(value, where, column)
