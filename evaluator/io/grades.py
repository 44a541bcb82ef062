"""Other tools' grades: the scores a file's own evaluator gave, kept beside ours, never mistaken for them.

A grade another tool computed (deepeval's metricsData, promptfoo's assertions, inspect_ai's scorers,
ragas' score columns, LangSmith feedback, MLflow assessments) becomes the column
`external_<tool>_<metric>`, e.g. `external_deepeval_faithfulness`; a grade a person gave (a Langfuse
ANNOTATION score, an MLflow HUMAN assessment) becomes `human_<metric>`, a label like any other.
The loader stores the external ones, as numbers, in `sample.metadata["external_scores"]`, lists them in
its note, and `--labels` (analysis/agreement.py) compares each with our metric of the same meaning
(`measures`): "faithfulness vs deepeval".
"""
from __future__ import annotations

import math
import re
from typing import Any, Dict, Iterable, List, Optional, Tuple
from .cells import decimal_point

EXTERNAL_PREFIX = "external_"
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness",
           "keyword_coverage", "expected_doc_recall", "tool_call_recall", "tool_call_precision", "task_completion")
# Other tools' metric names (slugged) -> the ragmeter metric that measures the same thing.
SYNONYMS: Dict[str, str] = {
    "correctness": "answer_correctness", "correct": "answer_correctness", "factuality": "answer_correctness",
    "qa": "answer_correctness", "cot_qa": "answer_correctness", "similar": "answer_correctness",
    "match": "answer_correctness", "includes": "answer_correctness", "model_graded_qa": "answer_correctness",
    "model_graded_fact": "answer_correctness", "exact": "answer_correctness",
    "groundedness": "faithfulness", "retrieval_groundedness": "faithfulness", "context_faithfulness": "faithfulness",
    "relevance": "answer_relevancy", "relevance_to_query": "answer_relevancy", "answer_relevance": "answer_relevancy",
    "retrieval_relevance": "context_precision", "context_relevance": "context_precision",
    "contextual_precision": "context_precision", "contextual_recall": "context_recall",
    "retrieval_sufficiency": "context_recall", "llm_context_precision_with_reference": "context_precision",
    "llm_context_precision_without_reference": "context_precision", "llm_context_recall": "context_recall",
    "factual_correctness": "answer_correctness", "response_relevancy": "answer_relevancy",
}


def slug(name: str) -> str:
    """A name as a column part: "Answer Relevancy" -> "answer_relevancy", "context-faithfulness" -> ..."""
    return re.sub(r"[^0-9a-z]+", "_", name.strip().casefold()).strip("_")


def measures(name: str) -> Optional[str]:
    """The ragmeter metric a tool's metric name measures, or None ("Answer Relevancy" -> answer_relevancy)."""
    key = slug(name)
    for suffix in ("_metric", "_score", "_scorer"):
        key = key[:-len(suffix)] if key.endswith(suffix) else key
    parts = key.split("_")
    for end in range(len(parts), 0, -1):  # "factual_correctness_mode_f1" (ragas' parameters) -> factual_correctness
        found = "_".join(parts[:end])
        if found in METRICS or found in SYNONYMS:
            return found if found in METRICS else SYNONYMS[found]
    return None


def grade_column(tool: str, name: str) -> str:
    """external_<tool>_<metric>: "promptfoo", "context-faithfulness" -> external_promptfoo_context_faithfulness."""
    return f"{EXTERNAL_PREFIX}{slug(tool)}_{slug(name)}"


def is_external(column: str) -> bool:
    return column.strip().casefold().startswith(EXTERNAL_PREFIX) and len(column.strip()) > len(EXTERNAL_PREFIX)


def grade_value(value: Any) -> Any:
    """A grade as a number: True/"yes"/"pass"/"C" (inspect's CORRECT) -> 1.0; text that is no number stays text."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in ("yes", "pass", "true", "c", "correct"):
            return 1.0
        if word in ("no", "fail", "false", "i", "incorrect"):
            return 0.0
        if word == "p":  # inspect_ai's PARTIAL
            return 0.5
        try:
            return float(word)
        except ValueError:
            return value
    return value


def blank(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value)) or \
        (isinstance(value, str) and not value.strip())


def grades_of(tool: str, pairs: Iterable[Tuple[str, Any]], human: bool = False) -> Dict[str, Any]:
    """Named grades as columns: external_<tool>_<name>, or human_<metric> for a person's label of our metric.

    A human grade of no metric of ours, or outside a label's 0–5 range, stays external (a label must not
    fail the file)."""
    out: Dict[str, Any] = {}
    for name, raw in pairs:
        value = grade_value(raw)
        if not name or blank(value):
            continue
        metric = measures(name) if human else None
        if metric and isinstance(value, (int, float)) and 0 <= value <= 5:
            out[f"human_{metric}"] = value
        else:
            out[grade_column(tool, name)] = value
    return out


def external_number(value: Any) -> Optional[float]:
    """An external_ cell as a number, or None when it is blank or not a number (kept as text then)."""
    value = grade_value(decimal_point(value.strip()) if isinstance(value, str) else value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and not math.isnan(float(value)):
        return float(value)
    return None


def grades_note(columns: Iterable[str]) -> List[str]:
    """The load note that lists other tools' grades and what --labels compares them with."""
    names = sorted(set(columns))
    if not names:
        return []
    paired = [f"{c} (vs {measures(c[len(EXTERNAL_PREFIX):].split('_', 1)[-1])})" if _pairs(c) else c for c in names]
    return [f"Other tools' grades kept beside ours (not used as our scores; --labels compares them): "
            f"{', '.join(paired)}."]


def _pairs(column: str) -> bool:
    return measures(column[len(EXTERNAL_PREFIX):].split("_", 1)[-1]) is not None
