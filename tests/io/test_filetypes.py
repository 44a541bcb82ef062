"""One table of file types, one CSV formula guard: every reader and writer that used to dispatch on the
extension itself now goes through io/filetypes.py, and every CSV ragmeter writes is guarded the same way."""
import csv
import io
import json
import re
from pathlib import Path

import pytest

from evaluator import EvalReport, EvalSample, OfflineJudge, RAGEvaluator
from evaluator.cli.args import build_parser
from evaluator.cli.command import main
from evaluator.errors import DatasetError, OutputError, ReviewError
from evaluator.generate.documents import load_documents
from evaluator.generate import items as testsets  # (its testset_bytes would be collected as a test)
from evaluator.generate.items import TestItem, write_testset
from evaluator.io.datasets import load_dataset
from evaluator.report.export import results_csv
from evaluator.io.filetypes import DATASET, DOCUMENTS, LABELS, REPORT, TESTSET, file_type, formats_for, readable_formats
from evaluator.io.outputs import check_output
from evaluator.review.labels import write_labels

# Cells a spreadsheet would run: the four classic prefixes, and tab / CR, which some skip before a formula.
FORMULAS = ["=1+2", "+1+2", "-1+2", "@SUM(A1)", "\t=cmd|' /C calc'!A0", "\r=cmd|' /C calc'!A0"]
# What each becomes: a ' before the prefix, and one after a leading tab / CR too (a tab-splitting reader
# would otherwise see a cell "=cmd...").
GUARDED = {f: "'" + f[0] + "'" + f[1:] if f[0] in "\t\r" else "'" + f for f in FORMULAS}


def read_csv(text):
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline="")))


# -- the guard, through each writer ------------------------------------------------------------------
@pytest.mark.parametrize("formula", FORMULAS)
def test_a_generated_item_that_looks_like_a_formula_is_text_in_the_csv(formula, tmp_path):
    item = TestItem("gen-1", formula, "an answer", ["Doc"], ["k"])
    path = tmp_path / "t.csv"
    write_testset([item], str(path))
    [row] = read_csv(path.read_bytes().decode("utf-8-sig"))
    assert row["question"] == GUARDED[formula]
    assert read_csv(testsets.testset_bytes([item], ".csv").decode("utf-8-sig"))[0]["question"] == GUARDED[formula]
    assert json.loads(row["expected_docs"]) == ["Doc"]  # lists stay JSON, not a quoted formula


@pytest.mark.parametrize("formula", FORMULAS)
def test_review_labels_csv_neutralises_formulas(formula, tmp_path):
    path = tmp_path / "labels.csv"
    write_labels([{"sample_id": "s1", "question": formula, "answer": "a", "contexts": [formula],
                   "ground_truth": "", "human_faithfulness": 0.5}], str(path))
    [row] = read_csv(path.read_bytes().decode("utf-8-sig"))
    assert row["question"] == GUARDED[formula] and json.loads(row["contexts"]) == [formula]
    assert row["human_faithfulness"] == "0.5"


@pytest.mark.parametrize("formula", FORMULAS)
def test_report_csv_and_cli_csv_output_neutralise_formulas(formula, tmp_path, monkeypatch):
    sample = EvalSample(formula, "an answer", ["a context"], sample_id="s1")
    [row] = read_csv(results_csv(EvalReport([RAGEvaluator(OfflineJudge()).evaluate(sample)])))
    assert row["question"] == GUARDED[formula]
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"question": formula, "answer": "an answer", "contexts": ["c"]}) + "\n",
                    encoding="utf-8")
    assert main(["evaluate", str(data), "--offline", "-q", "-o", str(tmp_path / "out.csv")]) == 0
    [row] = read_csv((tmp_path / "out.csv").read_bytes().decode("utf-8"))
    assert row["question"] == "'" + formula.strip()  # the loader trims the question; the guard still holds


def test_no_module_writes_csv_but_the_one_with_the_guard():
    root = Path(__file__).resolve().parents[2]
    writers = [p.relative_to(root).as_posix() for folder in ("evaluator", "pages") for p in (root / folder).rglob("*.py")
               if re.search(r"csv\.(writer|DictWriter)\(|\.to_csv\(", p.read_text(encoding="utf-8"))]
    assert writers == ["evaluator/io/filetypes.py"]


def test_plain_text_and_numbers_are_left_alone(tmp_path):
    path = tmp_path / "labels.csv"
    write_labels([{"sample_id": "s-1", "question": "a - b = c?", "human_x": -0.0}], str(path))
    [row] = read_csv(path.read_bytes().decode("utf-8-sig"))
    assert row == {"sample_id": "s-1", "question": "a - b = c?", "human_x": "-0.0"}


