"""A generated test item, and the test-set files `ragmeter evaluate` reads.

The columns are the dataset columns ragmeter already reads (evaluator/io/datasets.py): `id`,
`question`, `ground_truth` (the reference answer), `expected_docs` (document titles: the
expected-document recall metric), `expected_answer_keywords` (keyword coverage) and `category`
(the report's breakdown, here the item's kind); `kind`, `language`, `chunk_ids` and `generator`
ride along and come back as the sample's metadata. So `ragmeter evaluate testset.jsonl --target …`
runs the file as it is written.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Dict, List, Sequence

from ..io.filetypes import TESTSET, file_type, rows_bytes, write_rows
from ..io.datasets import load_dataset
from ..model import EvalSample

LIST_FIELDS = ("expected_docs", "expected_answer_keywords", "chunk_ids")
COLUMNS = ("id", "question", "ground_truth", *LIST_FIELDS, "kind")  # an empty file's header
OFFLINE_GENERATOR = "offline extractive (retrieval checks only)"


@dataclass(frozen=True)
class TestItem:
    """One question of a test set, with where it came from."""

    __test__ = False  # not a pytest test class, whatever its name says

    id: str
    question: str
    ground_truth: str
    expected_docs: List[str] = field(default_factory=list)
    expected_answer_keywords: List[str] = field(default_factory=list)
    kind: str = "single"
    language: str = "en"
    chunk_ids: List[str] = field(default_factory=list)
    generator: str = ""  # the judge model, or OFFLINE_GENERATOR

    @property
    def category(self) -> str:
        return self.kind

    def to_record(self) -> Dict[str, Any]:
        record = asdict(self)
        record["category"] = self.kind
        return record

    def edited(self, **changes: Any) -> "TestItem":
        return replace(self, **changes)


def item_from_sample(sample: EvalSample, index: int) -> TestItem:
    """A test item read back from a dataset row (a generated file, or one written by hand)."""
    meta = sample.metadata or {}
    chunk_ids = meta.get("chunk_ids") or []
    if isinstance(chunk_ids, str):
        try:
            chunk_ids = json.loads(chunk_ids) if chunk_ids.startswith("[") else [c for c in chunk_ids.split(";") if c]
        except ValueError:
            chunk_ids = []
    return TestItem(id=sample.sample_id or f"row-{index + 1}", question=sample.question,
                    ground_truth=sample.ground_truth or "", expected_docs=list(sample.expected_docs or []),
                    expected_answer_keywords=list(sample.expected_answer_keywords or []),
                    kind=str(meta.get("kind") or sample.category or "hand-written"),
                    language=str(meta.get("language") or ""), chunk_ids=[str(c) for c in chunk_ids],
                    generator=str(meta.get("generator") or ""))


def apply_edits(items: Sequence[TestItem], rows: Sequence[Dict[str, Any]]) -> List[TestItem]:
    """The items as edited in the Generate page's table (one row per item, in order): question,
    "reference answer", "expected docs" and "keywords" ("; "-separated); rows with "keep" unticked,
    or whose question was emptied, are dropped."""
    out = []
    for item, row in zip(items, rows):
        question = str(row.get("question") or "").strip()
        if row.get("keep", True) is False or not question:
            continue
        out.append(item.edited(question=question, ground_truth=str(row.get("reference answer") or "").strip(),
                               expected_docs=_split(row.get("expected docs")),
                               expected_answer_keywords=_split(row.get("keywords"))))
    return out


def _split(text: Any) -> List[str]:
    return [p.strip() for p in str(text or "").split(";") if p.strip()]


def read_testset(path: Any, name: str = "") -> List[TestItem]:
    """The items of a test-set file (any dataset ragmeter reads; answers are not needed)."""
    samples = load_dataset(path, name=name or None, needs_answer=False)
    return [item_from_sample(s, i) for i, s in enumerate(samples)]


def write_testset(items: Sequence[TestItem], path: str) -> None:
    """Write `items` as .jsonl, .csv (lists as JSON arrays, formulas neutralised) or .parquet, by the extension."""
    write_rows([i.to_record() for i in items], path, TESTSET, COLUMNS)


def testset_bytes(items: Sequence[TestItem], suffix: str = ".jsonl") -> bytes:
    """The file's bytes (the dashboard's download button uses them too)."""
    return rows_bytes([i.to_record() for i in items], file_type(suffix, TESTSET), COLUMNS)
