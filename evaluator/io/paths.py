"""Nested mapping: a field read from inside a column, `--mapping question=inputs.question`.

The path syntax is --target-field's (io.fields.parse_path): dotted keys, `[0]` for one item
and `[]` for every item (`outputs.documents[].page_content`). The path's head is a column: the
longest dotted prefix that names one, so a flattened frame's "outputs.documents" column and a
JSON object's nested "outputs" both work. A cell holding JSON text (a CSV's) is decoded first.
A mapped name that is itself a column is read as that column, never as a path.
"""
from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple

from ..errors import DatasetError, TargetConfigError
from .fields import MISSING, extract, parse_path
from .cells import list_cell
from .sources import Where

MAX_PATHS = 60  # the dashboard offers this many nested paths at most
_MAX_DEPTH = 5


def is_path(name: Optional[str]) -> bool:
    return bool(name) and ("." in str(name) or "[" in str(name))


class NestedPaths:
    """The mapping's nested paths; `apply` adds each one's value to a row under the path's own text."""

    def __init__(self, mapping: Mapping[str, Optional[str]], required: Tuple[str, ...] = ()) -> None:
        self.paths = [str(w) for w in mapping.values() if is_path(w)]
        self.required = {str(w): f for f, w in mapping.items() if f in required and is_path(w)}
        for path in self.paths:
            try:
                parse_path(path)
            except TargetConfigError as exc:
                raise DatasetError(f"the mapping {exc}") from None

    def columns(self, header: List[str]) -> List[str]:
        """A fixed header plus the paths whose head is one of its columns (a CSV with JSON cells)."""
        keys = {h.strip().casefold() for h in header}
        extra = [p for p in self.paths if p.strip().casefold() not in keys and _split(p, header) is not None]
        return header + extra

    def apply(self, row: Dict[str, Any], where: Where) -> Dict[str, Any]:
        if not self.paths:
            return row
        keys = {str(k).strip().casefold() for k in row}
        out = row
        for path in self.paths:
            if path.strip().casefold() in keys:
                continue  # a column with this very name (LangSmith's flattened "inputs.question")
            value = lookup(row, path)
            if value is not MISSING:
                out = dict(out) if out is row else out
                out[path] = value
            elif path in self.required:
                keys_found = ", ".join(map(str, list(row)[:12]))
                raise where.error(f"the mapping reads {self.required[path]} from '{path}', which this row does "
                                  f"not have (its keys: {keys_found}); check the path")
        return out


def _split(path: str, columns: Iterable[str]) -> Optional[Tuple[str, str]]:
    """(column, rest of the path) for the longest dotted prefix of `path` that is a column, or None."""
    by_key = {str(c).strip().casefold(): str(c) for c in columns}
    segments = path.split(".")
    for k in range(len(segments), 0, -1):
        last = segments[k - 1]
        bracket = last.find("[")
        head = ".".join(segments[:k - 1] + [last[:bracket] if bracket >= 0 else last])
        column = by_key.get(head.strip().casefold())
        if column is not None:
            rest = (last[bracket:] if bracket >= 0 else "") + "".join("." + s for s in segments[k:])
            return column, rest.lstrip(".")
    return None


def lookup(row: Mapping[str, Any], path: str) -> Any:
    """The value at `path` in a row, or fields.MISSING."""
    found = _split(path, row)
    if found is None:
        return MISSING
    column, rest = found
    value = decoded(row[column])
    return extract(value, parse_path(rest)) if rest else value


def decoded(value: Any) -> Any:
    """A cell holding a JSON object or list (or a Python-style list) as that value; other cells unchanged."""
    if hasattr(value, "tolist"):  # a numpy array from Parquet
        value = value.tolist()
    if isinstance(value, str) and value.strip()[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            try:
                parsed = list_cell(value.strip(), Where(""), "")
                return value if parsed is None else parsed
            except DatasetError:
                return value
    return value


def nested_paths(rows: Iterable[Mapping[str, Any]]) -> List[str]:
    """Paths to the text inside nested cells of these rows (for the dashboard's mapping choices)."""
    seen: Dict[str, None] = {}
    for row in rows:
        for column, value in row.items():
            value = decoded(value)
            if isinstance(value, (dict, list)):
                _walk(value, str(column), seen, 1)
    return list(seen)[:MAX_PATHS]


def _walk(value: Any, prefix: str, seen: Dict[str, None], depth: int) -> None:
    if depth > _MAX_DEPTH or len(seen) >= MAX_PATHS:
        return
    if isinstance(value, dict):
        for key, inner in value.items():
            if "." in str(key) or "[" in str(key):
                continue  # not reachable with a dotted path
            path = f"{prefix}.{key}"
            if isinstance(inner, (dict, list)):
                if isinstance(inner, list) and inner and all(isinstance(i, str) for i in inner):
                    seen.setdefault(path, None)
                _walk(inner, path, seen, depth + 1)
            else:
                seen.setdefault(path, None)
    elif isinstance(value, list) and value and isinstance(value[0], dict):
        _walk(value[0], prefix + "[]", seen, depth + 1)
