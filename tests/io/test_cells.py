"""Cell values: list forms, contexts, keywords, labels and metadata, read through load_dataset."""

import pytest

from datafiles import csv_text, jsonl_text, load_error, write
from evaluator.io.datasets import load_dataset


@pytest.mark.parametrize("cell, expected", [
    ('["a", "b"]', ["a", "b"]),
    ("['a', 'b']", ["a", "b"]),  # what pandas writes for a list column
    ("just one passage", ["just one passage"]),
    ("[1] Refund policy: cited text", ["[1] Refund policy: cited text"]),
    ("", []),
    ("[]", []),
    ('[{"title": "Refund policy", "text": "14 days"}, {"page_content": "pc"}, {"content": "ct"}]',
     ["Refund policy: 14 days", "pc", "ct"]),
    ('[{"page_content": "x", "metadata": {"title": "Doc"}}]', ["Doc: x"]),
    ('["a", "  ", "b"]', ["a", "b"]),
])
def test_context_cell_forms(tmp_path, cell, expected):
    [s] = load_dataset(write(tmp_path, "c.csv", csv_text([["question", "answer", "contexts"], ["q", "a", cell]])))
    assert s.contexts == expected


@pytest.mark.parametrize("cell, expected", [
    ('["x", "y z"]', ["x", "y z"]),
    ("x; y z ;", ["x", "y z"]),
    ("x|y", ["x", "y"]),
    ("single", ["single"]),
    ("", None),
    ("[7, \"days\"]", ["7", "days"]),
])
def test_keyword_and_doc_cell_forms(tmp_path, cell, expected):
    text = csv_text([["question", "answer", "expected_answer_keywords", "expected_docs"], ["q", "a", cell, cell]])
    [s] = load_dataset(write(tmp_path, "k.csv", text))
    assert s.expected_answer_keywords == expected and s.expected_docs == expected


def test_blank_ground_truth_is_none_and_missing_ids_are_numbered(tmp_path):
    text = csv_text([["question", "answer", "ground_truth", "sample_id"], ["q1", "a", "  ", ""], ["q2", "", "gt", ""]])
    s1, s2 = load_dataset(write(tmp_path, "g.csv", text))
    assert (s1.ground_truth, s1.sample_id, s2.ground_truth, s2.sample_id) == (None, "row-1", "gt", "row-2")
    assert s2.answer == ""  # an empty answer is allowed


def test_human_labels_and_unknown_columns_go_to_metadata(tmp_path):
    text = csv_text([["question", "answer", "Human_Faithfulness", "human_answer_relevancy", "source", "note"],
                     ["q", "a", "1", "", "faq", " "], ["q2", "a", "0.5", "4", "", ""]])
    s1, s2 = load_dataset(write(tmp_path, "h.csv", text))
    assert s1.metadata == {"source": "faq", "human_labels": {"faithfulness": 1.0}}
    assert s2.metadata == {"human_labels": {"faithfulness": 0.5, "answer_relevancy": 4.0}}


def test_json_values_in_metadata_are_serialised(tmp_path):
    obj = {"question": "q", "answer": "a", "score": 3, "tags": ["x"], "human_faithfulness": True}
    [s] = load_dataset(write(tmp_path, "m.jsonl", jsonl_text([obj])))
    assert s.metadata == {"score": "3", "tags": '["x"]', "human_labels": {"faithfulness": 1.0}}


@pytest.mark.parametrize("value, words", [
    (42, "not a JSON number"),
    ({"text": "x"}, "not a JSON object"),
    ([["nested"]], "not a JSON list"),
    ([3], "not a JSON number"),
    ([{"title": "no text"}], "needs a text field"),
])
def test_wrong_context_types_name_the_place(tmp_path, value, words):
    text = jsonl_text([{"question": "q", "answer": "a", "contexts": ["ok"]},
                       {"question": "q2", "answer": "a", "contexts": value}])
    err = load_error(write(tmp_path, "ct.jsonl", text))
    assert (err.line, err.column) == (2, "contexts") and words in str(err)


@pytest.mark.parametrize("cell, words", [("42", "not a JSON number"), ("-1.5e3", "not a JSON number"),
                                         ('{"title": "T", "text": "x"}', "not a JSON object")])
def test_csv_context_cell_holding_a_number_or_object(tmp_path, cell, words):
    text = csv_text([["question", "answer", "contexts"], ["q", "a", "fine"], ["q", "a", cell]])
    err = load_error(write(tmp_path, "cn.csv", text))
    assert (err.line, err.column) == (3, "contexts") and words in str(err) and "cn.csv" in str(err)
    assert "list of texts (a JSON array)" in str(err)


@pytest.mark.parametrize("value", ["yes", "7", "-1", "nan"])
def test_bad_human_labels(tmp_path, value):
    err = load_error(write(tmp_path, "hl.csv", csv_text([["question", "answer", "human_faithfulness"], ["q", "a", value]])))
    assert (err.line, err.column) == (2, "human_faithfulness") and "0/1, 0–1 or 1–5" in str(err)


@pytest.mark.parametrize("cell, expected", [
    ("['a' 'b']", ["a", "b"]),  # numpy's str(array): no commas
    ("['Warranty: two years.'\n 'Shipping: free.']", ["Warranty: two years.", "Shipping: free."]),
    ("[\"it's here\" 'plain']", ["it's here", "plain"]),
    ("['only one']", ["only one"]),
    ("['a', 'b']", ["a", "b"]),  # a Python list still reads as one
])
def test_numpy_array_cells_are_lists(tmp_path, cell, expected):
    [s] = load_dataset(write(tmp_path, "np.csv", csv_text([["question", "answer", "contexts"], ["q", "a", cell]])))
    assert s.contexts == expected
