"""Spreadsheets as people save them: .ods (io/opendocument.py), Excel's Unicode Text (.txt), headers over two rows
(io/headers.py), passages split in CSV as in .xlsx, human context headers, a recognised tool's unread columns named."""
import io
import zipfile
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.generate.documents import file_documents
from evaluator.io.datasets import CLI, inspect_dataset, load_dataset

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
# what the round-4 writer puts in every sheet (tests/fixtures/writers/sheets_round4_writer.py)
EXPECTED = [("q1", "How long is the refund window?", 2, "30 days from purchase."),
            ("q2", "Do you ship to Canada?", 1, None),
            ("q3", "ما هي مدة الاسترداد؟", 2, "30 يومًا.")]


def _fields(samples):
    return [(s.sample_id, s.question, len(s.contexts), s.ground_truth) for s in samples]


def cli(capsys, *argv):
    code = main(["evaluate", *map(str, argv), "--offline", "--no-history", "-q"])
    out, err = capsys.readouterr()
    return code, out, err.strip().splitlines()


@pytest.mark.parametrize("name", ["sheets_two_sheets.ods", "excel_group_header.xlsx", "sheets_group_header.csv",
                                  "excel_unicode_text.txt"])
def test_each_saved_sheet_loads_with_its_fields_and_passages(name):
    notes, warnings = [], []
    samples = load_dataset(FIXTURES / name, notes=notes, warnings=warnings)
    assert _fields(samples) == EXPECTED
    assert samples[0].contexts == ["Refund policy: refunds are accepted within 30 days of purchase.",
                                   "Refunds are paid to the original payment method\nwithin 5 business days."]
    assert samples[0].answer == "You can ask for a refund within 30 days of purchase."
    assert samples[1].metadata == {"Reviewer": "ben"}
    assert "Source chunks: 2 cells with an empty line between passages split into 4 contexts" in " ".join(notes)
    assert warnings == []


def test_an_ods_is_read_from_the_sheet_that_names_a_question():
    notes = []
    load_dataset(FIXTURES / "sheets_two_sheets.ods", notes=notes)
    assert notes[0].startswith("OpenDocument spreadsheet: sheet 'Samples' read (its header names a question); "
                               "other sheets not read: 'About'")
    with pytest.raises(DatasetError) as caught:
        load_dataset(FIXTURES / "sheets_two_sheets.ods", sheet="About")
    assert "sheet 'About', line 1: no question column and no answer column" in str(caught.value)


