"""Reading a 10,000-row workbook: openpyxl (read-only) against python-calamine, and ragmeter's own load.

    .venv/bin/python bench/xlsx_read.py [ROWS]

Writes a workbook as a team's export looks (question, model answer, three passages split by empty lines,
reference, id, an Arabic row in ten) with openpyxl, then in a fresh process for each reader (so one reader's
memory never counts against another's) reads every cell, and prints seconds and peak RSS side by side.
ragmeter reads with openpyxl: the same package writes `-o results.xlsx`, it streams rows in read-only mode
(memory does not grow with the sheet), and it is pure Python (no wheel to miss on a platform).
"""
from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PASSAGE = "Refunds are accepted within 30 days of purchase when the item is unused and in its box. " * 3


def write(path: Path, rows: int) -> None:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Samples")
    sheet.append(["ID", "Question", "Model answer", "Retrieved context(s)", "Expected answer"])
    for i in range(rows):
        question = "ما هي مدة الاسترداد؟" if i % 10 == 0 else f"How long is the refund window for order {i}?"
        sheet.append([f"q{i}", question, f"You can ask for a refund within {i % 60} days.",
                      "\n\n".join(f"{PASSAGE} (row {i}, passage {p})" for p in range(3)), "30 days from purchase."])
    book.save(path)


def read_openpyxl(path: str) -> int:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    cells = sum(len(row) for row in book["Samples"].iter_rows(values_only=True))
    book.close()
    return cells


def read_calamine(path: str) -> int:
    from python_calamine import CalamineWorkbook

    return sum(len(row) for row in CalamineWorkbook.from_path(path).get_sheet_by_name("Samples").to_python())


def read_ragmeter(path: str) -> int:
    from evaluator.io.datasets import load_dataset

    return len(load_dataset(path))


READERS = {"openpyxl": read_openpyxl, "python-calamine": read_calamine, "ragmeter load_dataset": read_ragmeter}


def child(reader: str, path: str) -> None:
    start = time.perf_counter()
    count = READERS[reader](path)
    seconds = time.perf_counter() - start
    print(json.dumps({"count": count, "seconds": seconds,
                      "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main(rows: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.xlsx"
        write(path, rows)
        baseline = json.loads(subprocess.run([sys.executable, "-c", "import json, resource; print(json.dumps("
                                              "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024))"],
                                             capture_output=True, text=True, check=True).stdout)
        print(f"{rows:,} rows, {path.stat().st_size / 1e6:.1f} MB workbook; an empty Python: {baseline:.0f} MB RSS")
        print(f"{'reader':24} {'seconds':>8} {'peak RSS MB':>12} {'vs openpyxl':>12}")
        first = None
        for reader in READERS:
            out = subprocess.run([sys.executable, __file__, "--child", reader, str(path)], capture_output=True,
                                 text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
            found = json.loads(out.stdout.strip().splitlines()[-1])
            first = first or found
            print(f"{reader:24} {found['seconds']:8.2f} {found['peak_mb']:12.0f} "
                  f"{found['seconds'] / first['seconds']:11.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        child(sys.argv[2], sys.argv[3])
    else:
        main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
