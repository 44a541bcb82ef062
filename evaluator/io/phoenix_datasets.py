"""Arize Phoenix dataset exports (arize-phoenix 20.x server): /v1/datasets/{id}/csv and /v1/datasets/{id}/examples.

A Phoenix dataset example is an `input`, an `output` and `metadata`; the `output` is the example's expected
output (the reference), not a model's answer, so a dataset is a test set: score it with a target.
    CSV       id, node_id, input.<key>, output.<key>, metadata.<key> (one column per key)
    examples  {"data": {"examples": [{"id", "node_id", "input": {...}, "output": {...}, "metadata": {...}}]}}
The question is the input's question/query/input key (or its only text); the reference the output's
answer/output/expected key (or its only text); `id` the sample id; metadata kept. The note lists what was read
and what was kept aside.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional

from .experiments import QUESTION_KEYS, REFERENCE_KEYS, kept, pick, regrouped
from .readings import Reading, Tally
from .sources import Where

NOTE = ("Phoenix dataset examples: id as sample_id, question from {q}, reference from {r} (a Phoenix example's "
        "output is its expected output, not a model's answer); kept as metadata: {kept}. There are no answers: "
        "give a target that answers each question.")


def detect(by_key: Dict[str, str], first: Mapping[str, Any], mapping: Mapping[str, Optional[str]]
           ) -> Optional[Reading]:
    """A Phoenix dataset export (its CSV or its examples JSON), else None."""
    if "node_id" not in by_key or "id" not in by_key:
        return None
    if {"input", "output"} <= set(by_key):  # the examples JSON
        others = [c for k, c in by_key.items() if k not in ("id", "input", "output")]
        return regrouped("Phoenix dataset", "examples",
                         NOTE.format(q="input", r="output", kept=", ".join(others) or "none"), _example)
    inputs = [c for k, c in by_key.items() if k.startswith("input.")]
    outputs = [c for k, c in by_key.items() if k.startswith("output.")]
    if not inputs:
        return None
    question = _first_named(inputs, QUESTION_KEYS)
    reference = _first_named(outputs, REFERENCE_KEYS) if outputs else None
    chosen = {"question": question, "ground_truth": reference, "sample_id": by_key["id"]}
    aside = [c for c in by_key.values() if c not in chosen.values()]
    return Reading("Phoenix dataset", mapping={f: c for f, c in chosen.items() if c and f not in mapping},
                   notes=(NOTE.format(q=question, r=reference or "(no output column)", kept=", ".join(aside)),),
                   quiet=tuple(aside), what="examples")


def _first_named(columns: list, keys: tuple) -> str:
    by_name = {c.split(".", 1)[1].casefold(): c for c in columns}
    return next((by_name[k] for k in keys if k in by_name), columns[0])


def _example(row: Dict[str, Any], where: Where, tally: Tally) -> Optional[Dict[str, Any]]:
    return {**kept(row, ("id", "input", "output")), "sample_id": row.get("id"),
            "question": pick(row.get("input"), QUESTION_KEYS), "ground_truth": pick(row.get("output"), REFERENCE_KEYS)}
