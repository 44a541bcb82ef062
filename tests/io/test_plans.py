"""Column -> field plans: explicit mappings, missing and duplicate columns."""
from datafiles import csv_text, jsonl_text, load_error, write
from evaluator.io.datasets import load_dataset


def test_explicit_mapping_overrides_detection(tmp_path):
    text = csv_text([["question", "prompt", "bot_reply", "docs"], ["ignored", "real q", "a", '["c"]']])
    [s] = load_dataset(write(tmp_path, "m.csv", text),
                       mapping={"question": "Prompt", "answer": "bot_reply", "contexts": "docs"})
    assert (s.question, s.answer, s.contexts) == ("real q", "a", ["c"])
    assert s.metadata == {"question": "ignored"}  # the unmapped column is kept, not lost


def test_mapping_to_none_drops_a_field(tmp_path):
    text = csv_text([["question", "answer", "reference"], ["q", "a", "gt"]])
    [s] = load_dataset(write(tmp_path, "m.csv", text), mapping={"ground_truth": None})
    assert s.ground_truth is None and s.metadata == {"reference": "gt"}


def test_mapping_errors_name_the_problem(tmp_path):
    path = write(tmp_path, "m.csv", csv_text([["question", "answer"], ["q", "a"]]))
    err = load_error(path, mapping={"question": "nope"})
    assert "m.csv" in str(err) and "'nope'" in str(err) and "question, answer" in str(err)
    err = load_error(path, mapping={"questions": "question"})
    assert "unknown field" in str(err) and "ground_truth" in str(err)
    err = load_error(path, mapping={"ground_truth": "answer"})
    assert "mapped to both" in str(err)


def test_missing_question_column_lists_columns_and_accepted_names(tmp_path):
    err = load_error(write(tmp_path, "nq.csv", csv_text([["prompt", "answer"], ["q", "a"]])))
    assert err.file.endswith("nq.csv") and err.line == 1
    for part in ("no question column", "prompt, answer", "user_input", "mapping="):
        assert part in str(err)


def test_missing_answer_column_is_an_error(tmp_path):
    err = load_error(write(tmp_path, "na.jsonl", jsonl_text([{"question": "q", "contexts": []}])))
    assert err.line == 1 and "no answer column" in str(err) and "actual_output" in str(err)


def test_missing_answer_key_in_a_later_jsonl_row(tmp_path):
    text = jsonl_text([{"question": "q", "answer": "a"}, {"question": "q2"}])
    err = load_error(write(tmp_path, "la.jsonl", text))
    assert "la.jsonl, line 2" in str(err) and "no answer column" in str(err)


def test_duplicate_columns(tmp_path):
    err = load_error(write(tmp_path, "dc.csv", "question,answer,Question\nq,a,b\n"))
    assert err.line == 1 and err.column == "Question" and "appears twice" in str(err)
    err = load_error(write(tmp_path, "dc.jsonl", '{"question": "q", "answer": "a", "ANSWER": "b"}\n'))
    assert err.line == 1 and "appears twice" in str(err)


def test_jsonl_mapping_to_a_column_only_later_rows_have(tmp_path):
    objs = [{"q": "q1", "a": "x"}, {"q": "q2", "a": "y", "ref": "gt"}]
    path = write(tmp_path, "late.jsonl", jsonl_text(objs))
    s1, s2 = load_dataset(path, mapping={"question": "q", "answer": "a", "ground_truth": "ref"})
    assert (s1.ground_truth, s2.ground_truth) == (None, "gt")
    err = load_error(path, mapping={"question": "q", "answer": "a", "ground_truth": "reff"})
    assert "'reff'" in str(err) and "no row has" in str(err) and "q, a, ref" in str(err)
