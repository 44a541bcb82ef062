"""Experiments and datasets from other evaluation tools, read into ragmeter's own columns.

    LangSmith examples     {"inputs": {...}, "outputs": {...}, "dataset_id", "id"}: outputs are the
                           reference (a dataset holds no app answers; a target answers them)
    LangSmith experiments  evaluate(...).to_pandas(): inputs.*, outputs.*, reference.*, feedback.*,
                           error, example_id. A row whose run failed (error set) is skipped, by name.
    Langfuse dataset items {"input", "expectedOutput", "metadata", "datasetId"}: JSONL, or the API's
                           page {"data": [...], "meta": {...}}; archived items are skipped
    MLflow GenAI           eval data {"inputs", "outputs", "expectations"}, and evaluate(...).result_df
                           (request, response, trace, assessments): contexts from the trace's
                           RETRIEVER spans
    promptfoo              eval -o json ({"results": {"results": [...]}}), -o jsonl (one result per
                           line) and -o csv ("[PASS] (1.00) answer ... Pass Reason: ..." cells):
                           vars are the inputs, response.output the answer

Their own graders' scores are kept beside ours as external_<tool>_<metric> (grades.py), and a person's
(an MLflow HUMAN assessment) as human_<metric>; `--labels` compares each with our metric of the same
meaning (LangSmith "correctness", MLflow "relevance_to_query", promptfoo "context-faithfulness").
Nothing is cut out of an answer: promptfoo's verdict text goes to its own columns. promptfoo's JSONL
can hold a result twice (written once when it ran and again when the eval finished): each result id
is read once, and the note says how many repeats were dropped.
"""
from __future__ import annotations

import json
import re
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Tuple

from .context_ids import context_id
from .grades import blank, grades_of
from .paths import decoded, is_path
from .readings import Detector, Reading, Tally
from .sources import Records, Where
from .traces import ANSWER_KEYS, QUESTION_KEYS, json_value

CONTEXT_KEYS = ("contexts", "retrieved_contexts", "retrieved_context", "documents", "docs", "context", "sources",
                "retrieval_context")
REFERENCE_KEYS = ("expected_response", "expected_output", "reference", "ground_truth") + ANSWER_KEYS
RowReader = Callable[[Dict[str, Any], Where, Tally], Optional[Dict[str, Any]]]


def pick(value: Any, keys: Iterable[str]) -> Any:
    """The text of a tool's input/output value: itself, its known key, or its only value."""
    value = decoded(value)
    if not isinstance(value, dict):
        return value
    for key in keys:
        if key in value and not blank(value[key]):
            return value[key]
    texts = [v for v in value.values() if isinstance(v, str)]
    return texts[0] if len(value) == 1 and texts else None


def contexts_in(*values: Any) -> Any:
    for value in values:
        value = decoded(value)
        if isinstance(value, dict):
            found = next((value[k] for k in CONTEXT_KEYS if not blank(value.get(k))), None)
            if found is not None:
                return found
    return None


def regrouped(tool: str, what: str, note: str, read: RowReader) -> Reading:
    def regroup(records: Records, tally: Tally) -> Records:
        for where, row in records:
            tally.found += 1
            out = read(row, where, tally)
            if out is not None:
                yield where, {k: v for k, v in out.items() if not blank(v)}
    return Reading(tool, regroup=regroup, what=what, notes=(note,))


def kept(row: Mapping[str, Any], used: Iterable[str]) -> Dict[str, Any]:
    """The columns a reader did not use, kept as metadata: nothing is dropped."""
    skip = set(used)
    return {k: v for k, v in row.items() if k not in skip}


# --- LangSmith ----------------------------------------------------------------------------------

def _langsmith_examples(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
                        ) -> Optional[Reading]:
    if not {"inputs", "outputs", "dataset_id"} <= set(by_key) or not isinstance(first.get("inputs"), dict):
        return None

    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        return _golden(row, pick(row.get("inputs"), QUESTION_KEYS), pick(row.get("outputs"), REFERENCE_KEYS),
                       contexts_in(row.get("inputs"), row.get("outputs")))
    return regrouped("LangSmith examples", "examples",
                     "LangSmith dataset examples: question from inputs, reference from outputs. " + _NO_ANSWERS, read)


