"""Column names: each tool's names load to the same sample; detection rules."""
import json

import pytest

from datafiles import csv_text, jsonl_text, write
from evaluator.io.datasets import ALIASES, FIELDS, detect_mapping, load_dataset
from evaluator.model import EvalSample


FAMILIES = {
    "seed": ["question", "answer", "contexts", "ground_truth", "sample_id"],
    "ragas": ["user_input", "response", "retrieved_contexts", "reference", "id"],
    "deepeval": ["input", "actual_output", "retrieval_context", "expected_output", "sample_id"],
}


@pytest.mark.parametrize("family", sorted(FAMILIES))
@pytest.mark.parametrize("fmt", ["csv", "jsonl", "json"])
def test_alias_families_load_the_same_sample(tmp_path, family, fmt):
    q, a, c, gt, sid = FAMILIES[family]
    obj = {q: "What is the refund window?", a: "14 days.", c: ["Refund policy: 14 days."], gt: "14 days", sid: "s1"}
    if fmt == "csv":
        text = csv_text([list(obj), [obj[q], obj[a], json.dumps(obj[c]), obj[gt], obj[sid]]])
    elif fmt == "jsonl":
        text = jsonl_text([obj])
    else:
        text = json.dumps([obj])
    [sample] = load_dataset(write(tmp_path, f"d.{fmt}", text))
    assert sample == EvalSample("What is the refund window?", "14 days.", ["Refund policy: 14 days."], "14 days", "s1")


def test_headers_match_case_insensitively_and_trimmed(tmp_path):
    text = " Question ,ANSWER,  Contexts\nq,a,one context\n"
    [s] = load_dataset(write(tmp_path, "d.csv", text))
    assert (s.question, s.answer, s.contexts) == ("q", "a", ["one context"])


def test_detect_mapping_prefers_first_alias_and_keeps_spelling():
    mapping = detect_mapping(["ID", "Sample_ID", "User_Input", "response", "reference", "human_faithfulness"])
    assert mapping == {"question": "User_Input", "answer": "response", "ground_truth": "reference",
                       "sample_id": "Sample_ID"}


def test_constants_cover_every_field():
    assert set(ALIASES) == set(FIELDS)
    assert all(name in ALIASES[name] for name in FIELDS)
