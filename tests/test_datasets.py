"""load_dataset / inspect_dataset / detect_mapping on real files written to tmp_path."""
import codecs
import csv
import io
import json
from pathlib import Path

import pytest

from evaluator.io.datasets import ALIASES, FIELDS, detect_mapping, inspect_dataset, load_dataset
from evaluator.errors import DatasetError
from evaluator.metrics.scoring import expected_doc_recall
from evaluator.model import EvalSample

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def write(tmp_path, name, text, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def csv_text(rows):
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    return buf.getvalue()


def jsonl_text(objs):
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def load_error(path, **kwargs):
    with pytest.raises(DatasetError) as info:
        load_dataset(path, **kwargs)
    return info.value


class Upload(io.BytesIO):
    """What Streamlit's UploadedFile offers: .name, .size, .read(), .getvalue()."""

    def __init__(self, data, name):
        super().__init__(data)
        self.name = name
        self.size = len(data)


# --- column families -----------------------------------------------------------------------------

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


def test_tutorial_columns_with_answer_and_contexts(tmp_path):
    text = csv_text([
        ["id", "question", "answer", "contexts", "expected_answer_keywords", "expected_docs", "category"],
        ["t1", "Q?", "A.", '["Doc A: x"]', '["alpha", "beta"]', '["Doc A"]', "billing"],
    ])
    [s] = load_dataset(write(tmp_path, "t.csv", text))
    assert (s.sample_id, s.expected_answer_keywords, s.expected_docs, s.category) == \
        ("t1", ["alpha", "beta"], ["Doc A"], "billing")


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


# --- cell forms ------------------------------------------------------------------------------------

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


def test_json_object_with_samples_or_data_list(tmp_path):
    for key in ("samples", "data"):
        text = json.dumps({key: [{"question": "q", "answer": "a", "contexts": "one"}]})
        [s] = load_dataset(write(tmp_path, "d.json", text))
        assert s.contexts == ["one"]


def test_jsonl_rows_may_omit_optional_keys(tmp_path):
    objs = [{"question": "q1", "answer": "a"}, {"question": "q2", "answer": "a", "ground_truth": "g", "category": "c"}]
    s1, s2 = load_dataset(write(tmp_path, "d.jsonl", jsonl_text(objs) + "\n\n"))
    assert (s1.ground_truth, s2.ground_truth, s2.category) == (None, "g", "c")


def test_semicolon_and_tab_delimited_csv(tmp_path):
    [s] = load_dataset(write(tmp_path, "s.csv", "question;answer;contexts\nq;a, with comma;c\n"))
    assert s.answer == "a, with comma"
    [t] = load_dataset(write(tmp_path, "t.tsv", "question\tanswer\nq\ta\n"))
    assert t.answer == "a"


# --- encodings -------------------------------------------------------------------------------------

@pytest.mark.parametrize("encoding", ["utf-8", "utf-8-sig", "utf-16", "utf-32"])
def test_unicode_encodings_with_bom(tmp_path, encoding):
    text = "question,answer\nما هي المدة؟,١٤ يومًا\n"
    [s] = load_dataset(write(tmp_path, "u.csv", text, encoding))
    assert (s.question, s.answer) == ("ما هي المدة؟", "١٤ يومًا")


def test_bom_does_not_hide_the_first_column(tmp_path):
    path = write(tmp_path, "b.csv", codecs.BOM_UTF8 + b"question,answer\nq,a\n")
    assert load_dataset(path)[0].question == "q"
    assert inspect_dataset(path).columns == ["question", "answer"]


def test_windows_1252_falls_back_and_says_so(tmp_path, caplog):
    path = write(tmp_path, "w.csv", "question,answer\ncafé – naïve,“quoted” €5\n", "cp1252")
    [s] = load_dataset(path)
    assert (s.question, s.answer) == ("café – naïve", "“quoted” €5")
    assert "not valid UTF-8" in caplog.text
    assert inspect_dataset(path).encoding == "cp1252"


def test_binary_and_workbook_files_are_refused(tmp_path):
    err = load_error(write(tmp_path, "x.csv", b"PK\x03\x04\x14\x00rest of a zip"))
    assert "Excel" in str(err) and "CSV UTF-8" in str(err)
    err = load_error(write(tmp_path, "n.csv", "question,answer\nq,a\n".encode("utf-16-le")))
    assert "NUL" in str(err) and "UTF-8" in str(err)


# --- error messages: file, line, column, advice -------------------------------------------------------

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


def test_empty_question_names_line_and_column(tmp_path):
    text = csv_text([["question", "answer"], ["q", "a"], ["", "a"]])
    err = load_error(write(tmp_path, "eq.csv", text))
    assert (err.line, err.column) == (3, "question")
    assert str(err).startswith(f"{tmp_path / 'eq.csv'}, line 3, column 'question': ")
    assert "fill it in or delete the row" in str(err)


def test_csv_line_numbers_are_physical_lines(tmp_path):
    # Row 1 spans lines 2-4 (a quoted cell with line breaks); the blank line 5 is skipped.
    text = 'question,answer,contexts\n"multi\nline\nquestion",a,c\n\nq,a,"[""unclosed"""\n'
    err = load_error(write(tmp_path, "pl.csv", text))
    assert (err.line, err.column) == (6, "contexts")
    assert "JSON array with double quotes" in str(err)


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


def test_duplicate_sample_ids_name_both_lines(tmp_path):
    text = csv_text([["sample_id", "question", "answer"], ["a1", "q", "a"], ["b", "q", "a"], ["a1", "q", "a"]])
    err = load_error(write(tmp_path, "dup.csv", text))
    assert "'a1'" in str(err) and "line 2" in str(err) and "line 4" in str(err)
    assert err.column == "sample_id" and "unique" in str(err)


def test_duplicate_columns(tmp_path):
    err = load_error(write(tmp_path, "dc.csv", "question,answer,Question\nq,a,b\n"))
    assert err.line == 1 and err.column == "Question" and "appears twice" in str(err)
    err = load_error(write(tmp_path, "dc.jsonl", '{"question": "q", "answer": "a", "ANSWER": "b"}\n'))
    assert err.line == 1 and "appears twice" in str(err)


def test_too_many_cells_in_a_row(tmp_path):
    err = load_error(write(tmp_path, "w.csv", "question,answer\nq,a,extra\n"))
    assert err.line == 2 and "quotes" in str(err)


def test_short_rows_are_padded(tmp_path):
    [s] = load_dataset(write(tmp_path, "s.csv", "question,answer,ground_truth\nq,a\n"))
    assert (s.answer, s.ground_truth) == ("a", None)


@pytest.mark.parametrize("value", ["yes", "7", "-1", "nan"])
def test_bad_human_labels(tmp_path, value):
    err = load_error(write(tmp_path, "hl.csv", csv_text([["question", "answer", "human_faithfulness"], ["q", "a", value]])))
    assert (err.line, err.column) == (2, "human_faithfulness") and "0/1, 0–1 or 1–5" in str(err)


@pytest.mark.parametrize("text", ["", "\n\n", "question,answer\n", "question,answer\n\n,\n"])
def test_empty_and_header_only_csv(tmp_path, text):
    err = load_error(write(tmp_path, "e.csv", text))
    assert "e.csv" in str(err) and ("no rows" in str(err) or "is empty" in str(err))


@pytest.mark.parametrize("name, text", [
    ("e.jsonl", ""), ("e.jsonl", "\n \n"), ("e.json", ""), ("e.json", " \n"), ("e.json", "[]"),
    ("e.json", '{"samples": []}'),
])
def test_empty_json_files_have_no_rows(tmp_path, name, text):
    err = load_error(write(tmp_path, name, text))
    assert str(err).startswith(f"{tmp_path / name}: has no rows")


def test_unknown_extension_and_missing_file(tmp_path):
    err = load_error(write(tmp_path, "d.xlsx", b"x"))
    assert "'.xlsx'" in str(err) and ".csv, .jsonl or .json" in str(err)
    err = load_error(tmp_path / "nowhere.csv")
    assert "does not exist" in str(err)
    err = load_error(tmp_path)
    assert "unknown file type" in str(err)


# --- sources and limits ---------------------------------------------------------------------------

def test_uploaded_file_like_object():
    data = (SAMPLE / "sample.csv").read_bytes()
    upload = Upload(data, "my upload.csv")
    upload.read()  # Streamlit may have read it already: getvalue() still returns everything
    assert load_dataset(upload) == load_dataset(SAMPLE / "sample.csv")


def test_plain_bytesio_with_name_and_name_override():
    buf = io.BytesIO(b'{"question": "q", "answer": "a"}\n')
    [s] = load_dataset(buf, name="upload.jsonl")
    assert s.question == "q"
    err = load_error(io.BytesIO(b"x"))
    assert "pass name=" in str(err)


def test_max_bytes_is_checked_before_reading(tmp_path):
    path = write(tmp_path, "big.csv", "question,answer\n" + "q,a\n" * 100)
    err = load_error(path, max_bytes=100)
    assert "more than the limit of 100 bytes" in str(err) and "split the file" in str(err)
    err = load_error(Upload(path.read_bytes(), "big.csv"), max_bytes=100)
    assert "big.csv" in str(err) and "max_bytes" in str(err)
    assert len(load_dataset(path, max_bytes=10_000)) == 100


def test_max_rows_stops_at_the_first_row_over(tmp_path):
    text = "question,answer\n" + "".join(f"q{i},a\n" for i in range(10_001))
    path = write(tmp_path, "rows.csv", text)
    err = load_error(path, max_rows=10_000)
    assert "more than 10,000 rows" in str(err) and "max_rows" in str(err) and "split the file" in str(err)
    assert len(load_dataset(path, max_rows=10_001)) == 10_001
    # A broken row after the limit is never reached: reading stopped at row max_rows + 1.
    path = write(tmp_path, "rows2.csv", "question,answer\nq1,a\nq2,a\nq3,a\n,broken\n")
    assert "more than 2 rows" in str(load_error(path, max_rows=2))


# --- inspect_dataset ----------------------------------------------------------------------------------

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


# --- the bundled sample ----------------------------------------------------------------------------

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


def test_jsonl_mapping_to_a_column_only_later_rows_have(tmp_path):
    objs = [{"q": "q1", "a": "x"}, {"q": "q2", "a": "y", "ref": "gt"}]
    path = write(tmp_path, "late.jsonl", jsonl_text(objs))
    s1, s2 = load_dataset(path, mapping={"question": "q", "answer": "a", "ground_truth": "ref"})
    assert (s1.ground_truth, s2.ground_truth) == (None, "gt")
    err = load_error(path, mapping={"question": "q", "answer": "a", "ground_truth": "reff"})
    assert "'reff'" in str(err) and "no row has" in str(err) and "q, a, ref" in str(err)


def test_unterminated_quote_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text('question,answer,contexts\nok?,fine,"[""c""]"\n"never closed,answer,ctx\nq,a,c\n')
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    assert "quotes.csv" in str(err.value) and "line 3" in str(err.value) and "quoting" in str(err.value)
