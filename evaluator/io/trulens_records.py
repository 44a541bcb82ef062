"""TruLens records: `TruSession.get_records_and_feedback()[0]` saved with pandas (CSV, JSON records), and the
`trulens_records` table of its database exported as it is stored.

    record_id, app_name, app_version, app_id, input, output, record_json, tags, ts, latency, total_tokens, ...,
    and per feedback function F: a column F (its score, 0-1) and F_calls ([{"args": {...}, "ret": score}])
record_id is the sample id; input the question and output the answer (JSON-quoted in the table export);
the contexts are the passages the context-relevance feedback scored (each call's args.context, TruLens's
RAG triad), else what an instrumented retriever returned (record_json's calls of a method named retrieve...);
each feedback score is kept as TruLens's grade, external_trulens_<feedback> (grades.py). The load note
names what was read, what is kept as metadata and what is left out (copies of the record).
The CSV writes nested cells as Python literals ({'args': ...}), the JSON as JSON: both are read.
"""
from __future__ import annotations

import json
from typing import Any, Dict, List, Mapping, Optional

from .cells import json_unquoted
from .experiments import RowReader, regrouped
from .grades import blank, grades_of
from .literals import parse_literal
from .readings import Reading, Tally
from .sources import Where

_CONTEXT_ARGS = ("context", "contexts", "retrieved_context")  # the RAG triad's context relevance: (question, context)
_COPIES = ("app_json", "record_json", "cost_json", "perf_json", "type", "input", "output", "record_id")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """TruLens records (with or without feedback columns), else None."""
    if "record_id" not in by_key or not {"record_json", "app_id"} & set(by_key):
        return None
    feedback = [c for k, c in by_key.items() if f"{k}_calls" in by_key]
    left_out = [c for k, c in by_key.items() if k in _COPIES[:5] or k.endswith("_calls")
                or k.endswith(" feedback cost in usd")]
    kept = [c for k, c in by_key.items() if c not in feedback and c not in left_out and k not in _COPIES]
    note = ("TruLens records: record_id is the sample id, input the question, output the answer; contexts from "
            "the passages the context-relevance feedback scored, else from the retriever calls in record_json; "
            f"feedback scores kept as TruLens's grades: {', '.join(feedback) or 'none'}. Kept as metadata: "
            f"{', '.join(kept) or 'none'}. Not kept: {', '.join(left_out) or 'none'} (the record's own copies "
            "and the feedback calls, read for the contexts).")
    return regrouped("TruLens", "records", note, _reader(feedback, kept))


def _reader(feedback: List[str], kept: List[str]) -> RowReader:
    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        record = _nested(row.get("record_json"))
        error = record.get("main_error") if isinstance(record, dict) else None
        if blank(row.get("output")) and not blank(error):
            tally.skip(f"record {row.get('record_id') or where.label()}", f"the app failed: {str(error)[:80]}")
            return None
        contexts = _scored_contexts(row, feedback) or _retrieved(record)
        if contexts:
            tally.count("with contexts")
        return {**{c: row.get(c) for c in kept}, "sample_id": row.get("record_id"),
                "question": json_unquoted(row.get("input"), where, "input"),
                "answer": json_unquoted(row.get("output"), where, "output"), "contexts": contexts or None,
                **grades_of("trulens", ((name, row.get(name)) for name in feedback))}
    return read


def _nested(value: Any) -> Any:
    """A nested cell: JSON (the JSON export, the table) or a Python literal (pandas' CSV of the records frame)."""
    if not isinstance(value, str) or value.strip()[:1] not in ("{", "["):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return parse_literal(value.strip())


def _scored_contexts(row: Mapping[str, Any], feedback: List[str]) -> List[str]:
    """Each passage a feedback function was called on (args.context), once, in the order of the calls."""
    found: Dict[str, None] = {}
    for name in feedback:
        calls = _nested(row.get(f"{name}_calls"))
        for call in calls if isinstance(calls, list) else []:
            args = call.get("args") if isinstance(call, dict) else None
            value = next((args[k] for k in _CONTEXT_ARGS if isinstance(args, dict) and k in args), None)
            found.update((str(v), None) for v in (value if isinstance(value, list) else [value]) if not blank(v))
    return list(found)


def _retrieved(record: Any) -> List[str]:
    """What instrumented retriever methods (named retrieve...) returned, from record_json's calls."""
    calls = record.get("calls") if isinstance(record, dict) else None
    found: Dict[str, None] = {}
    for call in calls if isinstance(calls, list) else []:
        stack = call.get("stack") if isinstance(call, dict) else None
        method = (stack[-1].get("method") or {}).get("name", "") if isinstance(stack, list) and stack else ""
        rets = call.get("rets")
        if "retriev" in str(method).casefold() and isinstance(rets, list):
            found.update((str(r), None) for r in rets if isinstance(r, str) and r.strip())
    return list(found)
