"""CSV as spreadsheets write it (";" and decimal commas, human headers, every missing column at once), the no
silent drop warnings, and the files a stakeholder opens: -o results.xlsx and CSV with reasoning and a BOM."""
import csv
import io
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import CLI, DASHBOARD, inspect_dataset, load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BOOK = FIXTURES / "excel_two_sheets.xlsx"


def cli(capsys, *argv):
    code = main(["evaluate", *map(str, argv), "--offline", "--no-history", "-q"])
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def test_excel_locale_csv_reads_semicolons_and_decimal_comma_labels():
    samples = load_dataset(FIXTURES / "excel_locale.csv")  # BOM, ";", 0,5 and 1,0 (pandas decimal=",")
    assert [s.metadata["human_labels"]["faithfulness"] for s in samples] == [1.0, 0.5, 1.0]
    assert samples[0].ground_truth == "30 days from purchase." and samples[2].question == "ما هي مدة الاسترداد؟"


@pytest.mark.parametrize("header, field", [
    ("Model answer", "answer"), ("model_answer", "answer"), ("Retrieved context(s)", "contexts"),
    ("Retrieved contexts", "contexts"), ("Expected answer", "ground_truth"), ("Reference Answer", "ground_truth"),
    ("ground_truth_answer", "ground_truth"), ("expected_response", "ground_truth"), ("  ID ", "sample_id"),
    ("Question", "question"), ("USER-QUESTION", "question"),
])
def test_human_headers_are_matched_in_any_case_and_spacing(header, field):
    preview = inspect_dataset(io.BytesIO(f"{header},other\nx,y\n".encode()), name="h.csv")
    assert preview.mapping.get(field) == header.strip()


def test_a_human_header_csv_needs_no_mapping():
    [first, *_] = load_dataset(FIXTURES / "sheets_human.csv")
    assert (first.sample_id, first.ground_truth) == ("q1", "30 days from purchase.")
    assert first.answer.startswith("You can ask for a refund")


def test_every_missing_column_is_reported_at_once_with_the_mapping_line(capsys, tmp_path):
    data = tmp_path / "sheet.csv"
    data.write_text("Frage,Antwort,Kontext\nWie lange?,30 Tage,Rückgabe: 30 Tage\n", encoding="utf-8")
    code, _, err = cli(capsys, data)
    assert code != 0
    last = err[-1]
    assert "no question column and no answer column. Columns found: Frage, Antwort, Kontext." in last
    assert last.endswith("Rename the columns or pass --mapping question=COLUMN --mapping answer=COLUMN")
    code, _, err = cli(capsys, data, "--mapping", "question=Frage", "--mapping", "answer=Antwort")
    assert code == 0


def test_an_unread_look_alike_column_is_warned_on_the_last_lines(capsys, tmp_path):
    data = tmp_path / "g.csv"
    data.write_text("Question,Answer,Gold answer (v2),Retrieved passages list\nWhat is 2+2?,4,4,two plus two\n",
                    encoding="utf-8")
    code, _, err = cli(capsys, data)
    assert code == 0 and err[-1] == "ragmeter: ok: 1 sample scored"
    assert err[-3:-1] == [
        "ragmeter: warning: column 'Gold answer (v2)' looks like a reference answer but is not read (no column gives "
        "ground_truth); if it holds a reference answer, pass --mapping ground_truth='Gold answer (v2)'.",
        "ragmeter: warning: column 'Retrieved passages list' looks like retrieved contexts but is not read (no column "
        "gives contexts); if it holds retrieved contexts, pass --mapping contexts='Retrieved passages list'."]
    code, _, err = cli(capsys, data, "--mapping", "ground_truth=Gold answer (v2)", "--mapping",
                       "contexts=Retrieved passages list")
    assert code == 0 and not any("warning" in line for line in err)


def test_the_preview_warns_in_the_dashboards_words():
    data = b"Question,Answer,Golden reply\nq,a,g\n"
    assert inspect_dataset(io.BytesIO(data), name="g.csv", surface=DASHBOARD).warnings == [
        "column 'Golden reply' looks like a reference answer but is not read (no column gives ground_truth); if it "
        "holds a reference answer, choose 'Golden reply' for ground_truth under Column mapping."]


