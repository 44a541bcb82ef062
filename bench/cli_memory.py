"""Peak memory of a whole CLI run, as a multiple of the dataset file's size (issue 28: at most 4x).

    python bench/cli_memory.py                        # an ~88 MB CSV, -o out.csv, history on and off
    python bench/cli_memory.py --mb 20 --output json  # smaller, JSON output
    python bench/cli_memory.py --before /path/to/other/checkout   # the same runs with that checkout's code

Writes a CSV of generated support-bot rows (a question, an answer, three contexts, a reference: ~1.6 KB a
row) and runs, each in a fresh process, `ragmeter evaluate DATA --offline -q -o OUT` with a fresh SQLite
history (the default: the run is a job whose worker keeps no rows, its report comes from the tallied
summary and -o is written from the history a page at a time) and with `--no-history` (the run is held in
memory). Peak RSS is the child's own (`os.wait4`'s ru_maxrss), so nothing of this script counts.
Printed per run: seconds, peak MB, peak / file size.
"""
from __future__ import annotations

import argparse
import csv
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import make_sample, table  # noqa: E402


def write_csv(path: Path, megabytes: float) -> int:
    """Rows until the file reaches `megabytes`; how many."""
    rng, n, limit = random.Random(0), 0, megabytes * 1_000_000
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["question", "answer", "contexts", "reference"])
        while f.tell() < limit:
            s = make_sample(rng, n)
            writer.writerow([s.question, s.answer, repr(list(s.contexts)), s.ground_truth or ""])
            n += 1
    return n


def measure(source: Path, args: list, env: dict) -> tuple:
    """(seconds, peak RSS in MB, exit code) of one `ragmeter` run from checkout `source`."""
    env = dict(env, PYTHONPATH=str(source))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "evaluator", *args], env=env, cwd=source,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    last = (proc.stderr.read().decode(errors="replace").strip().splitlines() or [""])[-1]
    code = os.waitstatus_to_exitcode(status)
    if code:
        print(f"  exit {code}: {last}", file=sys.stderr)
    return seconds, usage.ru_maxrss / 1024, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=88.0, help="dataset size in MB (default 88, the issue's file)")
    parser.add_argument("--output", choices=("csv", "json", "parquet", "html"), default="csv")
    parser.add_argument("--before", type=Path, help="another checkout to measure beside this one")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "big.csv"
        n = write_csv(data, opts.mb)
        size_mb = data.stat().st_size / 1e6
        print(f"{data.name}: {size_mb:.1f} MB, {n:,} rows; ragmeter evaluate --offline -o out.{opts.output}")
        env = {k: v for k, v in os.environ.items() if k != "RAGMETER_HISTORY"}
        env["HOME"] = tmp  # no config or history of this machine's user
        rows = []
        for label, source in [("this checkout", ROOT)] + ([("--before", opts.before.resolve())] if opts.before else []):
            for mode, extra in (("history (default)", ["--history", str(Path(tmp) / f"h{len(rows)}.db")]),
                                ("--no-history", ["--no-history"])):
                out = Path(tmp) / f"out.{opts.output}"
                seconds, peak, code = measure(source, ["evaluate", str(data), "--offline", "-q", "-o", str(out), *extra],
                                              env)
                rows.append((label, mode, f"{seconds:.1f}", f"{peak:.0f}", f"{peak / size_mb:.2f}x",
                             "ok" if code == 0 else f"exit {code}"))
        print(table(("code", "run", "seconds", "peak MB", "peak / file", "result"), rows))


if __name__ == "__main__":
    main()
