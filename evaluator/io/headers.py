"""Headers as people lay them out in a spreadsheet: a second header row under merged cells, a merged title.

A team's sheet often has two header rows: group labels merged across columns on the first ("Input" over
Question and ID, "Bot output" over Answer and Contexts), or a title merged across the whole width, or
names merged down two rows beside a group whose sub-names sit on the second row. Saved as .xlsx, .ods or
.csv, a merged cell keeps its text in its first cell and leaves the others blank. Read with the first row
as the header, the second row is data whose question is blank ("the question is empty").

`two_row_header(first, second)` says when the second row is the rest of the header, and gives the columns:
the second row is header-like (short, single-line text or blank, no numbers) and it completes the first:
either the first row names a question column, the second is blank under it (a name merged down two rows)
and names a column the first row left blank (the sub-names of a merged group), or the first row names no
question and the two rows together do (group labels or a title above the names). Each column is named by its second-row cell, else its first-row cell; a name given twice is
prefixed with its group ("Reference Answer", "Bot output Answer").

`merged_title(first, second)`: a first row with one text cell and every other cell blank, over rows 3 or
more columns wide, is a title (a merged cell), not column names; when no second row names the columns the
reader refuses it, naming the row and what to do.
"""
from __future__ import annotations

import datetime as dt
from typing import Any, List, Optional, Sequence

from .dialects import detect_mapping, norm

MAX_HEADER_CHARS = 80  # a longer cell, or one with a line break, is data, not a column name


def blank(cell: Any) -> bool:
    return cell is None or (isinstance(cell, str) and not cell.strip())


def header_like(cell: Any) -> bool:
    """Whether a cell could be a column name (or a blank under a merged one): short, one-line text."""
    if blank(cell):
        return True
    if isinstance(cell, (int, float, dt.date, dt.time)) or not isinstance(cell, str):
        return False
    return "\n" not in cell and len(cell.strip()) <= MAX_HEADER_CHARS


def _names_question(names: Sequence[str]) -> bool:
    return "question" in detect_mapping(n for n in names if n)


def _text(cell: Any) -> str:
    return "" if blank(cell) else str(cell).strip()


def two_row_header(first: Sequence[Any], second: Sequence[Any]) -> Optional[List[str]]:
    """The columns of a header spread over two rows, or None when the second row is data (see the docstring)."""
    width = max(len(first), len(second))
    top = [_text(c) for c in first] + [""] * (width - len(first))
    sub = [_text(c) for c in second] + [""] * (width - len(second))
    if not all(header_like(c) for c in second) or not any(sub):
        return None
    combined = [s or t for t, s in zip(top, sub)]
    if _names_question(top):
        question = detect_mapping(t for t in top if t)["question"]
        if sub[top.index(question)] or not any(s and not t for t, s in zip(top, sub)):
            return None  # the second row has a question, or names no column the first left blank: a data row
    elif not _names_question(combined):
        return None
    return _named(top, sub, combined)


def _named(top: List[str], sub: List[str], combined: List[str]) -> List[str]:
    """Each column's name; a name that two columns share gets its group (the merged cell above) in front."""
    groups, group = [], ""
    for t in top:
        group = t or group
        groups.append(group)
    seen = [norm(c) for c in combined if c]
    return [f"{g} {c}" if c and seen.count(norm(c)) > 1 and g and g != c else c
            for g, c in zip(groups, combined)]


def merged_title(first: Sequence[Any], second: Sequence[Any]) -> Optional[str]:
    """The text of a first row that is one merged cell (one text, the rest blank) over a table of 3 or more
    columns (the row under it fills that many), when that text names no question."""
    texts = [c for c in first if not blank(c)]
    wide = sum(1 for c in second if not blank(c)) >= 3
    if len(texts) == 1 and wide and isinstance(texts[0], str) and not _names_question([texts[0]]):
        return texts[0].strip()
    return None
