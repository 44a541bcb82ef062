"""The command line's dataset limits (issue 49): a row limit and a size limit with a default, a flag on
`evaluate`, the environment and the team file's [inputs] (team/settings.py), refused before the rows are read
with the number and how to raise it. Real files: workbooks written by openpyxl, CSV and JSONL on disk."""
import json

import pytest

from evaluator.cli.command import main
from evaluator.config import DEFAULT_MAX_ROWS
from evaluator.io.decoded import sizes
from evaluator.team.settings import Flags, input_limits


def workbook(path, rows, cell="a", notes=0):
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    if notes:  # a small sheet first, without a question column: the data sheet is still the one read
        small = book.create_sheet("notes")
        for i in range(notes):
            small.append([f"note {i}"])
    sheet = book.create_sheet("data")
    sheet.append(["question", "answer", "contexts"])
    for i in range(rows):
        sheet.append([f"Question {i}?", f"Answer {i}.", cell])
    book.save(path)
    return path


def run(capsys, *args):
    code = main(["evaluate", *map(str, args), "--offline", "-q", "--no-history"])
    return code, capsys.readouterr().err.strip().splitlines()[-1]


@pytest.fixture(autouse=True)
def no_limits_from_outside(monkeypatch):
    for name in ("RAGMETER_MAX_ROWS", "RAGMETER_MAX_MB", "RAGMETER_CONFIG"):
        monkeypatch.delenv(name, raising=False)


def test_a_workbook_over_the_row_limit_is_refused_with_the_count_the_limit_and_the_flag(tmp_path, capsys):
    code, last = run(capsys, workbook(tmp_path / "big.xlsx", 120), "--max-rows", 100)
    assert code == 2
    assert "big.xlsx: has 120 rows under the header of its sheet, more than the limit of 100" in last, last
    assert "--max-rows N" in last and "RAGMETER_MAX_ROWS" in last and "[inputs] max_rows" in last


def test_the_sheet_read_is_counted_when_another_sheet_is_small(tmp_path, capsys):
    code, last = run(capsys, workbook(tmp_path / "two.xlsx", 120, notes=3), "--max-rows", 100)
    assert code == 2
    assert "two.xlsx, sheet 'data': has 120 rows under its header, more than the limit of 100" in last, last


def test_a_workbook_within_the_limit_is_read_whole(tmp_path, capsys):
    code = main(["evaluate", str(workbook(tmp_path / "ok.xlsx", 100)), "--max-rows", "100", "--offline", "-q",
                 "--no-history", "-o", str(tmp_path / "out.json")])
    assert code == 0 and json.loads((tmp_path / "out.json").read_text())["num_samples"] == 100


@pytest.mark.parametrize("where", ["environment", "team file"])
def test_the_limit_comes_from_the_environment_or_the_team_file_and_the_flag_wins(where, tmp_path, capsys,
                                                                               monkeypatch):
    if where == "environment":
        monkeypatch.setenv("RAGMETER_MAX_ROWS", "5")
    else:
        (tmp_path / "team.toml").write_text("[inputs]\nmax_rows = 5\n", encoding="utf-8")
        monkeypatch.setenv("RAGMETER_CONFIG", str(tmp_path / "team.toml"))
    rows = "".join(json.dumps({"question": f"q{i}?", "answer": "a.", "contexts": ["c"]}) + "\n" for i in range(8))
    (tmp_path / "d.jsonl").write_text(rows, encoding="utf-8")
    code, last = run(capsys, tmp_path / "d.jsonl")
    assert code == 2 and "has more than 5 rows; raise it with --max-rows N" in last, last
    assert run(capsys, tmp_path / "d.jsonl", "--max-rows", 8)[0] == 0
    setting = input_limits(Flags())[0]
    assert setting.value == 5 and ("RAGMETER_MAX_ROWS" in setting.origin or "[inputs] max_rows" in setting.origin)


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path, capsys):
    row = json.dumps({"question": "q?", "answer": "a.", "contexts": ["x" * 1000]}) + "\n"
    (tmp_path / "d.jsonl").write_text(row * 1500, encoding="utf-8")  # 1.5 MB
    code, last = run(capsys, tmp_path / "d.jsonl", "--max-mb", 1)
    assert code == 2 and "more than the limit of 1,000,000 bytes; raise it with --max-mb MB" in last, last


def test_a_workbook_unpacking_past_the_size_limit_prints_two_different_sizes(tmp_path, capsys):
    code, last = run(capsys, workbook(tmp_path / "wide.xlsx", 400, cell="y " * 2000), "--max-mb", 1)
    assert code == 2 and "may be a zip bomb" in last and "--max-mb MB" in last, last
    unpacked, limit = last.split("unpacks to ")[1].split(" (")[0], last.split("more than the ")[1].split(" a ")[0]
    assert unpacked != limit and limit == "1.0 MB", last


@pytest.mark.parametrize("size, limit", [(2_147_483_650, 2_147_483_648), (1_000_001, 1_000_000), (3_000_000, 1)])
def test_sizes_never_print_a_size_equal_to_the_limit_it_exceeds(size, limit):
    shown, cap = sizes(size, limit)
    assert shown != cap


def test_a_bad_limit_is_a_usage_error(tmp_path, capsys, monkeypatch):
    (tmp_path / "d.jsonl").write_text(json.dumps({"question": "q", "answer": "a", "contexts": ["c"]}) + "\n")
    assert run(capsys, tmp_path / "d.jsonl", "--max-rows", 0) == (2, "ragmeter: error: --max-rows must be at least 1, not 0")
    monkeypatch.setenv("RAGMETER_MAX_MB", "lots")
    code, last = run(capsys, tmp_path / "d.jsonl")
    assert code == 2 and "RAGMETER_MAX_MB='lots'" in last, last


@pytest.mark.slow
def test_a_300000_row_workbook_is_refused_by_the_default_limit_before_its_rows_are_read(tmp_path, capsys):
    code, last = run(capsys, workbook(tmp_path / "huge.xlsx", 300_000))
    assert code == 2, last
    assert f"has 300,000 rows under the header of its sheet, more than the limit of {DEFAULT_MAX_ROWS:,}" in last, last
