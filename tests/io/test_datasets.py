"""load_dataset / inspect_dataset as a whole: row numbering, ids, limits, previews, the bundled sample.

Each reading step has its own test file: test_sources, test_encodings, test_csv_rows, test_json_rows,
test_dialects, test_plans, test_cells.
"""
from datafiles import csv_text, jsonl_text, load_error, SAMPLE, write
from evaluator.io.datasets import inspect_dataset, load_dataset
from evaluator.metrics.scoring import expected_doc_recall


def test_tutorial_columns_with_answer_and_contexts(tmp_path):
    text = csv_text([
        ["id", "question", "answer", "contexts", "expected_answer_keywords", "expected_docs", "category"],
        ["t1", "Q?", "A.", '["Doc A: x"]', '["alpha", "beta"]', '["Doc A"]', "billing"],
    ])
    [s] = load_dataset(write(tmp_path, "t.csv", text))
    assert (s.sample_id, s.expected_answer_keywords, s.expected_docs, s.category) == \
        ("t1", ["alpha", "beta"], ["Doc A"], "billing")


def test_empty_question_names_line_and_column(tmp_path):
    text = csv_text([["question", "answer"], ["q", "a"], ["", "a"]])
    err = load_error(write(tmp_path, "eq.csv", text))
    assert (err.line, err.column) == (3, "question")
    assert str(err).startswith(f"{tmp_path / 'eq.csv'}, line 3, column 'question': ")
    assert "fill it in or delete the row" in str(err)


def test_duplicate_sample_ids_name_both_lines(tmp_path):
    text = csv_text([["sample_id", "question", "answer"], ["a1", "q", "a"], ["b", "q", "a"], ["a1", "q", "a"]])
    err = load_error(write(tmp_path, "dup.csv", text))
    assert "'a1'" in str(err) and "line 2" in str(err) and "line 4" in str(err)
    assert err.column == "sample_id" and "unique" in str(err)


def test_max_rows_stops_at_the_first_row_over(tmp_path):
    text = "question,answer\n" + "".join(f"q{i},a\n" for i in range(10_001))
    path = write(tmp_path, "rows.csv", text)
    err = load_error(path, max_rows=10_000)
    assert "more than 10,000 rows" in str(err) and "max_rows" in str(err) and "split the file" in str(err)
    assert len(load_dataset(path, max_rows=10_001)) == 10_001
    # A broken row after the limit is never reached: reading stopped at row max_rows + 1.
    path = write(tmp_path, "rows2.csv", "question,answer\nq1,a\nq2,a\nq3,a\n,broken\n")
    assert "more than 2 rows" in str(load_error(path, max_rows=2))


def test_inspect_reports_columns_rows_mapping_and_missing(tmp_path):
    text = csv_text([["prompt", "answer", "human_faithfulness"]] + [[f"q{i}", "a", "1"] for i in range(8)])
    preview = inspect_dataset(write(tmp_path, "p.csv", text), preview_rows=3)
    assert preview.format == "csv" and preview.encoding == "utf-8"
    assert preview.columns == ["prompt", "answer", "human_faithfulness"]
    assert preview.rows == [{"prompt": f"q{i}", "answer": "a", "human_faithfulness": "1"} for i in range(3)]
    assert preview.mapping == {"answer": "answer"} and preview.missing == ["question"]
    assert preview.row_count == 8 and preview.label_columns == ["human_faithfulness"]


def test_inspect_jsonl_collects_keys_of_all_rows(tmp_path):
    objs = [{"question": "q", "answer": "a"}, {"question": "q", "answer": "a", "reference": "r"}]
    preview = inspect_dataset(write(tmp_path, "p.jsonl", jsonl_text(objs)), preview_rows=1)
    assert preview.columns == ["question", "answer", "reference"] and preview.rows == objs[:1]
    assert preview.mapping["ground_truth"] == "reference" and preview.row_count == 2


def test_sample_csv_and_jsonl_load_to_equal_samples():
    from_csv = load_dataset(SAMPLE / "sample.csv")
    from_jsonl = load_dataset(SAMPLE / "sample.jsonl")
    assert from_csv == from_jsonl
    assert len(from_csv) >= 24


def test_sample_data_has_the_promised_mix():
    samples = load_dataset(SAMPLE / "sample.jsonl")
    arabic = [s for s in samples if any("\u0600" <= ch <= "\u06ff" for ch in s.question)]
    assert len(arabic) >= 6
    assert any(s.ground_truth is None for s in samples) and any(s.ground_truth for s in samples)
    assert sum(bool(s.expected_answer_keywords) for s in samples) >= 10
    assert sum(bool(s.expected_docs) for s in samples) >= 10
    assert len({s.category for s in samples if s.category}) >= 5
    labelled = [s for s in samples if "human_labels" in s.metadata]
    assert {v for s in labelled for v in s.metadata["human_labels"].values()} == {0.0, 1.0}
    # Contexts begin with their document's title, so expected-doc recall can match them; only the
    # two rows with a retrieval failure written in (en-10, en-11) miss a document.
    recall = {s.sample_id: expected_doc_recall(s.contexts, s.expected_docs).score
              for s in samples if s.expected_docs}
    assert {sid for sid, score in recall.items() if score < 1.0} == {"en-10", "en-11"}
    assert len(recall) >= 20
