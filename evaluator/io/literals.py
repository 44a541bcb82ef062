"""Python literals as pandas writes list cells (`['a', 'b']`, `[{'text': 'a'}]`), read in bounded memory.

`ast.literal_eval` builds a whole syntax tree first: a 50 MB cell `['ab', 'ab', ...]` took
9.1 GB (182x the file). This reader scans the text once and builds only the values: lists,
tuples, dicts, strings, numbers, True/False/None, nested at most MAX_DEPTH deep. A string item
is decoded on its own (its escapes by literal_eval on that one token, which is bounded by the
token), and equal items share one string, so a cell of millions of repeated short items costs
about a pointer per item. Anything else (names, calls, operators, set literals) is not a
literal pandas writes, and gives None.
"""
from __future__ import annotations

import ast
import re
from typing import Any, Dict, List, Optional

MAX_DEPTH = 32
_WS = re.compile(r"\s*")
# A string literal as repr() writes it (no raw line breaks). Possessive, so a long string is
# matched in one step, not one backtracking frame per character.
STRING = re.compile(r"""'(?:[^'\\\n]++|\\.)*+'|"(?:[^"\\\n]++|\\.)*+\"""")
# The common cell, a flat list of strings, validated and split by the regex engine (C speed).
_STRING_LIST = re.compile(rf"\[\s*+(?:(?:{STRING.pattern})\s*+,\s*+)*+(?:(?:{STRING.pattern})\s*+)?\]")
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_NAME = re.compile(r"[A-Za-z_]\w*")
_NAMES: Dict[str, Any] = {"True": True, "False": False, "None": None}
_CLOSE = {"[": "]", "(": ")"}


class _Invalid(Exception):
    pass


def string_token(token: str) -> str:
    """The text of one Python string literal token ('...' or "...")."""
    if "\\" not in token:
        return token[1:-1]
    value = ast.literal_eval(token)
    if not isinstance(value, str):
        raise _Invalid
    return value


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0
        self.memo: Dict[str, str] = {}  # equal items share one string object

    def skip(self) -> str:
        self.pos = _WS.match(self.text, self.pos).end()  # type: ignore[union-attr]  # \s* always matches
        return self.text[self.pos:self.pos + 1]

    def value(self, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise _Invalid
        head = self.skip()
        if head in _CLOSE:
            items = self.items(depth, _CLOSE[head])
            return items if head == "[" else tuple(items)
        if head == "{":
            return self.mapping(depth)
        if head in ("'", '"'):
            return self.string()
        return self.scalar()

    def items(self, depth: int, close: str) -> List[Any]:
        self.pos += 1
        out: List[Any] = []
        while self.skip() != close:
            out.append(self.value(depth + 1))
            if self.skip() == ",":
                self.pos += 1
            elif self.skip() != close:
                raise _Invalid
        self.pos += 1
        return out

    def mapping(self, depth: int) -> Dict[Any, Any]:
        self.pos += 1
        out: Dict[Any, Any] = {}
        while self.skip() != "}":
            key = self.value(depth + 1)
            if self.skip() != ":" or isinstance(key, (list, dict)):
                raise _Invalid
            self.pos += 1
            out[key] = self.value(depth + 1)
            if self.skip() == ",":
                self.pos += 1
            elif self.skip() != "}":
                raise _Invalid
        self.pos += 1
        return out

    def string(self) -> str:
        match = STRING.match(self.text, self.pos)
        if match is None:
            raise _Invalid
        self.pos = match.end()
        token = match.group()
        value = self.memo.get(token)
        if value is None:
            value = self.memo[token] = string_token(token)
        return value

    def scalar(self) -> Any:
        match = _NUMBER.match(self.text, self.pos)
        if match is not None:
            self.pos = match.end()
            token = match.group()
            return int(token) if token.lstrip("+-").isdigit() else float(token)
        match = _NAME.match(self.text, self.pos)
        if match is None or match.group() not in _NAMES:
            raise _Invalid
        self.pos = match.end()
        return _NAMES[match.group()]


def parse_literal(text: str) -> Optional[Any]:
    """The value of a Python literal written in `text`, or None when it is not one."""
    if _STRING_LIST.fullmatch(text):
        return _strings(text)
    reader = _Reader(text)
    try:
        value = reader.value(0)
    except (_Invalid, ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if not reader.skip() else None


def _strings(text: str) -> Optional[List[str]]:
    memo: Dict[str, str] = {}
    out = []
    try:
        for match in STRING.finditer(text):
            token = match.group()
            value = memo.get(token)
            if value is None:
                value = memo[token] = string_token(token)
            out.append(value)
    except (_Invalid, ValueError, SyntaxError):
        return None
    return out
