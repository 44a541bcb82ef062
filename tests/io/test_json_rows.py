"""JSON and JSON Lines reading: shapes, syntax errors, empty files."""
import json

import pytest

from datafiles import jsonl_text, load_error, write
from evaluator.io.datasets import load_dataset


def test_json_object_with_samples_or_data_list(tmp_path):
    for key in ("samples", "data"):
        text = json.dumps({key: [{"question": "q", "answer": "a", "contexts": "one"}]})
        [s] = load_dataset(write(tmp_path, "d.json", text))
        assert s.contexts == ["one"]


def test_jsonl_rows_may_omit_optional_keys(tmp_path):
    objs = [{"question": "q1", "answer": "a"}, {"question": "q2", "answer": "a", "ground_truth": "g", "category": "c"}]
    s1, s2 = load_dataset(write(tmp_path, "d.jsonl", jsonl_text(objs) + "\n\n"))
    assert (s1.ground_truth, s2.ground_truth, s2.category) == (None, "g", "c")


def test_json_errors_name_the_item(tmp_path):
    text = json.dumps([{"question": "q", "answer": "a"}, {"question": "q2", "answer": ["a"]}])
    err = load_error(write(tmp_path, "it.json", text))
    assert (err.item, err.line, err.column) == (2, None, "answer")
    assert "it.json, item 2, column 'answer'" in str(err) and "write the value as a string" in str(err)
    err = load_error(write(tmp_path, "it2.json", json.dumps([{"question": "q", "answer": "a"}, 5])))
    assert err.item == 2 and "not an object" in str(err)


def test_json_syntax_errors_give_the_line_and_a_hint(tmp_path):
    err = load_error(write(tmp_path, "bad.json", '[\n{"question": "q",\n "answer": }\n]'))
    assert err.line == 3 and "not valid JSON" in str(err)
    err = load_error(write(tmp_path, "lines.json", jsonl_text([{"question": "q", "answer": "a"}] * 2)))
    assert "rename it to .jsonl" in str(err)
    err = load_error(write(tmp_path, "shape.json", json.dumps({"rows": []})))
    assert '"samples"' in str(err)


def test_jsonl_errors(tmp_path):
    err = load_error(write(tmp_path, "bad.jsonl", '{"question": "q", "answer": "a"}\n{"question": \n'))
    assert err.line == 2 and "one complete JSON object" in str(err)
    err = load_error(write(tmp_path, "list.jsonl", json.dumps([{"question": "q", "answer": "a"}])))
    assert err.line == 1 and "rename it to .json" in str(err)


@pytest.mark.parametrize("name, text", [
    ("e.jsonl", ""), ("e.jsonl", "\n \n"), ("e.json", ""), ("e.json", " \n"), ("e.json", "[]"),
    ("e.json", '{"samples": []}'),
])
def test_empty_json_files_have_no_rows(tmp_path, name, text):
    err = load_error(write(tmp_path, name, text))
    assert str(err).startswith(f"{tmp_path / name}: has no rows")


@pytest.mark.parametrize("line, column", [
    ('{"question": "q2", "answer": "a2", "contexts": ["c"]', "contexts"),
    ('{"question": "q2", "answer": "a2"', "answer"),
    ('{"question": "q2", "answer": "a2", "contexts": ["c"', "contexts"),
])
def test_a_jsonl_line_missing_its_brace_names_the_column(tmp_path, line, column):
    text = '{"question": "q1", "answer": "a1"}\n' + line + '\n{"question": "q3", "answer": "a3"}\n'
    err = load_error(write(tmp_path, "cut.jsonl", text))
    assert (err.line, err.column) == (2, column)
    assert f"cut.jsonl, line 2, column '{column}': ends before its object is closed" in str(err)
    assert "column 1" not in str(err)


def test_a_jsonl_syntax_error_inside_a_line_names_its_column(tmp_path):
    err = load_error(write(tmp_path, "mid.jsonl", '{"question": "q", "answer": oops, "contexts": []}\n'))
    assert err.column == "answer" and "not valid JSON" in str(err) and "character 29" in str(err)
