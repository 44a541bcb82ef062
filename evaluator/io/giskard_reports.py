"""Giskard RAGET (giskard 2.19): its test set, its report's `to_pandas()` and the folder its report's `save()` writes.

    testset      QATestset.save(): {"id", "question", "reference_answer", "reference_context",
                 "conversation_history", "metadata"} a line
    report       RAGReport.to_pandas() (saved with to_csv): the test set's columns, agent_answer, correctness,
                 correctness_reason and one column per extra metric
    save() folder  testset.jsonl, agent_answer.json ([{"message", "documents"}] in the test set's order),
                 metrics_results.json ({id: {"correctness", ...}}), report.html, report_details.json
id is the sample id, question the question, agent_answer (the folder's message) the answer, the folder's
documents the retrieved contexts, reference_answer the reference. reference_context is the passage giskard wrote
the question from, not what the agent retrieved: kept as metadata, never offered as contexts or reference.
Giskard's correctness (true/false) and its other metrics are kept as its grades, external_giskard_<metric>.
"""
from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional

from ..errors import DatasetError
from .experiments import RowReader, regrouped
from .grades import grades_of
from .paths import decoded
from .readings import Reading, Tally
from .sources import Records, Rows, Source, Where, folder_json

_SAVE_AGAIN = "save the report again with report.save()"

SIGN = ("question", "reference_answer", "reference_context")
QUIET = ("reference_context",)  # said in the note: never a look-alike of contexts or of the reference
_USED = SIGN + ("id", "agent_answer", "agent_documents", "correctness")
NOTE = ("Giskard RAGET {what}: id as sample_id, question, {answer}reference_answer as the reference; "
        "reference_context (the passage the question was written from, not what the agent retrieved) and "
        "{kept} kept as metadata{grades}.")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """A Giskard test set, report frame or report folder, else None."""
    if not all(k in by_key for k in SIGN) or not {"conversation_history", "metadata"} & set(by_key):
        return None
    kept = [c for k, c in by_key.items() if k not in _USED and not _metric(k, by_key)]
    metrics = [c for k, c in by_key.items() if _metric(k, by_key)]
    if "agent_answer" not in by_key:
        note = NOTE.format(what="test set", answer="", kept=", ".join(kept), grades="") + (
            " It holds no answers: give a target that answers each question.")
        return replace(regrouped("Giskard RAGET", "questions", note, _row(metrics)), quiet=QUIET)
    answer = "agent_answer as the answer, " + ("agent_documents as the contexts, " if "agent_documents" in by_key
                                               else "no contexts (this file holds no retrieved documents; the "
                                                    "report's save() folder does), ")
    grades = f"; its grades kept as external_giskard_<metric>: {', '.join(metrics)}" if metrics else ""
    return replace(regrouped("Giskard RAGET", "questions", NOTE.format(what="report", answer=answer,
                                                                       kept=", ".join(kept), grades=grades),
                             _row(metrics)), quiet=QUIET)


def _metric(key: str, by_key: Mapping[str, str]) -> bool:
    """A column of giskard's metrics_results: correctness or an extra metric (not its _reason text)."""
    return "agent_answer" in by_key and key not in SIGN + ("id", "agent_answer", "agent_documents",
                                                           "conversation_history", "metadata") \
        and not key.endswith("_reason")


def _row(metrics: List[str]) -> RowReader:
    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        rest = {k: decoded(v) for k, v in row.items() if k not in _USED and k not in metrics}
        return {**rest, "sample_id": row.get("id"), "question": row.get("question"),
                "answer": row.get("agent_answer"), "contexts": row.get("agent_documents"),
                "ground_truth": row.get("reference_answer"), "reference_context": row.get("reference_context"),
                **grades_of("giskard", ((m, row.get(m)) for m in metrics))}
    return read


# --- the report.save() folder (found by its files: sources.GISKARD_MARKERS) --------------------------

@contextmanager
def read_report_folder(src: Source) -> Iterator[Rows]:
    """The test set's rows, each with its agent answer, documents and metrics (by id), as the report joins them."""
    assert src.folder is not None
    answers = folder_json(src.folder / "agent_answer.json", src.name, list, _SAVE_AGAIN)
    metrics = folder_json(src.folder / "metrics_results.json", src.name, dict, _SAVE_AGAIN) \
        if (src.folder / "metrics_results.json").is_file() else {}
    yield Rows("utf-8", [], None, _joined(src, answers, metrics))


def _joined(src: Source, answers: List[Any], metrics: Dict[str, Any]) -> Records:
    assert src.folder is not None
    index = 0
    with (src.folder / "testset.jsonl").open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = Where(f"{src.name}/testset.jsonl", line=number)
            row = _object(line, where)
            if index >= len(answers):
                raise where.error(f"agent_answer.json holds {len(answers)} answers, fewer than the test set's "
                                  "questions; save the report again with report.save()")
            answer = answers[index] if isinstance(answers[index], dict) else {}
            index += 1
            scores = metrics.get(str(row.get("id")))
            yield where, {**row, "agent_answer": answer.get("message"), "agent_documents": answer.get("documents"),
                          **(scores if isinstance(scores, dict) else {})}


def _object(line: str, where: Where) -> Dict[str, Any]:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise where.error(f"is not JSON ({exc}); save the report again with report.save()") from None
    if not isinstance(row, dict):
        raise where.error("is not a JSON object; save the report again with report.save()")
    return row
