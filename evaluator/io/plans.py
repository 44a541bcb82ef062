"""Which column feeds which sample field: detected names, overridden by the caller's mapping."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..errors import DatasetError
from .dialects import ALIASES, FIELDS, HUMAN_PREFIX, REQUIRED, check_duplicates, detect_mapping, is_label, norm
from .sources import Where
from .surfaces import LIBRARY, Surface

class MissingColumn(DatasetError):
    """A required field no column gives; `fields` names them (a test set's refusal is worded from it)."""

    def __init__(self, message: str, fields: Tuple[str, ...], where: Where) -> None:
        self.fields = fields
        super().__init__(message, file=where.file, line=where.line, item=where.item)


@dataclass(frozen=True)
class Plan:
    """Which key of a row feeds which field; computed once per distinct set of keys."""

    fields: Dict[str, str]
    labels: Tuple[Tuple[str, str], ...]  # (metric, column) for human_<metric> columns
    extra: Tuple[str, ...]  # columns kept as metadata


def check_mapping(mapping: Optional[Mapping[str, Optional[str]]]) -> Dict[str, Optional[str]]:
    """The caller's mapping, refusing names that are not sample fields."""
    mapping = dict(mapping or {})
    unknown = [f for f in mapping if f not in FIELDS]
    if unknown:
        raise DatasetError(f"the mapping names unknown field(s) {', '.join(map(repr, unknown))}; "
                           f"the fields are {', '.join(FIELDS)}")
    return mapping


def _apply_mapping(columns: List[str], mapping: Dict[str, Optional[str]], where: Where,
                   strict: bool) -> Dict[str, str]:
    fields = detect_mapping(columns)
    by_key = {norm(c): c for c in columns}
    for name, wanted in mapping.items():
        column = by_key.get(norm(str(wanted or "")))
        if wanted and column is None and strict:
            raise where.error(f"the mapping reads {name} from column '{wanted}', which is not in the file; "
                              f"columns found: {', '.join(columns) or '(none)'}")
        fields.pop(name, None)
        if column is not None:
            fields[name] = column
    _release_detected(fields, mapping)
    _check_one_use(fields, where)
    return fields


def _release_detected(fields: Dict[str, str], mapping: Dict[str, Optional[str]]) -> None:
    """Drop an optional field detected on a column the caller mapped to another field.

    Mapping contexts to Phoenix's `reference` means that column is not also the reference answer.
    A required field keeps its column, so mapping one onto the answer column is still an error.
    """
    chosen = {fields[name] for name in mapping if name in fields}
    for name in [n for n, c in fields.items() if c in chosen and n not in mapping and n not in REQUIRED]:
        del fields[name]


def _check_one_use(fields: Dict[str, str], where: Where) -> None:
    used: Dict[str, str] = {}
    for name, column in fields.items():
        if column in used:
            raise where.error(f"the column '{column}' is mapped to both {used[column]} and {name}; "
                              "map each field to its own column", column=column)
        used[column] = name


def _require(fields: Dict[str, str], columns: List[str], where: Where, surface: Surface,
             required: Tuple[str, ...]) -> None:
    missing = [name for name in required if name not in fields]
    if len(missing) == 1:
        name = missing[0]
        raise MissingColumn(
            f"no {name} column. Columns found: {', '.join(columns) or '(none)'}. Accepted names: "
            f"{', '.join(ALIASES[name])}. {surface.map_advice(name)}", (name,), where)
    if missing:  # every missing column at once, with one line that maps them all
        accepted = "; ".join(f"{name}: {', '.join(ALIASES[name])}" for name in missing)
        raise MissingColumn(
            f"no {' column and no '.join(missing)} column. Columns found: {', '.join(columns) or '(none)'}. Accepted "
            f"names: {accepted}. {surface.map_all_advice(missing)}", tuple(missing), where)


def make_plan(columns: List[str], mapping: Dict[str, Optional[str]], where: Where, strict: bool,
              surface: Surface = LIBRARY, required: Tuple[str, ...] = REQUIRED) -> Plan:
    """The plan for rows with these columns; raises when a `required` field has no column."""
    check_duplicates(columns, where)
    fields = _apply_mapping(columns, mapping, where, strict)
    _require(fields, columns, where, surface, required)
    used = set(fields.values())
    rest = [c for c in columns if c not in used]
    labels = tuple((norm(c)[len(HUMAN_PREFIX):], c) for c in rest if is_label(c))
    label_cols = {c for _, c in labels}
    return Plan(fields, labels, tuple(c for c in rest if c not in label_cols))


class Planner:
    """Plans for rows: one fixed plan for a CSV header, one per distinct key set for JSON objects."""

    def __init__(self, mapping: Dict[str, Optional[str]], surface: Surface = LIBRARY,
                 required: Tuple[str, ...] = REQUIRED) -> None:
        self.mapping = mapping
        self.surface = surface
        self.required = required  # ("question",) when a target answers each question
        self._fixed: Optional[Plan] = None
        self._cache: Dict[Tuple[str, ...], Plan] = {}
        self._columns: Dict[str, str] = {}  # every key seen in JSON objects, by norm

    def fix(self, columns: List[str], where: Where) -> None:
        """Use one plan for every row (a CSV header), checked now, before any row is read."""
        self._fixed = make_plan(columns, self.mapping, where, strict=True, surface=self.surface,
                                required=self.required)

    def plan(self, row: Dict[str, Any], where: Where) -> Plan:
        if self._fixed is not None:
            return self._fixed
        keys = tuple(row)
        plan = self._cache.get(keys)
        if plan is None:
            if len(self._cache) > 64:  # rows with ever-different keys must not grow memory
                self._cache.clear()
            # Objects may omit optional keys, so a mapped column is only checked at the end (finish).
            plan = make_plan([str(k) for k in keys], self.mapping, where, strict=False, surface=self.surface,
                             required=self.required)
            self._columns.update((norm(str(k)), str(k)) for k in keys)
            self._cache[keys] = plan
        return plan

    def finish(self, name: str) -> None:
        """Every mapped column must have appeared in at least one JSON object."""
        if self._fixed is not None:
            return
        for field_name, wanted in self.mapping.items():
            if wanted and norm(str(wanted)) not in self._columns:
                raise DatasetError(f"the mapping reads {field_name} from column '{wanted}', which no row has; "
                                   f"columns found: {', '.join(self._columns.values()) or '(none)'}", file=name)
