"""What saving to the run history costs a CLI run, side by side in one run (issue 28 item 4).

    python bench/history_writes.py [--rows 5000] [--repeats 3] [--backend sqlite|postgresql]

Runs the real command twice per repeat, alternating, on one generated CSV scored offline:
`ragmeter evaluate DATA --offline -q --no-history` and the same with `--history` (a fresh SQLite file in
a temp dir, or a throw-away PostgreSQL cluster from tests/pgserver.py). Prints each median wall time and
the ratio with/without; the target is at most 1.3x (rows are written in batches: runs/rows.py).
Before batching, one transaction per row made the 5,000-row run 5x slower with the history.
"""
from __future__ import annotations

import argparse
import contextlib
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator, List

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))


def write_rows(path: Path, n: int) -> None:
    """Rows shaped like a support-bot test set: a question, an answer, two contexts."""
    with path.open("w", newline="", encoding="utf-8") as f:
        out = csv.writer(f)
        out.writerow(["question", "answer", "contexts", "ground_truth"])
        for i in range(n):
            out.writerow([f"How long does shipping to region {i % 40} take for order type {i}?",
                          f"Orders of type {i} reach region {i % 40} in {i % 9 + 2} business days by courier.",
                          f'["Region {i % 40} deliveries take {i % 9 + 2} business days.", '
                          f'"Courier service covers order type {i} in every region."]',
                          f"{i % 9 + 2} business days."])


def timed(args: List[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "evaluator", "evaluate", *args], env=env,
                          capture_output=True, text=True)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"ragmeter exited {done.returncode}:\n{done.stderr[-2000:]}")
    return took


@contextlib.contextmanager
def history_location(backend: str, folder: Path) -> Iterator[Iterator[str]]:
    """A fresh history per run: a new SQLite file, or a new database on one PostgreSQL server."""
    if backend == "sqlite":
        yield (str(folder / f"h{i}.sqlite3") for i in range(10**6))
        return
    from pgserver import fresh_database, running_postgres

    with running_postgres() as url:
        yield (fresh_database(url, f"bench_{i}") for i in range(10**6))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", choices=("sqlite", "postgresql"), default="sqlite")
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragmeter-bench-") as tmp:
        folder = Path(tmp)
        data = folder / "rows.csv"
        write_rows(data, opts.rows)
        base = [str(data), "--offline", "-q", "--no-cache"]
        without: List[float] = []
        with_history: List[float] = []
        with history_location(opts.backend, folder) as locations:
            for _ in range(opts.repeats):
                without.append(timed([*base, "--no-history"]))
                with_history.append(timed([*base, "--history", next(locations)]))
    a, b = statistics.median(without), statistics.median(with_history)
    print(f"{opts.rows} offline rows, median of {opts.repeats}, history on {opts.backend}")
    print(f"  without history : {a:7.2f} s   ({', '.join(f'{t:.2f}' for t in without)})")
    print(f"  with history    : {b:7.2f} s   ({', '.join(f'{t:.2f}' for t in with_history)})")
    print(f"  ratio           : {b / a:7.2f}x  (target <= 1.3x)")


if __name__ == "__main__":
    main()
