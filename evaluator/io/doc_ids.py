"""Document ids in cells: the ranked `retrieval_ids`, graded `relevance`, and ids in contexts' metadata.

    retrieval_ids  a JSON array (["d3", "d1"], numbers allowed), a Python-style list, or "d3; d1" / "d3|d1".
                   Order is rank order; a null or blank item is a document without an id and keeps its
                   rank (retrieval metrics count it as not relevant).
    relevance      a JSON object {"d1": 3, "d2": 1} (grades are numbers >= 0; 0 = not relevant), or a
                   list of ids (each grade 1).
    contexts       when the contexts are objects and some carry an id ("id", "doc_id", "document_id", "doc_uri",
                   or the same or "source" under "metadata"), their ids are the row's retrieval ids, in
                   the contexts' order, when the row has no retrieval_ids column.
"""
from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from .cells import json_type, list_cell
from .context_ids import context_id
from .sources import Where

MAX_IDS = 10_000  # a ranked list longer than this is a wrong column, not a retrieval


def _one_id(value: Any, where: Where, column: str) -> str:
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise where.error(f"each retrieval id must be text or a number, not a JSON {json_type(value)}",
                          column=column)
    return value.strip() if isinstance(value, str) else str(value)


def ids_cell(value: Any, where: Where, column: str) -> Optional[List[str]]:
    """A ranked list of document ids ("" for a document without one), or None when the cell is blank."""
    if value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        if not text:
            return None
        parsed = list_cell(text, where, column)
        value = parsed if parsed is not None else text.split(";" if ";" in text else "|")
    if not isinstance(value, (list, tuple)):
        raise where.error(f"retrieval ids must be a list (a JSON array like [\"d3\", \"d1\"]) or text like "
                          f"'d3; d1', not a JSON {json_type(value)}", column=column)
    if len(value) > MAX_IDS:
        raise where.error(f"holds {len(value):,} retrieval ids (at most {MAX_IDS:,}); is this the right column?",
                          column=column)
    ids = [_one_id(v, where, column) for v in value]
    return ids


def _grade(value: Any, doc: str, where: Where, column: str) -> float:
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else math.nan
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
    if not (isinstance(number, (int, float)) and 0 <= number < math.inf):
        raise where.error(f"the relevance grade of {doc!r} must be a number >= 0 (0 = not relevant), "
                          f"not {str(value)[:40]!r}", column=column)
    return float(number)


def relevance_cell(value: Any, where: Where, column: str) -> Optional[Dict[str, float]]:
    """{doc id: grade} from a JSON object (or a list of ids, each grade 1); None when blank."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, str):
        text = value.strip()
        try:
            value = json.loads(text)
        except ValueError:
            value = ids_cell(text, where, column)
    if isinstance(value, (list, tuple)):
        value = {d: 1 for d in (ids_cell(list(value), where, column) or []) if d}
    if not isinstance(value, dict):
        raise where.error(f"relevance must be a JSON object of grades like {{\"d1\": 2, \"d2\": 1}}, not a JSON "
                          f"{json_type(value)}", column=column)
    if len(value) > MAX_IDS:
        raise where.error(f"grades {len(value):,} documents (at most {MAX_IDS:,}); is this the right column?",
                          column=column)
    grades = {_one_id(d, where, column): _grade(g, str(d), where, column) for d, g in value.items()}
    return {d: g for d, g in grades.items() if d} or None


def context_ids(value: Any, where: Where, column: str) -> Optional[List[str]]:
    """The ids in a contexts cell's objects, one per kept context, or None when none carries one."""
    if isinstance(value, str) and value.strip().startswith("["):
        value = list_cell(value.strip(), where, column)
    if not isinstance(value, list):
        return None
    ids = [context_id(item) for item in value if not _blank(item)]
    return ids if any(ids) else None


def _blank(item: Any) -> bool:
    """Whether contexts_cell drops this context (blank text), so the ids stay aligned with the contexts."""
    if isinstance(item, dict):
        item = next((item[k] for k in ("text", "page_content", "content") if k in item), "")
    return isinstance(item, str) and not item.strip()
