"""Error advice in each surface's own syntax: CLI flags, dashboard widgets, library keywords."""
import pytest

from datafiles import csv_text, load_error, write
from evaluator.io.datasets import CLI, DASHBOARD, LIBRARY, inspect_dataset

NO_ANSWER = [["question", "reply"], ["q", "a"]]


@pytest.mark.parametrize("surface, says, never", [
    (LIBRARY, "pass mapping={'answer': '<your column>'}", ["--mapping", "Column mapping"]),
    (CLI, "pass --mapping answer=COLUMN", ["mapping={", "Column mapping"]),
    (DASHBOARD, "choose the column for answer under Column mapping", ["mapping={", "--mapping"]),
])
def test_missing_column_advice(tmp_path, surface, says, never):
    err = load_error(write(tmp_path, "na.csv", csv_text(NO_ANSWER)), surface=surface)
    assert "no answer column" in str(err) and says in str(err)
    assert not any(word in str(err) for word in never), str(err)


@pytest.mark.parametrize("surface, rows, size", [
    (LIBRARY, "raise max_rows=..., or split the file", "raise max_bytes=..., or split the file"),
    (CLI, "raise it with --max-rows N (or RAGMETER_MAX_ROWS", "raise it with --max-mb MB (or RAGMETER_MAX_MB"),
    (DASHBOARD, "raise Max rows under Upload limits, or split the file",
     "raise Max file size under Upload limits, or split the file"),
])
def test_limit_advice(tmp_path, surface, rows, size):
    path = write(tmp_path, "big.csv", csv_text([["question", "answer"]] + [["q", "a"]] * 50))
    assert rows in str(load_error(path, max_rows=3, surface=surface))
    assert size in str(load_error(path, max_bytes=10, surface=surface))
    with pytest.raises(Exception, match="split the file"):
        inspect_dataset(path, max_bytes=10, surface=surface)
