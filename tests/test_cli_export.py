"""`ragmeter export RUN_ID -o FILE`: a run scored through the CLI into a temporary history, then written as every
file the Report page downloads, each opened with its own reader; the usage errors exit 2 and say what to do."""
from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from evaluator.cli import main
from evaluator.service.exports import EXPORT_TYPES, export_bytes, stored_run_files
from evaluator.store.history import RunStore
from clitext import listed_runs

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "sample.jsonl"


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    """(history, run id, metric names) of sample.jsonl scored offline by `ragmeter evaluate`."""
    history = str(tmp_path_factory.mktemp("export") / "history.sqlite3")
    assert main(["evaluate", str(SAMPLE), "--offline", "-q", "--history", history]) == 0
    store = RunStore(history)
    [info] = store.list_runs()
    return history, info.run_id, list(store.get_summary(info.run_id)["metric_names"])


def export(scored, path: Path) -> int:
    history, run_id, _ = scored
    return main(["export", run_id, "-o", str(path), "--history", history])


def test_every_type_the_dashboard_downloads_is_exported(scored, tmp_path, capsys):
    assert set(EXPORT_TYPES) == {"pdf", "html", "xlsx", "csv", "json", "parquet"}
    names, n = scored[2], sum(1 for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip())
    for ext in EXPORT_TYPES:
        assert export(scored, tmp_path / f"run.{ext}") == 0
        assert f"wrote {tmp_path / f'run.{ext}'}" in capsys.readouterr().out
    assert (tmp_path / "run.pdf").read_bytes().startswith(b"%PDF")
    html = (tmp_path / "run.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and all(name in html for name in names) and scored[1] in html
    doc = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert doc["num_samples"] == n and set(doc["mean_scores"]) == set(names) and len(doc["samples"]) == n
    with (tmp_path / "run.csv").open(encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == n and all(name in rows[0] for name in names)
    import openpyxl
    import pyarrow.parquet as pq

    book = openpyxl.load_workbook(tmp_path / "run.xlsx", read_only=True)
    assert book.sheetnames == ["Summary", "Samples"]
    assert len(list(book["Samples"].iter_rows())) == n + 1  # the header and a row per sample
    table = pq.read_table(tmp_path / "run.parquet")
    assert table.num_rows == n and all(name in table.column_names for name in names)


@pytest.mark.parametrize("ext", ["csv", "json", "xlsx"])
def test_the_command_writes_the_bytes_the_report_page_downloads(scored, tmp_path, ext):
    """One use case under both doors: the CLI's file is the Report button's (service.export_bytes)."""
    history, run_id, _ = scored
    assert export(scored, tmp_path / f"run.{ext}") == 0
    page = export_bytes(stored_run_files(RunStore(history), run_id), ext)
    if ext == "xlsx":  # a workbook's zip carries its write time: compare what the sheets hold
        import io

        import openpyxl

        def cells(source):
            book = openpyxl.load_workbook(source, read_only=True)
            return [[c.value for c in row] for ws in book.worksheets for row in ws.iter_rows()]

        assert cells(tmp_path / "run.xlsx") == cells(io.BytesIO(page))
    else:
        assert (tmp_path / f"run.{ext}").read_bytes() == page


def test_an_unknown_extension_exits_2_naming_the_supported_ones(scored, tmp_path, capsys):
    assert export(scored, tmp_path / "run.docx") == 2
    err = capsys.readouterr().err
    assert "not .docx" in err and all(f".{ext}" in err for ext in EXPORT_TYPES)
    assert not (tmp_path / "run.docx").exists()


def test_an_unknown_run_exits_2_saying_how_to_list_runs(scored, tmp_path, capsys):
    assert main(["export", "no-such-run", "-o", str(tmp_path / "x.pdf"), "--history", scored[0]]) == 2
    err = capsys.readouterr().err
    assert "no run 'no-such-run'" in err and "ragmeter runs" in err
    assert main(["runs", "--history", scored[0]]) == 0
    assert [r["RUN"] for r in listed_runs(capsys.readouterr().out)] == [scored[1]]


def summary_cells(path) -> dict:
    """The Excel Summary sheet's two-column lines as {label: value} (the first of each label)."""
    import openpyxl

    found: dict = {}
    for row in openpyxl.load_workbook(path, read_only=True)["Summary"].iter_rows(values_only=True):
        if row and row[0] is not None and len(row) > 1:
            found.setdefault(str(row[0]), row[1])
    return found


def test_the_excel_summary_names_the_run_and_lists_its_notes(scored, tmp_path):
    history, run_id, _ = scored
    from evaluator.store.notes import add_note

    add_note(RunStore(history), run_id, "Two answers cite the old policy <b>PDF</b>", author="dana")
    assert export(scored, tmp_path / "run.xlsx") == 0
    cells = summary_cells(tmp_path / "run.xlsx")
    info = RunStore(history).get_run(run_id)
    assert cells["Run"].startswith("sample.jsonl · offline heuristics (default) · ")
    assert cells["Run id"] == run_id and cells["Date"] == info.created_at[:16].replace("T", " ")
    assert cells["Data version"] not in ("", None, "unknown") and "offline" in cells["Judge"]
    assert cells["ragmeter version"]
    assert any("dana" in label and text == "Two answers cite the old policy <b>PDF</b>" for label, text in cells.items())


def test_evaluate_writes_the_one_page_pdf_on_a4_or_letter(tmp_path, capsys):
    from pypdf import PdfReader

    history = str(tmp_path / "h.sqlite3")
    for page, size in (("a4", [595, 842]), ("letter", [612, 792])):
        out = tmp_path / f"report-{page}.pdf"
        assert main(["evaluate", str(SAMPLE), "--offline", "-q", "--history", history, "-o", str(out),
                     "--pdf-page", page]) == 0
        reader = PdfReader(out)
        assert len(reader.pages) == 1 and reader.pages[0].mediabox[2:] == size
        first = reader.pages[0].extract_text().splitlines()
        assert first[0].startswith("Overall score") and "offline" in first[1].lower(), first[:3]
        assert "sample.jsonl" in reader.pages[0].extract_text()
    assert f"wrote {out}" in capsys.readouterr().out


HOSTILE = ["<img src=x onerror=alert(1)>.jsonl", "report\u202egpj.exe.csv", "a\"b'c`d.jsonl", "x" * 300 + ".csv",
           "../../etc/passwd", "bidi\u2066\u200e\u200fname.csv", "  spaced name .jsonl", "C:\\temp\\data.csv"]


@pytest.mark.parametrize("dataset", HOSTILE)
@pytest.mark.parametrize("ext", sorted(EXPORT_TYPES))
def test_every_download_name_is_clean_whatever_the_dataset_is_called(dataset, ext):
    import re

    from evaluator import service

    name = service.export_file_name(dataset, "3f2a9c1d0e7b", ext)
    chart = service.chart_file_name(dataset, "3f2a9c1d0e7b", "means", "png")
    for shown in (name, chart):
        assert re.fullmatch(r"ragmeter-[\w-]+-3f2a9c1d0e7b-[a-z-]+\.[a-z]+", shown), shown
        assert not any(c in shown for c in "<>\"'`/\\ \u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f")
        assert len(shown) <= 100 and "--" not in shown
    assert name.endswith(f"-{service.EXPORT_TYPES[ext].kind}.{ext}")


def test_a_named_run_is_named_by_its_name_in_its_files(scored, tmp_path):
    history, run_id, _ = scored
    RunStore(history).rename_run(run_id, "  Before the   prompt change ")
    try:
        assert export(scored, tmp_path / "named.xlsx") == 0
        assert summary_cells(tmp_path / "named.xlsx")["Run"] == "Before the prompt change"
    finally:
        RunStore(history).rename_run(run_id, "")
