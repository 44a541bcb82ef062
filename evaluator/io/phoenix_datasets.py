"""Arize Phoenix dataset exports (arize-phoenix 20.x server): /v1/datasets/{id}/csv and /v1/datasets/{id}/examples.

A Phoenix dataset example is an `input`, an `output` and `metadata`; the `output` is the example's expected
output (the reference), not a model's answer, so a dataset is a test set: score it with a target.
    CSV       id, node_id, input.<key>, output.<key>, metadata.<key> (one column per key)
    examples  {"data": {"examples": [{"id", "node_id", "input": {...}, "output": {...}, "metadata": {...}}]}}
The question is the input's question/query/input key (or its only text); the reference the output's
answer/output/expected key (or its only text); `id` the sample id; metadata kept. An output that holds both a
reference (reference/expected_output/expected_response/ground_truth) and an answer (answer/response/output) is a
model's answer beside its reference: the answer is read as the answer. The note lists what was read and what
was kept aside.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from .experiments import QUESTION_KEYS, REFERENCE_KEYS, kept, pick, regrouped
from .traces import ANSWER_KEYS
from .readings import Reading, Tally
from .sources import Where

TRUE_REFERENCE = ("expected_response", "expected_output", "reference", "ground_truth")  # never an answer
ANSWERED = ("Phoenix dataset examples with answers: id as sample_id, question from {q}, answer from {a}, reference "
            "from {r} (the output holds both); kept as metadata: {kept}.")
NOTE = ("Phoenix dataset examples: id as sample_id, question from {q}, reference from {r} (a Phoenix example's "
        "output is its expected output, not a model's answer); kept as metadata: {kept}. There are no answers: "
        "give a target that answers each question.")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """A Phoenix dataset export (its CSV or its examples JSON), else None."""
    if "node_id" not in by_key or "id" not in by_key:
        return None
    if {"input", "output"} <= set(by_key):  # the examples JSON
        others = ", ".join(c for k, c in by_key.items() if k not in ("id", "input", "output")) or "none"
        if _answered(first.get(by_key["output"])):
            return regrouped("Phoenix dataset", "examples", ANSWERED.format(
                q="input", a="output's answer", r="output's reference", kept=others), _example)
        return regrouped("Phoenix dataset", "examples", NOTE.format(q="input", r="output", kept=others), _example)
    inputs = [c for k, c in by_key.items() if k.startswith("input.")]
    outputs = [c for k, c in by_key.items() if k.startswith("output.")]
    if not inputs:
        return None
    question = _first_named(inputs, QUESTION_KEYS)
    answered = _answered({c.split(".", 1)[1]: c for c in outputs})
    reference = _first_named(outputs, TRUE_REFERENCE if answered else REFERENCE_KEYS) if outputs else None
    answer = _first_named(outputs, ANSWER_KEYS) if answered else None
    chosen = {"question": question, "answer": answer, "ground_truth": reference, "sample_id": by_key["id"]}
    aside = ", ".join(c for c in by_key.values() if c not in chosen.values())
    note = ANSWERED.format(q=question, a=answer, r=reference, kept=aside) if answered else \
        NOTE.format(q=question, r=reference or "(no output column)", kept=aside)
    return Reading("Phoenix dataset", mapping={f: c for f, c in chosen.items() if c and f not in mapping},
                   notes=(note,), quiet=tuple(c for c in by_key.values() if c not in chosen.values()),
                   what="examples")


def _answered(output: Any) -> bool:
    """Whether an example's output holds a model's answer beside its reference (both kinds of key)."""
    keys = {str(k).casefold() for k in output} if isinstance(output, dict) else set()
    return bool(keys & set(TRUE_REFERENCE)) and bool(keys & set(ANSWER_KEYS) - set(TRUE_REFERENCE))


def _first_named(columns: list, keys: tuple) -> str:
    by_name = {c.split(".", 1)[1].casefold(): c for c in columns}
    return next((by_name[k] for k in keys if k in by_name), columns[0])


def _example(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    output = row.get("output")
    answered = _answered(output)
    return {**kept(row, ("id", "input", "output")), "sample_id": row.get("id"),
            "question": pick(row.get("input"), QUESTION_KEYS),
            "answer": pick(output, ANSWER_KEYS) if answered else None,
            "ground_truth": pick(output, TRUE_REFERENCE if answered else REFERENCE_KEYS)}