def _ods(content: str) -> bytes:
    """An .ods as LibreOffice lays it out: the mimetype first, then content.xml."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.spreadsheet")
        archive.writestr("content.xml", content)
    return out.getvalue()


ODS_HEAD = ('<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
            'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
            'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet>')


def test_an_ods_with_a_million_repeated_blank_rows_and_columns_reads_its_data_only():
    cell = '<table:table-cell office:value-type="string"><text:p>{}</text:p></table:table-cell>'
    row = '<table:table-row>{}<table:table-cell table:number-columns-repeated="16382"/></table:table-row>'
    body = (row.format(cell.format("Question") + cell.format("Answer"))
            + row.format(cell.format("What is<text:s text:c=\"2\"/>2+2?") +
                         '<table:table-cell office:value-type="float" office:value="4"><text:p>4</text:p>'
                         '</table:table-cell>')
            + '<table:table-row table:number-rows-repeated="1048574"><table:table-cell '
              'table:number-columns-repeated="16384"/></table:table-row>')
    data = _ods(ODS_HEAD + f'<table:table table:name="Sheet1">{body}</table:table>'
                + '</office:spreadsheet></office:body></office:document-content>')
    [sample] = load_dataset(io.BytesIO(data), name="big.ods")
    assert (sample.question, sample.answer) == ("What is  2+2?", "4")


@pytest.mark.parametrize("data, said", [
    (b"Question\tAnswer\n", "is not an OpenDocument spreadsheet (an .ods file is a zip archive); open it in LibreOffice"),
    (_ods("<broken"), "is a damaged OpenDocument spreadsheet"),
])
def test_a_bad_ods_is_refused_with_what_to_do(data, said):
    with pytest.raises(DatasetError) as caught:
        load_dataset(io.BytesIO(data), name="rows.ods")
    assert str(caught.value).startswith("rows.ods: ") and said in str(caught.value)


# -- a header over two rows -----------------------------------------------------------------------------
def test_group_labels_merged_over_the_names_are_one_header_said_in_a_note():
    notes = []
    load_dataset(FIXTURES / "excel_group_header.xlsx", notes=notes)
    assert ("Header on rows 1 and 2 (merged cells) read as one: 'ID', 'Question', 'Answer', 'Source chunks', "
            "'Reference answer', 'Reviewer'.") in notes
    preview = inspect_dataset(FIXTURES / "sheets_group_header.csv")
    assert preview.columns[:4] == ["ID", "Question", "Answer", "Source chunks"] and preview.row_count == 3
    assert preview.mapping["contexts"] == "Source chunks"


def test_names_merged_down_beside_a_group_of_sub_names_are_one_header():
    data = ("Question,Answer,Retrieved,\n,,Contexts,Doc ids\nWhat is 2+2?,4,two plus two,d1\n").encode()
    notes = []
    [sample] = load_dataset(io.BytesIO(data), name="m.csv", notes=notes)
    assert (sample.question, sample.contexts, sample.retrieval_ids) == ("What is 2+2?", ["two plus two"], ["d1"])
    assert notes[0].startswith("Header on lines 1 and 2 read as one")


def test_a_data_row_with_an_empty_question_is_still_data():
    with pytest.raises(DatasetError) as caught:
        load_dataset(io.BytesIO(b"question,answer,contexts\n,4,two plus two\n"), name="e.csv")
    assert "line 2, column 'question': the question is empty; fill it in or delete the row" in str(caught.value)


@pytest.mark.parametrize("source, said", [
    (FIXTURES / "excel_title_only.xlsx",
     "excel_title_only.xlsx, sheet 'Eval', line 1: holds one merged cell ('Support bot evaluation, week 48') and no "
     "column names: it is a title, and the row under it (row 2) is data. Insert a header row naming each column"),
    ("title.csv", "title.csv, line 1: holds one cell ('Support bot evaluation') and no column names: it is a title"),
])
def test_a_header_row_of_one_merged_cell_is_refused_naming_the_row(source, said):
    if source == "title.csv":
        source = io.BytesIO(b"Support bot evaluation,,,\nq1,How?,Fine,a passage\n")
    with pytest.raises(DatasetError) as caught:
        load_dataset(source, name=None if isinstance(source, Path) else "title.csv")
    assert said in str(caught.value)


# -- Excel's Unicode Text -------------------------------------------------------------------------------
def test_unicode_text_is_utf16_with_tabs_and_reads_like_its_tsv():
    raw = (FIXTURES / "excel_unicode_text.txt").read_bytes()
    assert raw.startswith(b"\xff\xfe") and b"\t\x00" in raw and b"\r\x00\n\x00" in raw
    preview = inspect_dataset(FIXTURES / "excel_unicode_text.txt")
    assert (preview.encoding, preview.row_count, preview.mapping["contexts"]) == ("utf-16", 3, "Source chunks")


def test_a_txt_without_tabs_is_refused_as_a_dataset_and_stays_a_document():
    text = b"Opening hours\n\nWe open at nine and close at five.\n"
    with pytest.raises(DatasetError) as caught:
        load_dataset(io.BytesIO(text), name="notes.txt")
    assert "notes.txt: is plain text, not a table: a .txt dataset is tab-separated, as Excel's 'Save As > Unicode " \
           "Text' writes it" in str(caught.value)
    assert "ragmeter generate --docs" in str(caught.value)
    [doc] = file_documents("notes.txt", text)
    assert doc.title == "Opening hours" and "nine" in doc.body


# -- passages and human headers ---------------------------------------------------------------------------
def test_a_csv_splits_passages_as_the_same_sheet_in_xlsx_does():
    as_csv = load_dataset(FIXTURES / "sheets_human.csv")
    as_xlsx = load_dataset(FIXTURES / "excel_two_sheets.xlsx")
    assert [s.contexts for s in as_csv] == [s.contexts for s in as_xlsx]
    assert [len(s.contexts) for s in as_csv] == [2, 1, 2]


def test_a_json_list_cell_in_a_csv_is_not_split_at_its_empty_lines():
    data = b'question,answer,contexts\nq,a,"[""one"",\n\n""two""]"\n'
    [sample] = load_dataset(io.BytesIO(data), name="j.csv")
    assert sample.contexts == ["one", "two"]


@pytest.mark.parametrize("header", ["Source chunks", "Sources", "Passages", "source_chunks"])
def test_common_human_headers_for_contexts_are_read_not_warned_about(header):
    warnings = []
    [sample] = load_dataset(io.BytesIO(f"Question,Answer,{header}\nq,a,p1\n".encode()), name="h.csv",
                            warnings=warnings)
    assert sample.contexts == ["p1"] and warnings == []


# -- no silent drop: a recognised format's unread columns ----------------------------------------------------
def test_a_recognised_formats_unread_columns_are_named_on_the_last_lines(capsys, tmp_path):
    data = tmp_path / "ragas_v0.csv"  # ragas 0.0.x's columns (ground_truths), and two a team added
    data.write_text('question,answer,contexts,ground_truths,latency_ms,run_tag\n'
                    'What is 2+2?,4,"[""two plus two is four""]","[""4""]",310,nightly\n', encoding="utf-8")
    code, _, err = cli(capsys, data)
    assert code == 0 and err[-1].startswith("ragmeter: ok")
    assert ("ragmeter: warning: ragas 0.0.x: 2 columns not read as any field, kept as metadata where filled: "
                       "'latency_ms', 'run_tag'; to score one as a field, pass --mapping FIELD=COLUMN.") == err[-2]
    warnings = []
    load_dataset(FIXTURES / "sheets_human.csv", warnings=warnings, surface=CLI)
    assert warnings == []  # a plain sheet's extra columns are its own metadata, nothing to warn about


@pytest.mark.parametrize("name", ["sheets_two_sheets.ods", "excel_unicode_text.txt", "sample.jsonl.gz",
                                  "sample.csv.zip", "excel_group_header.xlsx"])
def test_the_cli_scores_each_saved_file(capsys, name):
    code, out, err = cli(capsys, FIXTURES / name)
    assert code == 0, err
