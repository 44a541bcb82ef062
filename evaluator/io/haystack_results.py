"""Haystack's EvaluationRunResult.detailed_report() (haystack-ai 3.4): its CSV, or its DataFrame saved by pandas.

The report holds the run's inputs, one column each under the names the user gave them, and one number column
per evaluator. Haystack's documentation names the inputs `question`, `contexts`, `answer` (the ground-truth
answer) and `predicted_answer` (the pipeline's), with an optional `query_id`; some pipelines write
`ground_truth_answer(s)` instead of `answer`. Read plainly, `answer` would be scored as the model's answer and
the pipeline's reply ignored, so this reading is recognised by `predicted_answer` beside a question:
    predicted_answer                       the answer
    answer | ground_truth_answer(s)        the reference (ground_truth)
    contexts | retrieved_documents         the contexts (Python-style lists, as csv.writer writes them)
    query_id                               the sample id
    each other number column               Haystack's score, kept as external_haystack_<evaluator> (grades.py)
The load note lists every column used and every one left unread (no silent drop).
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional

from .grades import external_number, grade_column, is_external
from .readings import Reading, Tally
from .sources import Records

REFERENCES = ("answer", "ground_truth_answer", "ground_truth_answers")
CONTEXTS = ("contexts", "retrieved_documents", "documents")
INPUTS = ("question", "query", "predicted_answer", *REFERENCES, *CONTEXTS, "query_id")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """The Reading of a Haystack detailed report (by_key: normalised name -> column), else None."""
    if "predicted_answer" not in by_key or not {"question", "query"} & set(by_key):
        return None
    reference = next((by_key[k] for k in REFERENCES if k in by_key), None)
    contexts = next((by_key[k] for k in CONTEXTS if k in by_key), None)
    chosen: Dict[str, Optional[str]] = {"question": by_key.get("question") or by_key["query"],
                                        "answer": by_key["predicted_answer"], "ground_truth": reference}
    if contexts:
        chosen["contexts"] = contexts
    if "query_id" in by_key:
        chosen["sample_id"] = by_key["query_id"]
    scores = [c for k, c in by_key.items() if k not in INPUTS and not is_external(c)
              and external_number(first.get(c)) is not None]
    unread = [c for k, c in by_key.items() if k not in INPUTS and c not in scores]
    return Reading("Haystack evaluation report", mapping={f: c for f, c in chosen.items() if f not in mapping},
                   regroup=_renamer(scores) if scores else None, notes=(_note(chosen, scores, unread),))


def _renamer(scores: List[str]) -> Any:
    def regroup(records: Records, tally: Tally) -> Records:
        for where, row in records:
            yield where, {(grade_column("haystack", k) if k in scores else k): v for k, v in row.items()}
    return regroup


def _note(chosen: Mapping[str, Optional[str]], scores: List[str], unread: List[str]) -> str:
    used = ", ".join(f"{column} as {field}" for field, column in chosen.items() if column)
    text = f"EvaluationRunResult.detailed_report(): {used}"
    if scores:
        text += f"; Haystack's scores ({', '.join(scores)}) kept as external_haystack_<evaluator>"
    text += "; not read: " + (", ".join(unread) if unread else "none") + "."
    return text
