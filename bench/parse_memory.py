"""Peak memory of reading a dataset, as a multiple of the file's size (issue 18 §B).

    python bench/parse_memory.py              # 50 MB files, the 50 MB list cell, a 20 MB upload
    python bench/parse_memory.py --mb 10      # smaller files (the cell stays at --cell-mb)

Each case runs in a fresh Python process: it imports ragmeter, notes its peak RSS (VmHWM in
/proc/self/status; Linux only), reads the file, and notes the peak again. Printed per case: file size, RSS before and at the
peak, and (peak - before) / size, the memory reading cost per byte of input. Cases:

- csv, jsonl, parquet: ordinary rows (a question, an answer, three ~400-character contexts);
- cell: one CSV row whose contexts cell is a Python list `['ab', 'ab', ...]` (what made
  ast.literal_eval take 182x the file);
- upload: what the dashboard's Evaluate page does with an upload of ordinary CSV rows: the
  preview (inspect_dataset) then the load (load_dataset), both from the uploaded bytes;
- upload-cell: the same with a list-cell CSV.

Generated data only; nothing from the network. RAGMETER_SOURCE=DIR measures another checkout's
code (e.g. main's, for a before/after table).
"""
from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PASSAGE = ("Refunds are issued to the original payment method within five business days of the "
           "return being received at the warehouse, and an email confirms the amount. ")


def _row(i: int) -> dict:
    contexts = [f"{i}-{k} " + PASSAGE * 2 for k in range(3)]
    return {"question": f"How long do refunds take for order {i}?",
            "answer": f"Refunds for order {i} take five business days.", "contexts": contexts}


def rows_for(mb: float) -> int:
    return max(1, int(mb * 2**20 / len(json.dumps(_row(0)))))


def write_csv(path: Path, mb: float) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["question", "answer", "contexts"])
        for i in range(rows_for(mb)):
            r = _row(i)
            out.writerow([r["question"], r["answer"], json.dumps(r["contexts"])])


def write_jsonl(path: Path, mb: float) -> None:
    with path.open("w", encoding="utf-8") as f:
        for i in range(rows_for(mb)):
            f.write(json.dumps(_row(i)) + "\n")


def write_parquet(path: Path, mb: float) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [_row(i) for i in range(rows_for(mb))]
    pq.write_table(pa.Table.from_pylist(rows), path, compression="none")


def write_cell(path: Path, mb: float) -> None:
    cell = "[" + "'ab', " * int(mb * 2**20 / 6) + "]"
    with path.open("w", newline="", encoding="utf-8") as f:
        csv.writer(f).writerows([["question", "answer", "contexts"], ["Q?", "A.", cell]])


# VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec, so a child would report the parent's
# peak (which held the generated data); VmHWM belongs to the new process image alone.
CHILD = """
import io, sys
from evaluator.io.datasets import inspect_dataset, load_dataset

def peak_kb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))

path, upload = sys.argv[1], sys.argv[2] == "1"
if path.endswith(".parquet"):
    import pyarrow.parquet  # its import (~60 MB) is not the cost of reading
before = peak_kb()
if upload:
    data = open(path, "rb").read()
    inspect_dataset(io.BytesIO(data), preview_rows=5, name=path)
    samples = load_dataset(io.BytesIO(data), name=path)
else:
    samples = load_dataset(path)
peak = peak_kb()
print(before, peak, len(samples))
"""


def measure(path: Path, upload: bool = False) -> dict:
    env = {**os.environ, "PYTHONPATH": os.environ.get("RAGMETER_SOURCE", str(ROOT))}
    out = subprocess.run([sys.executable, "-c", CHILD, str(path), "1" if upload else "0"], capture_output=True,
                         text=True, env=env, check=True, cwd=path.parent)  # not the repo: PYTHONPATH decides
    before, peak, rows = (int(v) for v in out.stdout.split())
    size = path.stat().st_size
    return {"size_mb": size / 2**20, "rows": rows, "before_mb": before / 1024, "peak_mb": peak / 1024,
            "ratio": (peak - before) * 1024 / size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=50, help="size of the csv/jsonl/parquet files (MB)")
    parser.add_argument("--cell-mb", type=float, default=50, help="size of the list cell (MB)")
    parser.add_argument("--upload-mb", type=float, default=20, help="size of the dashboard uploads (MB)")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        cases = [("csv", write_csv, args.mb, ".csv", False), ("jsonl", write_jsonl, args.mb, ".jsonl", False),
                 ("parquet", write_parquet, args.mb, ".parquet", False), ("cell", write_cell, args.cell_mb, ".csv", False),
                 ("upload", write_csv, args.upload_mb, ".csv", True),
                 ("upload-cell", write_cell, args.upload_mb, ".csv", True)]
        print(f"{'case':<12} {'file MB':>8} {'rows':>7} {'RSS before':>11} {'RSS peak':>9} {'(peak-before)/file':>19}")
        for name, writer, mb, suffix, upload in cases:
            path = folder / f"{name}{suffix}"
            writer(path, mb)
            r = results[name] = measure(path, upload)
            print(f"{name:<12} {r['size_mb']:>8.1f} {r['rows']:>7} {r['before_mb']:>9.0f}MB {r['peak_mb']:>7.0f}MB "
                  f"{r['ratio']:>18.1f}x", flush=True)
            path.unlink()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
