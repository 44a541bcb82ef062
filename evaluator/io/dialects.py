"""Column names: the fields a sample has and the names each tool gives them.

Matched case-insensitively, surrounding spaces ignored; the first alias found wins.

Files written by other tools also need their cells read the way that tool wrote them; `detect_reading`
recognises the tool from its column names (and, for Phoenix, the first row) and returns a `Reading`:
    deepeval   input, actual_output, expected_output, retrieval_context (save_as csv/jsonl, goldens.csv):
               retrieval_context and context join their list with "|"; split back into a list, except
               a cell holding a Markdown table (its pipes are the table's). The preview says each split.
    Phoenix    input, output, reference: output is the answer; reference holds the retrieved documents
               when its cells are lists of passages (then contexts), else it is read as the reference.
    ragas 0.0  question, answer, contexts, ground_truths (a list): the first answer is the reference.
    TruLens    record_id, input, output, record_json/app_id, feedback columns: trulens_records.py.
    ragas      EvaluationResult.to_pandas(): user_input, response, retrieved_contexts, reference and one
               number column per metric; those become external_ragas_<metric> (grades.py).
What was recognised and how it is read is said in `Reading.notes`, for the dashboard's preview.
Traces (traces.py) and other tools' experiments and datasets (experiments.py) regroup whole rows;
DETECTORS at the end lists every format in the order they are tried (readings.py has the contract).
"""
from __future__ import annotations

import re
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from . import (deepeval_runs, dspy_results, experiments, giskard_reports, haystack_results, inspect_logs,
               langfuse_traces, llamaindex_datasets, llamaindex_retrieval, openai_evals, phoenix_datasets, ragchecker_results, traces,
               trulens_records)
from .cells import contexts_cell, first_item, json_unquoted, list_cell, markdown_table, pipe_joined, pipe_split
from .grades import external_number, grade_column, is_external
from .readings import Detector, Reading, Tally
from .sources import Records, Where

FIELDS: Tuple[str, ...] = (
    "question",
    "answer",
    "contexts",
    "ground_truth",
    "sample_id",
    "expected_answer_keywords",
    "expected_docs",
    "category",
    "tool_calls",
    "expected_tools",
    "retrieval_ids",
    "relevance",
)
REQUIRED: Tuple[str, ...] = ("question", "answer")
ALIASES: Dict[str, Tuple[str, ...]] = {
    # After each field's tool names come the headers people type in a spreadsheet ("Model answer",
    # "Retrieved context(s)"); see `squash` for how spacing and punctuation compare.
    "question": ("question", "user_input", "input", "query", "questions", "user_question", "user_query"),
    "answer": ("answer", "response", "actual_output", "output", "model_answer", "generated_answer",
               "model_response", "llm_answer", "bot_answer", "assistant_answer", "rag_answer"),
    "contexts": ("contexts", "retrieved_contexts", "retrieval_context", "context", "retrieved_context",
                 "retrieved_passages", "retrieved_documents", "retrieved_docs", "passages", "retrieved_chunks",
                 # what people head the column in a Google Sheet or Excel: "Source chunks", "Sources"
                 "source_chunks", "sources", "source_passages", "source_documents", "chunks"),
    "ground_truth": ("ground_truth", "reference", "expected_output", "ground_truths", "expected_answer",
                     "reference_answer", "gold_answer", "correct_answer", "ideal_answer", "ground_truth_answer",
                     "expected_response", "target_answer"),
    "sample_id": ("sample_id", "id", "question_id", "qid", "row_id", "example_id"),
    "expected_answer_keywords": ("expected_answer_keywords", "keywords"),
    "expected_docs": ("expected_docs",),
    "category": ("category",),
    "tool_calls": ("tool_calls", "tools_called"),  # tools_called: deepeval's name
    "expected_tools": ("expected_tools",),
    "retrieval_ids": ("retrieval_ids", "retrieved_ids", "retrieved_doc_ids", "doc_ids"),
    "relevance": ("relevance", "relevance_grades", "qrels"),
}
HUMAN_PREFIX = "human_"


def norm(column: str) -> str:
    """How column names are compared: trimmed and case-folded ("µ" and "Μ" are the same letter)."""
    return column.strip().casefold()


def squash(column: str) -> str:
    """How headers compare with the aliases: `norm`, "(s)" as "s", and every run of spaces, punctuation and
    underscores as one "_" ("Retrieved context(s)" -> "retrieved_contexts", "Model-Answer" -> "model_answer")."""
    return re.sub(r"[\W_]+", "_", norm(column).replace("(s)", "s")).strip("_")


def is_label(column: str) -> bool:
    """Whether a column holds human labels: human_<metric>."""
    key = norm(column)
    return key.startswith(HUMAN_PREFIX) and len(key) > len(HUMAN_PREFIX)


