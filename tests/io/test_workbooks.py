"""Excel workbooks in (io/workbooks.py) through the CLI and the library: the sheet found or chosen, human headers,
passages split at empty lines, and each bad workbook refused with file, sheet/line and what to do."""
import io
import zipfile
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.datasets import CLI, inspect_dataset, load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BOOK = FIXTURES / "excel_two_sheets.xlsx"  # pandas DataFrame.to_excel: an About sheet, then Samples


def cli(capsys, *argv):
    code = main(["evaluate", *map(str, argv), "--offline", "--no-history", "-q"])
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


def test_the_cli_scores_a_workbook_from_its_samples_sheet_with_human_headers(capsys, tmp_path):
    code, _, err = cli(capsys, BOOK, "-o", tmp_path / "r.json")
    assert code == 0 and err[-1] == "ragmeter: ok: 3 samples scored"
    assert ("ragmeter: note: Excel workbook: sheet 'Samples' read (its header names a question); other sheets not "
            "read: 'About' (choose another with --sheet NAME, or the Sheet select in the dashboard).") in err
    assert ("ragmeter: note: Retrieved context(s): 2 cells with an empty line between passages split into 4 contexts "
            "(a single line break stays inside a passage).") in err


def test_a_workbook_reads_every_field_and_keeps_line_breaks_inside_a_passage():
    notes = []
    samples = load_dataset(BOOK, notes=notes)
    assert [s.sample_id for s in samples] == ["q1", "q2", "q3"]
    first, second, arabic = samples
    assert first.answer == "You can ask for a refund within 30 days of purchase."
    assert first.contexts == ["Refund policy: refunds are accepted within 30 days of purchase.",
                              "Refunds are paid to the original payment method\nwithin 5 business days."]
    assert first.ground_truth == "30 days from purchase." and second.ground_truth is None
    assert second.contexts == ["Shipping: we ship to the US and Canada."]
    assert arabic.question == "ما هي مدة الاسترداد؟" and len(arabic.contexts) == 2
    assert first.metadata == {"Reviewer notes": "ok", "human_labels": {"faithfulness": 1.0}}


def test_sheet_chosen_by_name_and_an_unknown_sheet_lists_the_sheets(capsys):
    preview = inspect_dataset(BOOK, sheet="About")
    assert (preview.sheets, preview.sheet, preview.columns) == (["About", "Samples"], "About", ["About"])
    code, _, err = cli(capsys, BOOK, "--sheet", "Data")
    assert code != 0
    assert err[-1].endswith("excel_two_sheets.xlsx: has no sheet named 'Data'; its sheets are: 'About', 'Samples'. "
                            "Choose one of these")


def test_a_sheet_without_a_header_row_is_refused_naming_sheet_and_line():
    with pytest.raises(DatasetError) as caught:
        load_dataset(FIXTURES / "excel_no_header.xlsx")
    message = str(caught.value)
    assert "excel_no_header.xlsx, sheet 'Data', line 1: has no header row" in message
    assert "insert a row above the data naming each column" in message


def test_a_password_protected_workbook_says_how_to_open_it():
    with pytest.raises(DatasetError) as caught:
        load_dataset(FIXTURES / "excel_password.xlsx")
    assert "excel_password.xlsx: is password-protected (encrypted)" in str(caught.value)
    assert "remove the password" in str(caught.value)


def test_a_broken_workbook_is_refused_with_what_to_do(tmp_path):
    cut = tmp_path / "cut.xlsx"
    cut.write_bytes(BOOK.read_bytes()[:2000])  # a download cut short
    with pytest.raises(DatasetError) as caught:
        load_dataset(cut)
    assert str(caught.value).startswith(f"{cut}: is a damaged Excel workbook")
    assert "save it again as .xlsx" in str(caught.value)


def zip_bomb(path: Path, megabytes: int) -> Path:
    """The fixture workbook with a sheet part of `megabytes` MB of spaces, deflated to a few kilobytes."""
    with zipfile.ZipFile(BOOK) as src, zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for info in src.infolist():
            out.writestr(info, src.read(info))
        out.writestr("xl/media/padding.bin", b" " * (megabytes * 1_000_000))
    return path


def test_a_zip_bomb_is_refused_from_its_declared_sizes_before_parsing(tmp_path):
    bomb = zip_bomb(tmp_path / "bomb.xlsx", 20)
    assert bomb.stat().st_size < 100_000
    with pytest.raises(DatasetError) as caught:
        load_dataset(bomb, max_bytes=5_000_000)
    message = str(caught.value)
    assert message.startswith(f"{bomb}: unpacks to 20.0 MB") and "it may be a zip bomb" in message
    assert len(load_dataset(bomb, max_bytes=50_000_000)) == 3  # under the budget it reads


def test_an_upload_of_a_workbook_reads_from_its_bytes():
    samples = load_dataset(io.BytesIO(BOOK.read_bytes()), name="team.xlsx", surface=CLI)
    assert len(samples) == 3


def test_a_value_right_of_the_header_is_refused_naming_the_row(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Data"
    sheet.append(["Question", "Answer"])
    sheet.append(["q", "a"])
    sheet.append(["q2", "a2", "stray"])
    path = tmp_path / "stray.xlsx"
    book.save(path)
    with pytest.raises(DatasetError) as caught:
        load_dataset(path)
    assert str(caught.value).startswith(f"{path}, sheet 'Data', line 3: has a value in column 3")
