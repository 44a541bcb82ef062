"""LlamaIndex's LabelledRagDataset (llama-index-core 0.13, `LabelledRagDataset.save_json`): {"examples": [...]};
and QueryResponseDataset.save_json ({"queries": {id: q}, "responses": {id: reference}}, made rows by json_rows).

Each example is a question with its reference: `query`, `reference_answer`, `reference_contexts` (the passages
the question was written from), and who wrote each (`query_by`, `reference_answer_by`: a person or a model).
It holds no model answers, so it is a test set: score it with a target that answers each question
(`--target`; the dashboard's "call my pipeline"), which also gives the retrieved contexts.
    query                  the question
    reference_answer       the reference (ground_truth)
    reference_contexts     not read as retrieved contexts (they are the passages behind the question, not what a
                           pipeline retrieved); kept as metadata
    query_by, reference_answer_by   kept as metadata (JSON text)
The load note says all of this; the look-alike warning is not given for reference_contexts (the note says why).
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from .readings import Reading

SIGN = ("query", "reference_answer")
PAIRS = {"sample_id": "query_id", "question": "query", "ground_truth": "reference_response"}
PAIRS_NOTE = ("QueryResponseDataset: each query id's query as question and its response as ground_truth (the "
              "dataset's reference answers, generated with the questions; not a pipeline's answers). It holds no model "
              "answers: score it with a target that answers each question (--target URL or module:function, or "
              "'call my pipeline' in the dashboard).")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """The Reading of a LabelledRagDataset's examples (or a QueryResponseDataset's pairs), else None."""
    if {"query_id", "query", "reference_response"} <= set(by_key):  # rows json_rows made of a QueryResponseDataset
        return Reading("LlamaIndex", mapping={f: c for f, c in PAIRS.items() if f not in mapping}, notes=(PAIRS_NOTE,),
                       what="queries")
    if not all(k in by_key for k in SIGN) or {"answer", "response", "output"} & set(by_key):
        return None
    chosen = {"question": by_key["query"], "ground_truth": by_key["reference_answer"]}
    kept = [by_key[k] for k in ("reference_contexts", "query_by", "reference_answer_by") if k in by_key]
    other = [c for k, c in by_key.items() if k not in SIGN and c not in kept]
    note = ("LabelledRagDataset examples: query as question, reference_answer as ground_truth; kept as metadata, "
            f"not scored: {', '.join(kept) or 'none'} (reference_contexts are the passages the question was "
            "written from, not what a pipeline retrieved); other fields: " + (", ".join(other) or "none") + ". "
            "It holds no model answers: score it with a target that answers each question (--target URL or "
            "module:function, or 'call my pipeline' in the dashboard).")
    return Reading("LlamaIndex", mapping={f: c for f, c in chosen.items() if f not in mapping}, notes=(note,),
                   quiet=tuple(kept), what="examples")