def detect_mapping(columns: Iterable[str]) -> Dict[str, str]:
    """EvalSample field -> column name, from the known aliases (case, spacing and punctuation ignored: `squash`)."""
    by_key: Dict[str, str] = {}
    columns = list(columns)
    for col in columns:  # an exact name first, so "Question" beats "question?" when both are there
        by_key.setdefault(norm(str(col)), col)
    for col in columns:
        by_key.setdefault(squash(str(col)), col)
    mapping = {}
    for name, aliases in ALIASES.items():
        found = next((by_key[a] for a in aliases if a in by_key), None)
        if found is not None:
            mapping[name] = found
    return mapping


def check_duplicates(columns: Iterable[str], where: Where) -> None:
    """Refuse two columns whose names compare equal (see `norm`)."""
    seen: Dict[str, str] = {}
    for col in columns:
        key = norm(col)
        if key in seen:
            raise where.error(f"the column '{col}' appears twice (also as '{seen[key]}'); "
                              "rename or delete one of them", column=col)
        seen[key] = col


# --- files written by other tools ---------------------------------------------------------------

def detect_reading(columns: Iterable[str], first: Optional[Mapping[str, Any]],
                   mapping: Mapping[str, Optional[str]]) -> Reading:
    """The Reading for a file with these columns and first row; `mapping` (the caller's) wins over it."""
    by_key = {norm(str(c)): str(c) for c in columns}
    for detect in DETECTORS:
        reading = detect(by_key, first or {}, mapping)
        if reading is not None:
            return reading
    return Reading()


def _deepeval(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
              ) -> Optional[Reading]:
    if "input" not in by_key or not {"actual_output", "expected_output", "retrieval_context"} & set(by_key):
        return None
    rules = tuple((by_key[k], rule) for k, rule in (("retrieval_context", deepeval_runs.sourced_contexts),
                                                     ("context", pipe_split)) if k in by_key)
    ideal = by_key.get("context") if by_key.get("context") not in (mapping or {}).values() else None
    chosen: Dict[str, Optional[str]] = {"sample_id": by_key["name"]} if "name" in by_key else {}
    if ideal and "retrieval_context" not in by_key:  # goldens: context is never read as what was retrieved
        chosen["contexts"] = None
    return Reading("deepeval", rules, mapping={f: c for f, c in chosen.items() if f not in (mapping or {})},
                   quiet=(ideal,) if ideal else (), notes=(_deepeval_note(by_key, first, ideal),))


_DEEPEVAL_USED = ("input", "actual_output", "expected_output", "retrieval_context", "name", "tools_called",
                  "expected_tools")


def _deepeval_note(by_key: Dict[str, str], first: Mapping[str, Any], ideal: Optional[str]) -> str:
    sourced = deepeval_runs.has_marker(first.get(by_key.get("retrieval_context", "")))
    left = [c for k, c in by_key.items() if k not in _DEEPEVAL_USED]
    return ("deepeval file: input is the question, actual_output the answer, retrieval_context the contexts, "
            "expected_output the reference, name the sample id."
            + (" Passages written as deepeval_source=PATH,deepeval_context=TEXT (RetrievedContextData) are read "
               "as TEXT, with PATH as their retrieval id." if sourced else "")
            + (f" {ideal} is deepeval's ideal passages (what should be retrieved), not what was: kept as metadata."
               if ideal else "")
            + f" Kept as metadata, not scored: {', '.join(left) or 'none'}.")


def _ragas_scores(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
                  ) -> Optional[Reading]:
    if "user_input" not in by_key or not {"response", "retrieved_contexts", "reference"} & set(by_key):
        return None
    aliases = {a for names in ALIASES.values() for a in names}
    scores = [c for k, c in by_key.items() if k not in aliases and not is_label(c) and not is_external(c)
              and c not in (mapping or {}).values() and _score_like(first.get(c))]
    if not scores:
        return None

    def regroup(records: Records, tally: Tally) -> Records:
        for where, row in records:
            yield where, {(grade_column("ragas", k) if k in scores else k): v for k, v in row.items()}
    return Reading("ragas results", regroup=regroup, notes=(
        "ragas EvaluationResult.to_pandas(): user_input is the question, response the answer, retrieved_contexts "
        f"the contexts; ragas' own scores ({', '.join(scores)}) are kept as external_ragas_<metric>.",))


def _score_like(value: Any) -> bool:
    """A ragas score cell: a number in [0, 1] (NaN where ragas failed), or its CSV text."""
    if isinstance(value, bool):
        return False
    number = external_number(value) if isinstance(value, (int, float, str)) else None
    if number is None:
        return isinstance(value, float) or (isinstance(value, str) and value.strip().casefold() == "nan")
    return 0.0 <= number <= 1.0


