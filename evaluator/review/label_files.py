"""Label files in: any CSV, JSON Lines or Parquet file with a `sample_id` column and `human_<metric>` columns.

A spreadsheet of labels needs no question or answer (the run already has them), so this reads only the
id and the label columns, through the same row readers, encodings and cell rules as a dataset
(`io.rows`, `io.cells.label_cell`): a blank label is unlabelled; anything but a number from 0 to 5 is
an error naming the file, line and column.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ReviewError
from ..io.cells import label_cell, text_cell
from ..io.dialects import HUMAN_PREFIX, is_label, norm
from ..io.rows import source_rows
from ..io.sources import Where, open_source

# The id column, first found wins: our export's, a plain id, a conversation export's.
ID_COLUMNS = ("sample_id", "id", "conversation_id")


@dataclass(frozen=True)
class LabelRow:
    """One row's labels: where it is (for messages), the sample it names, metric -> label as written."""

    where: Where
    number: int  # 1-based data row
    sample_id: str
    labels: Dict[str, float]


def _id_column(columns: Sequence[str]) -> Optional[str]:
    by_key = {norm(c): c for c in columns}
    return next((by_key[k] for k in ID_COLUMNS if k in by_key), None)


def _labels(row: Dict[str, Any], where: Where) -> Dict[str, float]:
    found = {}
    for column, value in row.items():
        if is_label(str(column)):
            label = label_cell(value, where, str(column))
            if label is not None:
                found[norm(str(column))[len(HUMAN_PREFIX):]] = label
    return found


def read_label_file(path: str) -> List[LabelRow]:
    """Every row of `path` that holds at least one label; ReviewError when the file has no id or label column."""
    src = open_source(path, None, None)
    rows: List[LabelRow] = []
    seen_labels = False
    with source_rows(src) as read:
        for number, (where, row) in enumerate(read.records, 1):
            columns = [str(c) for c in (read.columns or row)]
            id_column = _id_column(columns)
            if id_column is None:
                raise ReviewError(f"{src.name}: {where.label()} has no sample_id column; label files need "
                                  "sample_id and human_<metric> columns (ragmeter review export writes one)")
            seen_labels = seen_labels or any(is_label(c) for c in columns)
            labels = _labels(row, where)
            if labels:
                rows.append(LabelRow(where, number, text_cell(row.get(id_column), where, id_column), labels))
    if not seen_labels:
        raise ReviewError(f"{src.name} has no human_<metric> column (e.g. human_faithfulness); add one per "
                          "metric you labelled, 0/1, 0-1 or 1-5, blank when unlabelled")
    return rows
