"""Lossless plain-dict form of results: what the history database, JSON export and reports store.

A record holds the sample's text and every metric's details (score, method, LLM and heuristic
parts, reasoning, raw reply), so a result read back from a record is the result that was written.

The compact record (`result_to_compact_record`) is the history's form: no sample text, since the
history keeps each sample once, and no metric field that holds its default value.

A conversation's row has the same records. Its sample record's `conversation` key holds every turn
(`Conversation.to_dict()`: a replay's replies, errors and turns not asked), and its question is the
first user turn, its answer the last reply (the turns hold the rest, so SQL over `samples` still reads
it). Its result record's `turns` holds each scored assistant turn's compact record, with the turn's
index (`turn`) and the index of the user turn it answers (`user_turn`).
"""
from __future__ import annotations

import json
from dataclasses import MISSING, fields, replace
from typing import Any, Dict, List, Optional, Sequence

from ..conversation import USER, Conversation
from ..model import METRICS, RULE_METRICS, EvalResult, EvalSample, MetricScore, TurnResult

CONVERSATION = "conversation"  # the sample record's key holding a conversation's turns

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
    "tool_calls",
    "expected_tools",
    "target_latency_ms",
    "target_error",
    "no_contexts_reason",
    "retrieval_ids",
    "relevance",
    "no_answer_reason",
)


def _metric_record(ms: MetricScore) -> Dict[str, Any]:
    data = ms.to_dict()
    if not ms.skipped:
        data["score"] = ms.score  # to_dict rounds for display; a record keeps the exact value
    return data


def sample_to_record(sample: Optional[EvalSample], index: Optional[int] = None) -> Dict[str, Any]:
    """A sample's fields as a JSON-ready dict (all None when there is no sample); a conversation's turns
    under `conversation` (see the module docstring)."""
    conv = sample.conversation if sample is not None else None
    if sample is not None and conv is not None:
        first = next((t.content for t in conv.turns if t.role == USER), "")
        light = sample_to_record(replace(sample, question=first, contexts=[], conversation=None), index)
        return dict(light, **{CONVERSATION: conv.to_dict()})
    record: Dict[str, Any] = {"index": index, "sample_id": sample.sample_id if sample else None}
    for name in SAMPLE_FIELDS:
        value = getattr(sample, name) if sample is not None else None
        record[name] = list(value) if isinstance(value, (list, tuple)) else value
    if record["tool_calls"] is None:
        record["tool_calls"] = []  # the output contract: a list, empty when none
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
    record["overall"] = result.overall_score()
    record["metrics"] = {name: _metric_record(ms) for name, ms in result.metric_scores().items()}
    if result.conversation is not None:
        record["turns"] = _turn_records(result)
    return record


def _turn_records(result: EvalResult) -> List[Dict[str, Any]]:
    return [dict(result_to_compact_record(t.result), turn=t.index, user_turn=t.user_index) for t in result.turns]


def sample_from_record(record: Dict[str, Any]) -> Optional[EvalSample]:
    """The sample stored in a record, or None when the record has no sample text."""
    if isinstance(record.get(CONVERSATION), dict):
        return EvalSample.from_conversation(Conversation.from_dict(record[CONVERSATION]))
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
        tool_calls=[dict(c) for c in record.get("tool_calls") or []],
        expected_tools=_optional_list(record.get("expected_tools")),
        target_latency_ms=record.get("target_latency_ms"),
        target_error=record.get("target_error"),
        no_contexts_reason=record.get("no_contexts_reason"),
        retrieval_ids=_optional_list(record.get("retrieval_ids")),
        relevance=dict(record["relevance"]) if isinstance(record.get("relevance"), dict) else None,
        no_answer_reason=record.get("no_answer_reason"),
    )


def _optional_list(value: Any) -> Optional[List[str]]:
    return None if value is None else list(value)


def result_from_record(record: Dict[str, Any]) -> EvalResult:
    """The EvalResult (sample included) that `result_to_record` turned into `record`."""
    metrics = {name: MetricScore.from_dict(data) for name, data in (record.get("metrics") or {}).items()}
    sample = sample_from_record(record)
    return EvalResult(record.get("sample_id"), elapsed_sec=float(record.get("elapsed_sec") or 0.0),
                      sample=sample, scores=metrics, turns=_turns_from(record.get("turns") or [], sample, "auto"))


def _metric_defaults() -> Dict[str, Any]:
    """MetricScore's optional fields and their defaults (a compact record leaves these out)."""
    defaults = {}
    for f in fields(MetricScore):
        if f.default is not MISSING:
            defaults[f.name] = f.default
        elif f.default_factory is not MISSING:
            defaults[f.name] = f.default_factory()
    return defaults


