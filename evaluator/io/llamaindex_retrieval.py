"""LlamaIndex RetrieverEvaluator results (llama-index-core 0.14): each `RetrievalEvalResult` saved with
`model_dump()`, in a JSON list or one a line.

    {"query", "expected_ids", "expected_texts", "retrieved_ids", "retrieved_texts", "mode",
     "metric_dict": {"mrr": {"score", "metadata"}, "hit_rate": {...}, ...}}
A retrieval run, like a TREC run: query is the question, retrieved_ids the ranked retrieval ids, retrieved_texts
the contexts, expected_ids the relevant documents (expected_docs); LlamaIndex's metric scores are kept as its grades
(external_llamaindex_<metric>). There are no answers (the answer is empty): score it with retrieval metrics,
`--metrics mrr,hit@3,ndcg@10`, which need only the ids.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from .experiments import regrouped
from .grades import grades_of
from .readings import Reading, Tally
from .sources import Records, Where

SIGN = ("query", "expected_ids", "retrieved_ids", "metric_dict")
NOTE = ("LlamaIndex RetrieverEvaluator results: query as question, retrieved_ids as the ranked retrieval ids, "
        "retrieved_texts as contexts, expected_ids as the relevant documents (expected_docs), metric_dict's scores "
        "kept as LlamaIndex's grades; expected_texts and mode kept as metadata. A retrieval run without answers: "
        "score it with retrieval metrics, e.g. --metrics mrr,hit@3,ndcg@10.")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """RetrieverEvaluator results, else None."""
    if not all(k in by_key for k in SIGN):
        return None
    reading = regrouped("LlamaIndex retrieval", "queries", NOTE, _result)
    assert reading.regroup is not None
    inner = reading.regroup

    def regroup(records: Records, tally: Tally) -> Records:  # no answer: the empty one a TREC run has
        for where, row in inner(records, tally):
            yield where, {**row, "answer": ""}
    return Reading(reading.tool, regroup=regroup, what=reading.what, notes=reading.notes)


def _result(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    metrics = row.get("metric_dict") if isinstance(row.get("metric_dict"), dict) else None
    scores = ((str(k), v.get("score") if isinstance(v, dict) else v) for k, v in (metrics or {}).items())
    return {"question": row.get("query"), "retrieval_ids": row.get("retrieved_ids"),
            "contexts": row.get("retrieved_texts"), "expected_docs": row.get("expected_ids"),
            "expected_texts": row.get("expected_texts"), "mode": row.get("mode"),
            **grades_of("llamaindex", scores)}