def _langsmith_frame(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
                     ) -> Optional[Reading]:
    inputs = [c for k, c in by_key.items() if k.startswith("inputs.")]
    if not inputs or not any(k.startswith(("outputs.", "reference.")) for k in by_key):
        return None

    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        label = f"{where.label()} (example {row.get('example_id') or '?'})"
        if not blank(row.get("error")):
            tally.skip(label, f"the run failed: {str(row['error']).strip().splitlines()[0][:80]}")
            return None
        group = {p: {str(k)[len(p) + 1:]: v for k, v in row.items() if str(k).startswith(p + ".")}
                 for p in ("inputs", "outputs", "reference")}
        scores = grades_of("langsmith", ((str(k)[len("feedback."):], v) for k, v in row.items()
                                         if str(k).startswith("feedback.")))
        used = [k for k in row if str(k).startswith(("inputs.", "outputs.", "reference.", "feedback."))]
        out = {"sample_id": row.get("example_id"), "question": pick(group["inputs"], QUESTION_KEYS),
               "answer": pick(group["outputs"], ANSWER_KEYS), "contexts": contexts_in(group["outputs"]),
               "ground_truth": pick(group["reference"], REFERENCE_KEYS), **scores}
        return {**kept(row, used + ["example_id", "error"]), "run_id": row.get("id"), **out}
    return regrouped("LangSmith experiment", "runs",
                    "LangSmith experiment (evaluate(...).to_pandas()): question from inputs.*, answer from outputs.*, "
                    "reference from reference.*, feedback.* kept as their grader's scores; rows whose run failed "
                    "(error set) are skipped.", read)


_NO_ANSWERS = "They hold no answers from your app: answer them with a target (--target, or the target step)."


def _golden(row: Dict[str, Any], question: Any, reference: Any, contexts: Any) -> Dict[str, Any]:
    """A golden set's row (a question and its reference, no answer): its id as the sample id, the rest kept."""
    out = {"sample_id": row.get("id"), "question": question, "ground_truth": reference, "contexts": contexts}
    return {**kept(row, ("id",)), **out}


# --- Langfuse -------------------------------------------------------------------------------------

def _langfuse_items(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
                    ) -> Optional[Reading]:
    if "input" not in by_key or not {"expectedoutput", "datasetid", "datasetname"} & set(by_key):
        return None

    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        if str(row.get("status", "")).upper() == "ARCHIVED":
            tally.skip(f"item {row.get('id') or where.label()}", "archived in Langfuse")
            return None
        return _golden(row, pick(row.get("input"), QUESTION_KEYS + ("messages",)),
                       pick(row.get("expectedOutput"), REFERENCE_KEYS), contexts_in(row.get("input")))
    return regrouped("Langfuse dataset items", "items",
                     "Langfuse dataset items: question from input, reference from expectedOutput. " + _NO_ANSWERS, read)


# --- MLflow ---------------------------------------------------------------------------------------

def _mlflow(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
            ) -> Optional[Reading]:
    if {"request", "response", "assessments", "spans"} <= set(by_key) and not any(k.endswith("/value") for k in by_key):
        # search_traces: result_df has the same columns and one "<assessment>/value" column per assessment
        return regrouped("MLflow traces", "traces", MLFLOW_TRACES_NOTE, _mlflow_result)
    if {"request", "response"} <= set(by_key) and ({"assessments", "trace"} & set(by_key)):
        return regrouped("MLflow evaluation results", "results",
                        "MLflow GenAI result_df: question from request, answer from response, contexts from the "
                        "trace's RETRIEVER spans, assessments kept as their judges' scores.", _mlflow_result)
    if {"inputs", "dataset_record_id"} <= set(by_key):
        return regrouped("MLflow evaluation dataset", "records", MLFLOW_DATASET_NOTE, _mlflow_data)
    if "inputs" in by_key and ("expectations" in by_key or "outputs" in by_key) and "dataset_id" not in by_key:
        return regrouped("MLflow evaluation data", "records",
                        "MLflow GenAI eval data: question from inputs, answer from outputs (response), contexts from "
                        "outputs.retrieved_context (their doc_uri kept as retrieval_ids), reference from "
                        "expectations.expected_response.", _mlflow_data)
    return None


MLFLOW_DATASET_NOTE = (
    "MLflow GenAI dataset records (EvaluationDataset.to_df()): dataset_record_id as sample_id, question from inputs, "
    "reference from expectations.expected_response, answer from outputs where a record has one; tags, source and "
    "created_time kept as metadata. Records made with merge_records hold no outputs: give a target that answers "
    "each question.")
MLFLOW_TRACES_NOTE = (
    "MLflow GenAI traces (search_traces): trace_id as sample_id, question from request, answer from response "
    "(its response key), contexts from the trace's RETRIEVER spans or else response.retrieved_context (doc_uri as "
    "retrieval_ids), reference from the expected_response expectation (assessments), expected documents from "
    "expected_retrieved_context, feedback assessments as their judges' scores; spans and trace_metadata not kept "
    "(copies of the trace); state, request_time, execution_duration, tags kept as metadata.")


