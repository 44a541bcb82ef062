"""Encodings: BOMs, the Windows-1252 fallback, binary files."""
import codecs

import pytest

from datafiles import load_error, write
from evaluator.io.datasets import inspect_dataset, load_dataset


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
