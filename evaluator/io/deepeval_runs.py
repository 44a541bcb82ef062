"""deepeval test runs: the `test_run_<time>.json` that `evaluate(...)` saves (DEEPEVAL_RESULTS_FOLDER, or
`.deepeval/.latest_test_run.json`), its "testCases" list read by json_rows.

    {"testCases": [{"name", "input", "actualOutput", "expectedOutput", "context", "retrievalContext",
                    "toolsCalled", "expectedTools", "metricsData": [{"name", "score", "success", "reason",
                    "evaluationModel", "error"}], "success", "order"}], "metricsScores": [...], ...}

input is the question, actualOutput the answer, retrievalContext the contexts (context, deepeval's ideal
context, stays metadata), expectedOutput the reference, name the sample_id; each metric's score is kept
as external_deepeval_<metric> (grades.py), its reason and verdict as metadata. A metric that errored
has no score and is named in the note.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from .experiments import regrouped
from .grades import grade_column, grades_of
from .readings import Reading, Tally
from .sources import Where

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
    metrics = [m for m in row.get("metricsData") or [] if isinstance(m, dict) and m.get("name")]
    failed = [str(m["name"]) for m in metrics if m.get("score") is None]
    if failed:
        tally.count(f"with a metric that gave no score ({', '.join(sorted(set(failed)))})")
    out: Dict[str, Any] = {
        "sample_id": row.get("name"), "question": row.get("input"), "answer": row.get("actualOutput"),
        "contexts": row.get("retrievalContext"), "ground_truth": row.get("expectedOutput"),
        "tool_calls": row.get("toolsCalled"), "expected_tools": row.get("expectedTools"),
        **grades_of("deepeval", ((str(m["name"]), m.get("score")) for m in metrics)),
    }
    for m in metrics:
        column = grade_column("deepeval", str(m["name"]))
        out[f"{column}_reason"] = m.get("reason") or m.get("error")
    rest = {k: v for k, v in row.items() if k not in _USED}
    return {**rest, **out}
