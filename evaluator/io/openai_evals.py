"""OpenAI Evals run output items (`client.evals.runs.output_items.list(...)`, one `OutputItemListResponse` a line,
or the API's list page {"object": "list", "data": [...]}): a migration door, since the Evals API shut down on
2026-11-30 and teams carry these exports elsewhere.

    {"id", "datasource_item_id", "datasource_item": {...the data source's row...}, "status",
     "results": [{"name", "type", "score", "passed"}], "sample": {"input": [messages], "output": [messages],
     "error": {"code", "message"}, "model", "usage", ...}, "eval_id", "run_id"}
The question is the data source row's question/input/query (else the last user message of the prompt), the answer
the sample's last output message, the contexts and the reference the row's contexts/documents and
reference/expected/ideal where the data source held them; each grader's score is kept as its grade
(external_openai_evals_<grader>). An item whose sample failed (error set, no output) is skipped by name.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from .experiments import CONTEXT_KEYS, contexts_in, pick, regrouped
from .grades import blank, grades_of
from .readings import Reading, Tally
from .sources import Where
from .traces import QUESTION_KEYS

REFERENCE: Tuple[str, ...] = ("reference", "expected", "expected_output", "ideal", "ground_truth", "correct_answer", "answer")
_READ = QUESTION_KEYS + REFERENCE + CONTEXT_KEYS  # the row's fields read as sample fields
NOTE = ("OpenAI Evals output items: datasource_item_id as sample_id, question from the data source row (else the "
        "prompt's last user message), answer from sample.output, contexts and reference from the data source row "
        "where it held them, each grader's score kept as its grade; kept as metadata: id, status, eval_id, run_id, "
        "the model and its usage, the data source row's other fields as item.<field>; not kept: sample.input (the prompt, which pasted the row) and results[].sample.")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """OpenAI Evals run output items, else None."""
    if not {"datasource_item", "sample", "results"} <= set(by_key):
        return None
    return regrouped("OpenAI Evals", "output items", NOTE, _item)


def _item(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    sample, data = _object(row.get("sample")), _object(row.get("datasource_item"))
    data = _object(data.get("item")) or data  # a row written as {"item": {...}, "sample": ...}
    answer = _last(sample.get("output"), "assistant")
    error = _object(sample.get("error"))
    if answer is None and not blank(error.get("message")):
        tally.skip(f"output item {row.get('id') or where.label()}",
                   f"the sample failed ({error.get('code') or 'error'}: {str(error['message'])[:80]})")
        return None
    results = [r for r in row.get("results") or [] if isinstance(r, dict) and r.get("name")]
    rest = {f"item.{k}": v for k, v in data.items() if k not in _READ}
    return {**rest, "sample_id": row.get("datasource_item_id", row.get("id")), "item_id": row.get("id"),
            "question": pick(data, QUESTION_KEYS) or _last(sample.get("input"), "user"), "answer": answer,
            "contexts": contexts_in(data), "ground_truth": pick(data, REFERENCE) if data else None,
            "status": row.get("status"), "eval_id": row.get("eval_id"), "run_id": row.get("run_id"),
            "model": sample.get("model"), "usage": sample.get("usage"),
            **grades_of("openai_evals", ((str(r["name"]), r.get("score")) for r in results))}


def _last(messages: Any, role: str) -> Optional[str]:
    """The content of the last message with this role, or None."""
    found: List[str] = [str(m["content"]) for m in messages or [] if isinstance(m, dict)
                        and m.get("role") == role and isinstance(m.get("content"), str)]
    return found[-1] if found else None


def _object(value: Any) -> Dict[str, Any]:
    return value if isinstance(value, dict) else {}
