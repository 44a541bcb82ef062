"""CSV reading: delimiters, physical line numbers, ragged rows, quoting."""

import pytest

from datafiles import load_error, write
from evaluator.io.datasets import load_dataset
from evaluator.errors import DatasetError


def test_semicolon_and_tab_delimited_csv(tmp_path):
    [s] = load_dataset(write(tmp_path, "s.csv", "question;answer;contexts\nq;a, with comma;c\n"))
    assert s.answer == "a, with comma"
    [t] = load_dataset(write(tmp_path, "t.tsv", "question\tanswer\nq\ta\n"))
    assert t.answer == "a"


def test_csv_line_numbers_are_physical_lines(tmp_path):
    # Row 1 spans lines 2-4 (a quoted cell with line breaks); the blank line 5 is skipped.
    text = 'question,answer,contexts\n"multi\nline\nquestion",a,c\n\nq,a,"[""unclosed"""\n'
    err = load_error(write(tmp_path, "pl.csv", text))
    assert (err.line, err.column) == (6, "contexts")
    assert "JSON array with double quotes" in str(err)


def test_too_many_cells_in_a_row(tmp_path):
    err = load_error(write(tmp_path, "w.csv", "question,answer\nq,a,extra\n"))
    assert err.line == 2 and "quotes" in str(err)


def test_short_rows_are_padded(tmp_path):
    [s] = load_dataset(write(tmp_path, "s.csv", "question,answer,ground_truth\nq,a\n"))
    assert (s.answer, s.ground_truth) == ("a", None)


@pytest.mark.parametrize("text", ["", "\n\n", "question,answer\n", "question,answer\n\n,\n"])
def test_empty_and_header_only_csv(tmp_path, text):
    err = load_error(write(tmp_path, "e.csv", text))
    assert "e.csv" in str(err) and ("no rows" in str(err) or "is empty" in str(err))


def test_unterminated_quote_is_an_error_naming_its_line(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text('question,answer,contexts\nok?,fine,"[""c""]"\n"never closed,answer,ctx\nq,a,c\n')
    with pytest.raises(DatasetError) as err:
        load_dataset(path)
    assert "quotes.csv" in str(err.value) and "line 3" in str(err.value) and "quoting" in str(err.value)