def _ragas_v0(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
              ) -> Optional[Reading]:
    column = by_key.get("ground_truths")
    if column is None or mapping.get("ground_truth") not in (None, column) or "ground_truth" in by_key \
            or "reference" in by_key:
        return None
    return Reading("ragas 0.0.x", ((column, first_item),), notes=(
        f"ragas 0.0.x file: {column} holds a list of answers per row; the first one is the reference "
        "(as ragas 0.0.x's answer_correctness read it), further ones are not used.",))


def _phoenix(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
             ) -> Optional[Reading]:
    if not {"input", "output", "reference"} <= set(by_key) or {"answer", "response", "actual_output"} & set(by_key):
        return None
    reference = by_key["reference"]
    if "contexts" in mapping or "ground_truth" in mapping or _contexts_column(by_key):
        return None
    if _holds_list(first.get(reference)):
        return Reading("Phoenix", mapping={"contexts": reference, "ground_truth": None}, notes=(
            f"Phoenix file: output is the answer; {reference} holds lists of passages, so it is read as "
            "the retrieved contexts (not as a reference answer).",))
    return Reading("Phoenix", notes=(
        f"Phoenix file: output is the answer; {reference} holds one text per row and is read as the "
        "reference answer. If it holds the retrieved documents (as in Phoenix's get_qa_with_reference), "
        f"map contexts to {reference} instead.",))


def _contexts_column(by_key: Dict[str, str]) -> bool:
    return any(alias in by_key for alias in ALIASES["contexts"])


def _holds_list(value: Any) -> bool:
    if isinstance(value, list):
        return True
    if not isinstance(value, str) or not value.strip().startswith("["):
        return False
    try:
        return list_cell(value.strip(), Where(""), "") is not None
    except ValueError:  # DatasetError: looks like a list but is not one
        return False


def split_notes(rows: Sequence[Mapping[str, Any]], reading: Reading) -> List[str]:
    """For the preview: each split the Reading's rules make, with its count per row (nothing said when none)."""
    splits = [(column, rule) for column, rule in reading.rules if rule in (pipe_split, deepeval_runs.sourced_contexts)]
    notes = []
    for column, _ in splits:
        counts = [(i, _split_count(row.get(column))) for i, row in enumerate(rows, 1) if column in row]
        parts = [f"row {i}: {n}" if n > 0 else f"row {i}: a Markdown table, kept whole"
                 for i, n in counts if n != 0]
        if parts:
            notes.append(f"{column} cells joined with '|' (deepeval's joiner) are split into contexts: "
                         + ", ".join(parts) + ".")
    return notes


def _split_count(value: Any) -> int:
    """How many contexts deepeval's "|" split makes of a raw cell: 0 when nothing is split, -1 for a table."""
    if not isinstance(value, str) or "|" not in value or value.lstrip().startswith("["):
        return 0
    return -1 if markdown_table(value) else len(contexts_cell(pipe_split(value, Where(""), ""), Where(""), ""))


def pipe_warning(rows: Sequence[Mapping[str, Any]], column: Optional[str], reading: Reading) -> List[str]:
    """A note when a contexts cell of the preview holds " | " and nothing splits it (not deepeval)."""
    if column is None or reading.tool == "deepeval":
        return []
    hits = [i for i, row in enumerate(rows, 1) if pipe_joined(row.get(column))]
    if not hits:
        return []
    return [f"Row {hits[0]}'s {column} holds one text with ' | ' inside. If that joins several passages, "
            "write them as a JSON list ([\"first\", \"second\"]) so each is scored as its own context."]


# Tried in this order; the first that recognises the file wins. A new format: one module, one line here.
DETECTORS: Tuple[Detector, ...] = (
    traces.detect,
    experiments.unless_paths(deepeval_runs.detect),  # before Langfuse items: both have input, expectedOutput
    experiments.unless_paths(inspect_logs.detect),
    experiments.unless_paths(langfuse_traces.detect),
    *experiments.DETECTORS,
    llamaindex_datasets.detect,
    experiments.unless_paths(llamaindex_retrieval.detect),
    experiments.unless_paths(ragchecker_results.detect),
    experiments.unless_paths(openai_evals.detect),
    phoenix_datasets.detect,  # before Phoenix's span files and _phoenix: its output is the reference
    dspy_results.detect,
    giskard_reports.detect,
    haystack_results.detect,  # before ragas and Phoenix: its "answer" is the reference, predicted_answer the answer
    _ragas_scores,
    _deepeval,
    experiments.unless_paths(trulens_records.detect),
    _ragas_v0,
    _phoenix,
)
