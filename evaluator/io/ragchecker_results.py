"""RAGChecker's input and output JSON (ragchecker 0.1.9, `RAGResults.to_json()`): {"results": [...], "metrics": {...}}.

Each result: query_id, query, gt_answer, response, retrieved_context ([{"doc_id", "text"}]); the output adds
response_claims, gt_answer_claims, answer2response, response2answer, retrieved2response, retrieved2answer and the
result's metrics (0-1: precision, recall, f1, claim_recall, context_precision, faithfulness, hallucination, ...).
query_id is the sample id, query the question, response the answer, gt_answer the reference, the passages' text
the contexts and their doc_id the retrieval ids; RAGChecker's metrics are kept as its grades
(external_ragchecker_<metric>); the claims and their checks are kept as metadata. The file's overall "metrics"
(percentages over all results) are not rows and are not read: ragmeter computes its own means.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List, Mapping, Optional

from .experiments import regrouped
from .grades import grades_of
from .readings import Reading, Tally
from .sources import Where

SIGN = ("query_id", "query", "gt_answer", "response")
_USED = SIGN + ("retrieved_context", "metrics")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """A RAGChecker input or output file's results, else None."""
    if not all(k in by_key for k in SIGN):
        return None
    kept = [c for k, c in by_key.items() if k not in _USED]
    graded = bool(first.get(by_key.get("metrics", "")))
    return replace(regrouped("RAGChecker", "results", (
        "RAGChecker results: query_id as sample_id, query the question, response the answer, gt_answer the "
        "reference, retrieved_context's text the contexts and its doc_id the retrieval ids; "
        + ("each result's metrics kept as RAGChecker's grades; " if graded else "")
        + f"kept as metadata: {', '.join(kept) or 'none'}. The file's overall metrics are not read."), _result),
                   quiet=tuple(kept))  # the claims and their checks, said in the note: no look-alike warning


def _result(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    docs = [d for d in row.get("retrieved_context") or [] if isinstance(d, dict)]
    metrics = row.get("metrics")
    metrics = metrics if isinstance(metrics, dict) else {}
    return {**{k: v for k, v in row.items() if k not in _USED}, "sample_id": row.get("query_id"),
            "question": row.get("query"), "answer": row.get("response"), "ground_truth": row.get("gt_answer"),
            "contexts": [str(d.get("text") or "") for d in docs] or None, "retrieval_ids": _ids(docs),
            **grades_of("ragchecker", metrics.items())}


def _ids(docs: List[Dict[str, Any]]) -> Optional[List[str]]:
    ids = [str(d.get("doc_id") or "") for d in docs]
    return ids if any(ids) else None