def _mlflow_data(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    expectations = decoded(row.get("expectations")) or {}
    out = {"question": pick(row.get("inputs"), QUESTION_KEYS), "answer": pick(row.get("outputs"), ANSWER_KEYS),
           "contexts": contexts_in(row.get("outputs"), row.get("inputs")),
           "ground_truth": pick(expectations, REFERENCE_KEYS) if isinstance(expectations, dict) else expectations,
           "retrieval_ids": _doc_uris(contexts_in(row.get("outputs"))), "expected_docs": _expected_ids(expectations),
           "sample_id": row.get("dataset_record_id")}
    return {**kept(row, ("inputs", "outputs", "dataset_record_id")), **out}


def _doc_uris(docs: Any) -> Optional[List[str]]:
    uris = [str(d["doc_uri"]) for d in docs if isinstance(d, dict) and d.get("doc_uri")] if isinstance(docs, list) else []
    return uris or None


def _mlflow_result(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    expectations = decoded(row.get("expectations")) or _expectations(row.get("assessments")) or None
    marks = _assessments(row.get("assessments"))
    outputs = contexts_in(row.get("response"))  # MLflow's RAG output: {"response", "retrieved_context": [...]}
    scores = {**grades_of("mlflow", ((n, v) for n, v, human in marks if not human)),
              **grades_of("mlflow", ((n, v) for n, v, human in marks if human), human=True)}
    out = {"sample_id": row.get("trace_id") or row.get("request_id"),
           "question": pick(row.get("request"), QUESTION_KEYS), "answer": pick(row.get("response"), ANSWER_KEYS),
           "contexts": _trace_documents(row.get("trace")) or outputs,
           "retrieval_ids": _trace_ids(row.get("trace")) or _doc_uris(outputs),
           "expected_docs": _expected_ids(expectations),
           "ground_truth": pick(expectations, REFERENCE_KEYS) if isinstance(expectations, dict)
           else row.get("expected_response/value"), **scores}
    return {**kept(row, ("trace_id", "request_id", "request", "response", "trace", "assessments", "inputs",
                          "outputs", "expectations", "spans", "trace_metadata")), **out}


def _expectations(value: Any) -> Dict[str, Any]:
    """The expectation assessments of a trace ({"assessment_name", "expectation": {"value"}}), by name."""
    items = decoded(value)
    return {str(item.get("assessment_name") or item.get("name")): decoded(item["expectation"].get("value"))
            for item in items if isinstance(item, dict) and isinstance(item.get("expectation"), dict)
            and "value" in item["expectation"]} if isinstance(items, list) else {}


def _assessments(value: Any) -> List[Tuple[str, Any, bool]]:
    """(name, value, given by a person) of each feedback assessment."""
    items = decoded(value)
    out = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        name = item.get("assessment_name") or item.get("name")
        feedback = item.get("feedback")
        source = item.get("source")
        human = isinstance(source, dict) and str(source.get("source_type", "")).upper() == "HUMAN"
        if name and isinstance(feedback, dict) and "value" in feedback:
            out.append((str(name), feedback["value"], human))
    return out


def _trace_documents(value: Any) -> List[str]:
    """The page_content of every document a RETRIEVER span of an MLflow trace returned."""
    return [str(doc["page_content"]) for doc in _retrieved(value)]


def _trace_ids(value: Any) -> Optional[List[str]]:
    """Those documents' ids (`id`, or metadata doc_uri/id/source), in rank order; None when none has one."""
    ids = [context_id(doc) for doc in _retrieved(value)]
    return ids if any(ids) else None


def _expected_ids(expectations: Any) -> Optional[List[str]]:
    """MLflow's expected_retrieved_context ([{"doc_uri": ...}]) as expected document ids."""
    items = expectations.get("expected_retrieved_context") if isinstance(expectations, dict) else None
    ids = [context_id(d) for d in decoded(items) or [] if isinstance(d, dict)] if items else []
    return [i for i in ids if i] or None


def _retrieved(value: Any) -> List[Dict[str, Any]]:
    """Every document (with page_content) a RETRIEVER span of an MLflow trace returned, in order."""
    trace = decoded(value)
    spans = ((trace or {}).get("data") or {}).get("spans") if isinstance(trace, dict) else None
    docs: List[Dict[str, Any]] = []
    for span in spans or []:
        attrs = span.get("attributes") or {}
        if json_value(attrs.get("mlflow.spanType")) != "RETRIEVER":  # MLflow stores attributes JSON-encoded
            continue
        for doc in json_value(attrs.get("mlflow.spanOutputs")) or []:
            if isinstance(doc, dict) and doc.get("page_content"):
                docs.append(doc)
    return docs


# --- promptfoo ------------------------------------------------------------------------------------

_PF_CELL = re.compile(r"^\[(PASS|FAIL|ERROR)\] \(([-\d.]+)(?:, [^)]*)?\)\s(.*)$", re.DOTALL)
_PF_REASON = re.compile(r"\n\n(?:Pass|Fail) Reason:(.*)$", re.DOTALL)


def _promptfoo(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
               ) -> Optional[Reading]:
    if {"testcase", "response"} <= set(by_key) or ({"vars", "gradingresult"} <= set(by_key)):
        return regrouped("promptfoo results", "results",
                        "promptfoo results: vars are the inputs (question from vars.question/query), response.output "
                        "the answer, the grader's pass and score kept as promptfoo_pass / promptfoo_score (never in "
                        "the answer), assertion scores as their grader's scores.", _once(_promptfoo_result))
    outputs = [c for c in by_key.values() if c.startswith("[") and "] " in c]
    if outputs and isinstance(first.get(outputs[0]), str) and _PF_CELL.match(first[outputs[0]]):
        return regrouped("promptfoo CSV", "rows",
                        f"promptfoo CSV: the answer is the text of '{outputs[0]}' without its \"[PASS] (score)\" "
                        "prefix and \"Pass Reason\" line, which are kept as promptfoo_pass, promptfoo_score and "
                        "promptfoo_reason; the other columns are the vars.", _promptfoo_csv(outputs[0]))
    return None


def _promptfoo_result(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    test = row.get("testCase") or {}
    variables = row.get("vars") or test.get("vars") or {}
    response = row.get("response") or {}
    label = f"{where.label()} (test {row.get('testIdx', '?')})"
    if not isinstance(response, dict) or response.get("output") is None:
        tally.skip(label, f"no response.output (error: {str(row.get('error') or 'none')[:80]})")
        return None
    grading = row.get("gradingResult") or {}
    scores = grades_of("promptfoo", ((str((part.get("assertion") or {}).get("type", "")), part.get("score"))
                                     for part in grading.get("componentResults") or [] if isinstance(part, dict)))
    output = response["output"]
    out = {"sample_id": row.get("id"), "question": pick(variables, QUESTION_KEYS),
           "answer": output if isinstance(output, str) else json.dumps(output, ensure_ascii=False),
           "contexts": contexts_in(variables), "ground_truth": pick(variables, ("expected", "reference", "ground_truth")),
           "promptfoo_pass": row.get("success"), "promptfoo_score": row.get("score"),
           "promptfoo_reason": grading.get("reason"), "provider": (row.get("provider") or {}).get("id"), **scores}
    return {**{f"vars.{k}": v for k, v in variables.items()}, **out}


def _once(read: RowReader) -> RowReader:
    """Each promptfoo result once: its JSONL may repeat a result (same id, or same test, prompt and provider)."""
    seen: set = set()

    def reader(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        key = row.get("id") or (None if row.get("testIdx") is None else
                                 (row["testIdx"], row.get("promptIdx"), json.dumps(row.get("provider"), default=str)))
        if key is not None and key in seen:
            tally.found -= 1
            tally.count("repeated results read once (promptfoo wrote them twice)")
            return None
        seen.add(key)
        return read(row, where, tally)
    return reader


def _promptfoo_csv(column: str) -> RowReader:
    def read(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
        match = _PF_CELL.match(str(row.get(column) or ""))
        if match is None:
            tally.skip(where.label(), f"the {column} cell does not start with promptfoo's [PASS]/[FAIL] (score)")
            return None
        verdict, score, text = match.groups()
        reason = _PF_REASON.search(text)
        answer = text[:reason.start()] if reason else text
        variables = {k: v for k, v in row.items() if k != column}
        return {**{f"vars.{k}": v for k, v in variables.items()}, "question": pick(variables, QUESTION_KEYS),
                "answer": answer.strip(), "contexts": contexts_in(variables),
                "ground_truth": pick(variables, ("expected", "reference", "ground_truth")),
                "promptfoo_pass": verdict == "PASS", "promptfoo_score": float(score),
                "promptfoo_reason": reason.group(1).strip() if reason else None, "provider": column}
    return read


def unless_paths(detect: Detector) -> Detector:
    """A caller who maps a field to a nested path reads the raw rows: the regrouping steps back."""
    def detector(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
                 ) -> Optional[Reading]:
        if any(is_path(v) and str(v).strip().casefold() not in by_key for v in mapping.values()):
            return None
        return detect(by_key, first, mapping)
    return detector


DETECTORS: Tuple[Detector, ...] = tuple(unless_paths(d) for d in (
    _langsmith_examples, _langsmith_frame, _langfuse_items, _mlflow, _promptfoo))
