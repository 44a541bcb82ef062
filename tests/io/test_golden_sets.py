"""Golden sets from other tools (issue 48): a file of examples without model answers is said to be one, with the
file's own count, in the words of the surface that loads it; never refused at its first record."""
import json
from pathlib import Path

import pytest

from evaluator import load_dataset
from evaluator.errors import DatasetError
from evaluator.io.surfaces import CLI, DASHBOARD

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.mark.parametrize("name, says", [
    ("langsmith_examples.jsonl", "LangSmith examples: 3 examples, none has a model answer"),
    ("mlflow_genai_dataset.json", "MLflow evaluation dataset: 3 records, none has a model answer"),
    ("phoenix_examples.json", "Phoenix dataset: 3 examples, none has a model answer"),
    ("phoenix_dataset.csv", "Phoenix dataset: 4 examples, none has a model answer"),
    ("llamaindex_rag_dataset.json", "LlamaIndex: 3 examples, none has a model answer"),
])
def test_a_golden_set_says_what_it_is_with_its_count(name, says):
    notes = []
    with pytest.raises(DatasetError) as err:
        load_dataset(FIXTURES / name, notes=notes, surface=CLI)
    assert says in str(err.value) and str(err.value).endswith("give a target that answers each question: "
                                                              "--target URL or module:function")
    assert not any(n.startswith("Read before the error") for n in notes)


def test_the_dashboard_is_told_to_call_the_pipeline():
    with pytest.raises(DatasetError, match=r"3 examples, none has a model answer \(a test set\): choose Answers: "
                                           "call my pipeline$"):
        load_dataset(FIXTURES / "langsmith_examples.jsonl", surface=DASHBOARD)


def test_a_set_with_some_answers_says_how_many(tmp_path):
    records = json.loads((FIXTURES / "mlflow_genai_dataset.json").read_text(encoding="utf-8"))
    records[2]["outputs"] = {"response": "Visa and Mastercard."}  # the last record answered, the first not
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    with pytest.raises(DatasetError, match="3 records, only 1 with a model answer. Give every row an answer, or give "
                                           "a target"):
        load_dataset(path, surface=CLI)


def test_a_plain_file_without_answers_keeps_its_column_advice(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_text('{"question": "Why?"}\n{"question": "How?"}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="line 1: no answer column"):
        load_dataset(path, surface=CLI)
