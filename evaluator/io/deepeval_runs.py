"""deepeval test runs: the `test_run_<time>.json` that `evaluate(...)` saves (DEEPEVAL_RESULTS_FOLDER, or
`.deepeval/.latest_test_run.json`), its "testCases" list read by json_rows.

    {"testCases": [{"name", "input", "actualOutput", "expectedOutput", "context", "retrievalContext",
                    "toolsCalled", "expectedTools", "metricsData": [{"name", "score", "success", "reason",
                    "evaluationModel", "error"}], "success", "order"}], "metricsScores": [...], ...}

input is the question, actualOutput the answer, retrievalContext the contexts (context, deepeval's ideal
context, stays metadata), expectedOutput the reference, name the sample_id; each metric's score is kept
as external_deepeval_<metric> (grades.py), its reason and verdict as metadata. A metric that errored
has no score and is named in the note. A test case without actualOutput (the app gave no answer) is
skipped by name; the others load.

deepeval 4 writes a retrieved passage that knows its source (`RetrievedContextData(context, source)`) as
"deepeval_source=PATH,deepeval_context=TEXT" in save_as files (deepeval/dataset/utils.py); `sourced_contexts`
reads it back as deepeval does: TEXT is the passage, PATH its document id (retrieval_ids), never passage text.
"""
from __future__ import annotations

import re
from typing import Any, Dict, Mapping, Optional

from .cells import pipe_split
from .experiments import regrouped
from .grades import grade_column, grades_of
from .readings import Reading, Tally
from .sources import Where

# deepeval's own pattern (deepeval/dataset/utils.py _RETRIEVED_CONTEXT_MARKER): the source ends at the first
# ",deepeval_context=", so a comma in the passage stays in the passage.
_MARKER = re.compile(r"^deepeval_source=(?P<source>.*?),deepeval_context=(?P<context>.*)$", re.DOTALL)

_USED = ("name", "input", "actualOutput", "expectedOutput", "retrievalContext", "toolsCalled", "expectedTools",
         "metricsData", "order")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    if "input" not in by_key or not {"actualoutput", "metricsdata", "retrievalcontext"} & set(by_key):
        return None
    return regrouped("deepeval test run", "test cases",
                     "deepeval test run: input is the question, actualOutput the answer, retrievalContext the "
                     "contexts, expectedOutput the reference; each metric's score kept as external_deepeval_<metric>.",
                     _case)


def _case(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    if "turns" in row and "input" not in row:
        tally.skip(f"conversational test case {row.get('name') or where.label()}",
                   "a test run's conversations are not read; save them with EvaluationDataset.save_as('jsonl') "
                   "and load that file")
        return None
    if row.get("actualOutput") is None and row.get("input") is not None:  # deepeval ran it without an answer
        tally.skip(f"test case {row.get('name') or where.label()}",
                   "no actualOutput: deepeval ran it without an answer")
        return None
    metrics = [m for m in row.get("metricsData") or [] if isinstance(m, dict) and m.get("name")]
    failed = [str(m["name"]) for m in metrics if m.get("score") is None]
    if failed:
        tally.count(f"with a metric that gave no score ({', '.join(sorted(set(failed)))})")
    out: Dict[str, Any] = {
        "sample_id": row.get("name"), "question": row.get("input"), "answer": row.get("actualOutput"),
        "contexts": sourced_contexts(row.get("retrievalContext"), where, "retrievalContext"), "ground_truth": row.get("expectedOutput"),
        "tool_calls": row.get("toolsCalled"), "expected_tools": row.get("expectedTools"),
        **grades_of("deepeval", ((str(m["name"]), m.get("score")) for m in metrics)),
    }
    for m in metrics:
        column = grade_column("deepeval", str(m["name"]))
        out[f"{column}_reason"] = m.get("reason") or m.get("error")
    rest = {k: v for k, v in row.items() if k not in _USED}
    return {**rest, **out}


def sourced_contexts(value: Any, where: Where, column: str) -> Any:
    """A deepeval retrieval_context cell: split on deepeval's "|" (a joined CSV/JSONL cell), each sourced passage
    as {"content": TEXT, "id": PATH} (its source becomes a retrieval id); plain passages and other values unchanged."""
    items = pipe_split(value, where, column)
    if isinstance(items, str) and _MARKER.match(items):  # one passage, nothing joined
        items = [items]
    if not isinstance(items, list):
        return items
    return [_sourced(item) for item in items]


def _sourced(item: Any) -> Any:
    match = _MARKER.match(item) if isinstance(item, str) else None
    if match is None:
        return item
    return {"content": match.group("context"), "id": match.group("source").strip()}


def has_marker(value: Any) -> bool:
    """Whether a raw retrieval_context cell holds a sourced passage (for the load note)."""
    items = value if isinstance(value, list) else [value]
    return any(isinstance(v, str) and "deepeval_source=" in v and ",deepeval_context=" in v for v in items)
