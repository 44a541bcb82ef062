"""Comparing two stored runs (History's "Compare runs", `ragmeter compare`): time and peak memory.

    python bench/compare_speed.py [--rows 20000] [--before DIR]

Writes two runs of --rows generated samples (our own text: three ~450-character contexts, five metrics
with a few sentences of reasoning each, as a judged run stores them) into a fresh SQLite history, then
compares them in a fresh Python process per measurement and prints the seconds and the peak RSS it
added. `--before DIR` also measures another checkout's code on the same file (e.g. a worktree of an
earlier commit: `git worktree add /tmp/before <commit>`), side by side, with the ratios.
Issue 28: a comparison reads the narrow scores table and only the dozen rows it shows whole.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness")
CONTEXT = "The depot opens at seven and closes at nine; parcels wait there for five working days. " * 5
WHY = "The answer states a time that the context supports; the closing time is not claimed. " * 3

WRITE = """
import sys
from evaluator.store.history import RunStore
from evaluator.model import EvalSample, EvalResult, MetricScore, METHOD_BLEND
path, n = sys.argv[1], int(sys.argv[2])
store = RunStore(path)
data = [EvalSample(f"Question {i}: when does depot {i} open?", f"Depot {i} opens at seven.", [CONTEXT] * 3,
                   "At seven.", sample_id=f"s{i}") for i in range(n)]
for k in range(2):
    run = store.create_run(dataset_name="depots.csv", samples=data, settings={})
    for start in range(0, n, 2000):
        store.record_results(run, [(i, EvalResult(s.sample_id, sample=s, scores={
            m: MetricScore(m, ((i * (k + 3) + j) % 7) / 7, WHY, method=METHOD_BLEND) for j, m in enumerate(METRICS)}))
            for i, s in enumerate(data[start:start + 2000], start)])
    store.finish_run(run)
"""

MEASURE = """
import json, sys, time
def peak():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
from evaluator.store.history import RunStore
from evaluator.analysis.compare import compare_runs
store = RunStore(sys.argv[1])
runs = sorted(r.run_id for r in store.list_runs())
base = peak()
t0 = time.perf_counter()
cmp = compare_runs(store, runs[0], runs[1])
print(json.dumps({"seconds": time.perf_counter() - t0, "rss_mb": peak() - base, "pairs": cmp.n_paired}))
"""


def run(code: str, source: Path, *args: str) -> str:
    """`code` in a fresh interpreter that imports ragmeter from `source`; its stdout."""
    prelude = "\n".join([f"import sys; sys.path.insert(0, {str(source)!r})", f"METRICS = {METRICS!r}",
                          f"CONTEXT = {CONTEXT!r}", f"WHY = {WHY!r}", ""])
    done = subprocess.run([sys.executable, "-c", prelude + code, *args], cwd=source, capture_output=True,
                          text=True, check=True)
    return done.stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--before", type=Path, help="another checkout to measure on the same history")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "history.sqlite3")
        run(WRITE, ROOT, path, str(args.rows))
        sources = [("this checkout", ROOT)] + ([("before", args.before.resolve())] if args.before else [])
        figures = {}
        for label, source in sources:
            runs = [json.loads(run(MEASURE, source, path)) for _ in range(args.repeats)]
            best = min(runs, key=lambda r: r["seconds"])
            figures[label] = best
            print(f"{label:>14}: compare of two {args.rows:,}-row runs {best['seconds']:.2f} s, "
                  f"peak RSS +{best['rss_mb']:.0f} MB ({best['pairs']:,} pairs; best of {args.repeats})")
        if args.before:
            now, then = figures["this checkout"], figures["before"]
            print(f"{'ratio':>14}: {now['seconds'] / then['seconds']:.2f}x the time, "
                  f"{now['rss_mb'] / max(then['rss_mb'], 1):.2f}x the memory of before")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
