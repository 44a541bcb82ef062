"""Lossless plain-dict form of results: what the history database, JSON export and reports store.

A record holds the sample's text and every metric's details (score, method, LLM and heuristic
parts, reasoning, raw reply), so a result read back from a record is the result that was written.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ..model import (
    METHOD_SKIPPED,
    METRICS,
    RULE_METRICS,
    EvalResult,
    EvalSample,
    MetricScore,
)

# Sample fields copied into a record, in record order.
SAMPLE_FIELDS = (
    "question",
    "answer",
    "contexts",
    "ground_truth",
    "category",
    "expected_answer_keywords",
    "expected_docs",
    "metadata",
)


def _metric_record(ms: MetricScore) -> Dict[str, Any]:
    data = ms.to_dict()
    if not ms.skipped:
        data["score"] = ms.score  # to_dict rounds for display; a record keeps the exact value
    return data


def sample_to_record(sample: Optional[EvalSample], index: Optional[int] = None) -> Dict[str, Any]:
    """A sample's fields as a JSON-ready dict (all None when there is no sample)."""
    record: Dict[str, Any] = {"index": index, "sample_id": sample.sample_id if sample else None}
    for name in SAMPLE_FIELDS:
        value = getattr(sample, name) if sample is not None else None
        record[name] = list(value) if isinstance(value, (list, tuple)) else value
    if sample is not None:
        record["metadata"] = dict(sample.metadata or {})
    return record


def result_to_record(result: EvalResult, index: Optional[int] = None) -> Dict[str, Any]:
    """One result as a JSON-ready dict: the sample's fields, `overall` and every metric's details.

    Sample fields are None when the result carries no sample.
    """
    record = sample_to_record(result.sample, index)
    record["sample_id"] = result.sample_id
    record["elapsed_sec"] = result.elapsed_sec
    record["overall"] = result.overall()
    record["metrics"] = {name: _metric_record(ms) for name, ms in result.metric_scores().items()}
    return record


def sample_from_record(record: Dict[str, Any]) -> Optional[EvalSample]:
    """The sample stored in a record, or None when the record has no sample text."""
    if record.get("question") is None and record.get("answer") is None:
        return None
    return EvalSample(
        question=record.get("question") or "",
        answer=record.get("answer") or "",
        contexts=list(record.get("contexts") or []),
        ground_truth=record.get("ground_truth"),
        sample_id=record.get("sample_id"),
        expected_answer_keywords=_optional_list(record.get("expected_answer_keywords")),
        expected_docs=_optional_list(record.get("expected_docs")),
        category=record.get("category"),
        metadata=dict(record.get("metadata") or {}),
    )


def _optional_list(value: Any) -> Optional[List[str]]:
    return None if value is None else list(value)


def _missing(name: str) -> MetricScore:
    return MetricScore(name, 0.0, "Not present in the stored record.", skipped=True, method=METHOD_SKIPPED)


def result_from_record(record: Dict[str, Any]) -> EvalResult:
    """The EvalResult (sample included) that `result_to_record` turned into `record`."""
    metrics = {name: MetricScore.from_dict(data) for name, data in (record.get("metrics") or {}).items()}
    core = {name: metrics.pop(name, None) or _missing(name) for name in METRICS}
    return EvalResult(
        sample_id=record.get("sample_id"),
        **core,
        elapsed_sec=float(record.get("elapsed_sec") or 0.0),
        extra=metrics,
        sample=sample_from_record(record),
    )


def flat_row(result: EvalResult) -> Dict[str, Any]:
    """One flat row for tables and CSV: identity, text, one score column per metric, methods, timing.

    Every judged and rule metric has a column (None when skipped or absent), so rows of one report
    always share the same keys.
    """
    sample = result.sample
    scores = result.scores()
    row: Dict[str, Any] = {
        "sample_id": result.sample_id,
        "category": sample.category if sample else None,
        "question": sample.question if sample else None,
        "answer": sample.answer if sample else None,
        "ground_truth": sample.ground_truth if sample else None,
        "n_contexts": len(sample.contexts) if sample else None,
    }
    for name in METRICS + RULE_METRICS:
        row[name] = scores.get(name)
    row["overall"] = result.overall()
    all_scores = result.metric_scores()
    for name in METRICS + RULE_METRICS:
        row[f"{name}_method"] = all_scores[name].method if name in all_scores else None
    row["elapsed_sec"] = round(result.elapsed_sec, 4)
    return row