# -- files a stakeholder opens -------------------------------------------------------------------------
def test_csv_report_has_a_bom_and_a_reasoning_column_per_metric(capsys, tmp_path):
    code, _, _ = cli(capsys, BOOK, "-o", tmp_path / "r.csv")
    raw = (tmp_path / "r.csv").read_bytes()
    assert code == 0 and raw.startswith(b"\xef\xbb\xbf")
    rows = list(csv.DictReader(io.StringIO(raw.decode("utf-8-sig"), newline="")))
    assert rows[2]["question"] == "ما هي مدة الاسترداد؟"
    assert rows[0]["faithfulness_reasoning"].startswith("Offline heuristic:")
    assert list(rows[0]).index("faithfulness_reasoning") > list(rows[0]).index("elapsed_sec")
    cli(capsys, BOOK, "-o", tmp_path / "plain.csv", "--no-bom")
    assert (tmp_path / "plain.csv").read_bytes().startswith(b'"sample_id",')


def test_xlsx_report_has_summary_and_samples_with_rtl_rows_frozen_header_and_filters(capsys, tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    data = tmp_path / "d.csv"
    data.write_text('question,answer,contexts\n"=HYPERLINK(""http://x"")",Paris,Paris is the capital.\n'
                    "ما هي مدة الاسترداد؟,30 يومًا,سياسة الاسترداد: 30 يومًا\n", encoding="utf-8")
    code, out, _ = cli(capsys, data, "-o", tmp_path / "r.xlsx")
    assert code == 0 and f"wrote {tmp_path / 'r.xlsx'}" in out
    book = openpyxl.load_workbook(tmp_path / "r.xlsx")
    assert book.sheetnames == ["Summary", "Samples"]
    summary = [row for row in book["Summary"].iter_rows(values_only=True)]
    metrics = {row[0]: row for row in summary if row[0] in ("faithfulness", "overall")}
    assert isinstance(metrics["faithfulness"][1], (int, float)) and metrics["faithfulness"][5] in (
        "Excellent", "Good", "Needs improvement", "Problem")
    assert ("WHAT TO IMPROVE",) == tuple(v for v in next(r for r in summary if r[0] == "WHAT TO IMPROVE") if v)
    samples = book["Samples"]
    header = [c.value for c in samples[1]]
    assert samples.freeze_panes == "A2" and samples.auto_filter.ref == f"A1:{samples.cell(1, len(header)).column_letter}3"
    assert "faithfulness_reasoning" in header
    question = header.index("question") + 1
    formula, arabic = samples.cell(2, question), samples.cell(3, question)
    assert formula.value == '=HYPERLINK("http://x")' and formula.data_type == "s"  # text, never a formula
    assert arabic.value == "ما هي مدة الاسترداد؟" and arabic.alignment.readingOrder == 2
    assert formula.alignment.readingOrder in (0, None)


def test_the_dashboards_downloads_give_excel_and_csv_with_bom():
    from evaluator import service

    report = service_report()
    files = service.run_files("d.xlsx", service.report_summary(report, {}), {}, report=report)
    assert files.csv().startswith(b"\xef\xbb\xbf")
    assert files.xlsx()[:2] == b"PK"


def service_report():
    from evaluator import RAGEvaluator
    from evaluator.judges.offline import OfflineJudge

    samples = load_dataset(BOOK, surface=CLI)
    return RAGEvaluator(OfflineJudge()).evaluate_dataset(samples)


def test_a_workbook_missing_its_columns_names_sheet_and_the_fix(capsys):
    code, _, err = cli(capsys, BOOK, "--sheet", "About")
    assert code != 0 and "sheet 'About', line 1: no question column and no answer column" in err[-1]
    with pytest.raises(DatasetError):
        load_dataset(BOOK, sheet="About")


@pytest.mark.parametrize("name", ["excel_locale.csv", "sheets_human.csv"])
def test_the_cli_scores_spreadsheet_csvs_without_flags(capsys, name):
    code, _, err = cli(capsys, FIXTURES / name)
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored"
    assert not any("warning" in line for line in err)