_METRIC_DEFAULTS = _metric_defaults()
# MetricScore's fields in declaration order, less its name (a compact record's key).
_METRIC_FIELDS = [f.name for f in fields(MetricScore) if f.name != "name"]


def _compact_metric(ms: MetricScore) -> Dict[str, Any]:
    data = {}
    for name in _METRIC_FIELDS:
        value = getattr(ms, name)
        if name not in _METRIC_DEFAULTS or value != _METRIC_DEFAULTS[name]:
            data[name] = list(value) if isinstance(value, list) else value
    return data


def result_to_compact_record(result: EvalResult, *, with_sample: bool = False) -> Dict[str, Any]:
    """One result as a small JSON-ready dict: sample id, timing and every metric's non-default fields.

    The sample is left out: `result_from_compact_record` gets it from the caller (the history keeps
    each sample once). `with_sample=True` embeds it (None when the result has none) for a result
    whose sample is not the one stored with its run.
    """
    record: Dict[str, Any] = {
        "sample_id": result.sample_id,
        "elapsed_sec": result.elapsed_sec,
        "metrics": {name: _compact_metric(ms) for name, ms in result.metric_scores().items()},
    }
    if with_sample:
        record["sample"] = None if result.sample is None else sample_to_record(result.sample)
    if result.conversation is not None:
        record["turns"] = _turn_records(result)
    return record


def result_from_compact_record(record: Dict[str, Any], sample: Optional[EvalSample], *,
                               language: str = "auto") -> EvalResult:
    """The EvalResult that `result_to_compact_record` wrote, with `sample` unless the record embeds one;
    a conversation's turn samples rebuilt in `language` (the run's), as its judge saw them."""
    if "sample" in record:
        sample = None if record["sample"] is None else sample_from_record(record["sample"])
    metrics = {
        name: MetricScore(name=name, **{k: v for k, v in data.items() if k in _METRIC_FIELDS})
        for name, data in (record.get("metrics") or {}).items()
    }
    return EvalResult(record.get("sample_id"), elapsed_sec=float(record.get("elapsed_sec") or 0.0),
                      sample=sample, scores=metrics, turns=_turns_from(record.get("turns") or [], sample, language))


def _turns_from(records: List[Dict[str, Any]], sample: Optional[EvalSample], language: str) -> List[TurnResult]:
    """A conversation's turn results, each with its turn sample rebuilt from the conversation."""
    if sample is None or sample.conversation is None:
        return []
    replies = [ex for ex in sample.exchanges() if ex.reply is not None]
    by_reply = {ex.reply_index: (n, ex) for n, ex in enumerate(replies, 1)}
    turns = []
    for data in records:
        number, ex = by_reply.get(data.get("turn"), (0, None))
        asked = None if ex is None else sample.turn_sample(ex, number, language)
        turns.append(TurnResult(int(data.get("turn") or 0), int(data.get("user_turn") or 0),
                                result_from_compact_record({k: v for k, v in data.items() if k != "sample"}, asked)))
    return turns


def column_names(names: Sequence[str] = ()) -> List[str]:
    """The metric columns of a table: the seed's five and the rule-based ones always (so tables of
    any run share them), then every other metric in `names` (rubrics, plugins) in their order."""
    fixed = list(METRICS + RULE_METRICS)
    return fixed + [n for n in names if n not in fixed]


def flat_row(result: EvalResult, names: Optional[Sequence[str]] = None) -> Dict[str, Any]:
    """One flat row for tables and CSV: identity, text, one score column per metric, methods, timing.

    The metric columns are `column_names(names)`, `names` defaulting to this result's metrics;
    pass the report's `metric_names()` so rows of one report always share the same keys. A
    metric the result lacks (or that was skipped) is None.
    """
    sample = result.sample
    columns = column_names(list(result.scores) if names is None else names)
    scores = result.score_values()
    row: Dict[str, Any] = {
        "sample_id": result.sample_id,
        "category": sample.category if sample else None,
        "question": sample.question if sample else None,
        "answer": sample.answer if sample else None,
        "ground_truth": sample.ground_truth if sample else None,
        "n_contexts": len(sample.contexts) if sample else None,
        # Lists as JSON text, so a CSV cell holds them losslessly.
        "contexts": json.dumps(sample.contexts if sample else [], ensure_ascii=False),
        "tool_calls": json.dumps(sample.tool_calls if sample else [], ensure_ascii=False, default=str),
        "target_latency_ms": sample.target_latency_ms if sample else None,
        "target_error": sample.target_error if sample else None,
    }
    for name in columns:
        row[name] = scores.get(name)
    row["overall"] = result.overall_score()
    for name in columns:
        row[f"{name}_method"] = result.scores[name].method if name in result.scores else None
    row["elapsed_sec"] = round(result.elapsed_sec, 4)
    return row
