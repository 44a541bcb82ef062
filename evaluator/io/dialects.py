"""Column names: the fields a sample has and the names each tool gives them.

Matched case-insensitively, surrounding spaces ignored; the first alias found wins.
"""
from __future__ import annotations

from typing import Dict, Iterable, Tuple

from .sources import Where

FIELDS: Tuple[str, ...] = (
    "question",
    "answer",
    "contexts",
    "ground_truth",
    "sample_id",
    "expected_answer_keywords",
    "expected_docs",
    "category",
)
REQUIRED: Tuple[str, ...] = ("question", "answer")
ALIASES: Dict[str, Tuple[str, ...]] = {
    "question": ("question", "user_input", "input", "query"),
    "answer": ("answer", "response", "actual_output"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context"),
    "ground_truth": ("ground_truth", "reference", "expected_output"),
    "sample_id": ("sample_id", "id"),
    "expected_answer_keywords": ("expected_answer_keywords", "keywords"),
    "expected_docs": ("expected_docs",),
    "category": ("category",),
}
HUMAN_PREFIX = "human_"


def norm(column: str) -> str:
    """How column names are compared: trimmed and case-folded ("µ" and "Μ" are the same letter)."""
    return column.strip().casefold()


def is_label(column: str) -> bool:
    """Whether a column holds human labels: human_<metric>."""
    key = norm(column)
    return key.startswith(HUMAN_PREFIX) and len(key) > len(HUMAN_PREFIX)


def detect_mapping(columns: Iterable[str]) -> Dict[str, str]:
    """EvalSample field -> column name, from the known aliases (case-insensitive, spaces trimmed)."""
    by_key: Dict[str, str] = {}
    for col in columns:
        by_key.setdefault(norm(str(col)), col)
    mapping = {}
    for name, aliases in ALIASES.items():
        found = next((by_key[a] for a in aliases if a in by_key), None)
        if found is not None:
            mapping[name] = found
    return mapping


def check_duplicates(columns: Iterable[str], where: Where) -> None:
    """Refuse two columns whose names compare equal (see `norm`)."""
    seen: Dict[str, str] = {}
    for col in columns:
        key = norm(col)
        if key in seen:
            raise where.error(f"the column '{col}' appears twice (also as '{seen[key]}'); "
                              "rename or delete one of them", column=col)
        seen[key] = col