# -- one table: each purpose takes its types, and says which when refused ------------------------------
def test_each_purpose_takes_its_own_types():
    assert formats_for(DATASET) == [".csv", ".tsv", ".jsonl", ".ndjson", ".json", ".parquet", ".eval", ".xlsx", ".xlsm",
                                    ".ods", ".gz", ".zip", ".txt"]
    assert set(formats_for(TESTSET)) == set(formats_for(LABELS)) == {".csv", ".jsonl", ".parquet"}
    assert set(formats_for(REPORT)) == {".csv", ".json", ".parquet", ".html", ".htm", ".xlsx", ".pdf"}
    assert {".pdf", ".md", ".txt", ".html", ".csv"} <= set(formats_for(DOCUMENTS))
    assert file_type("x/Data.TSV", DATASET).delimiter == "\t" and file_type("r.htm", REPORT).format == "html"
    assert set(readable_formats()) == set(formats_for(DATASET)) | set(formats_for(DOCUMENTS))


@pytest.mark.parametrize("refused, error, listed", [
    (lambda p: load_dataset(p / "rows.numbers"), DatasetError, formats_for(DATASET)),
    (lambda p: load_documents(p / "notes.docx"), DatasetError, formats_for(DOCUMENTS)),
    (lambda p: write_testset([], str(p / "out.xlsx")), DatasetError, formats_for(TESTSET)),
    (lambda p: write_labels([], str(p / "out.xlsx")), ReviewError, formats_for(LABELS)),
    (lambda p: check_output(str(p / "out.ods")), OutputError, formats_for(REPORT)),
])
def test_an_unknown_type_names_the_file_and_the_types_that_purpose_takes(refused, error, listed, tmp_path):
    for name in ("rows.numbers", "notes.docx", "out.xlsx", "out.ods"):
        (tmp_path / name).write_bytes(b"PK")
    with pytest.raises(error) as caught:
        refused(tmp_path)
    message = str(caught.value)
    assert str(tmp_path) in message and any(f"'{s}'" in message for s in (".xlsx", ".docx", ".ods", ".numbers"))
    assert all(suffix in message for suffix in listed)


def test_documents_read_text_and_tables_by_the_table(tmp_path):
    (tmp_path / "guide.md").write_text("# Opening hours\n\nWe open at nine.\n", encoding="utf-8")
    (tmp_path / "faq.tsv").write_text("title\tbody\nReturns\tWithin 30 days.\n", encoding="utf-8")
    (tmp_path / "ignored.xlsx").write_bytes(b"PK")
    docs = load_documents(str(tmp_path))
    assert sorted(d.title for d in docs) == ["Opening hours", "Returns"]


def test_ragmeter_help_lists_every_readable_format():
    text = build_parser().format_help()
    assert all(suffix in text for suffix in readable_formats())


def test_generate_refuses_an_output_type_before_reading_any_document(tmp_path, capsys):
    assert main(["generate", "--docs", str(tmp_path / "no_docs_here"), "--offline", "-o", str(tmp_path / "t.xlsx")]) == 2
    said = capsys.readouterr().err
    assert "t.xlsx" in said and all(suffix in said for suffix in formats_for(TESTSET))


# Hostile cells as an attacker plants them: a formula after a `;`, `,` or tab inside an ordinary-looking note,
# and the classic prefixes alone (issue 49: `note;=cmd|...` used to be written unquoted and split by Excel).
HOSTILE = ["note;=cmd|' /C calc'!A0;end", "a,+1;@SUM(1)", "x\t-2+3+cmd|' /C calc'!A0", "+1", "@SUM(1)", "-2",
           "\t=cmd|' /C calc'!A0", "\r=cmd|' /C calc'!A0", "ok;\t=1+1", "line\n=2+2", "a;-2,+3"]


@pytest.mark.parametrize("delimiter", [",", ";", "\t"])
def test_an_export_of_hostile_cells_has_no_formula_cell_whatever_separator_a_spreadsheet_splits_on(
        delimiter, tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps({"question": f"q{i} {cell}", "answer": cell, "contexts": [cell],
                                        "ground_truth": cell}) + "\n" for i, cell in enumerate(HOSTILE)),
                    encoding="utf-8")
    assert main(["evaluate", str(data), "--offline", "-q", "-o", str(tmp_path / "out.csv")]) == 0
    text = (tmp_path / "out.csv").read_bytes().decode("utf-8-sig")
    cells = [cell for row in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) for cell in row]
    assert len(cells) > len(HOSTILE)
    assert [c for c in cells if c.startswith(("=", "+", "-", "@", "\t", "\r"))] == []
    if delimiter == ",":  # read as written, every field is the text with a ' before each formula prefix
        answers = [row["answer"] for row in read_csv(text)]
        assert [a.replace("'", "") for a in answers] == [h.replace("'", "").strip() for h in HOSTILE]  # the loader trims
        assert answers[0] == "note;'=cmd|' /C calc'!A0;end"


def test_every_field_is_quoted_and_numbers_stay_numbers(tmp_path):
    path = tmp_path / "labels.csv"
    write_labels([{"sample_id": "s-1", "question": "q", "human_x": -0.25}], str(path))
    lines = path.read_bytes().decode("utf-8-sig").splitlines()
    assert lines == ['"sample_id","question","human_x"', '"s-1","q","-0.25"']
