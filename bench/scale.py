"""Scale: the Ray engine on generated rows, offline at 1 and 2 workers, then the judge path at 2 workers.

    python bench/scale.py [--rows 1000000] [--workers 1 2] [--judge-rows 1000] [--latency-ms 200]
                          [--concurrency 16] [--mock ../shared/tools/mock_openai.py]

1. Writes --rows unique samples to one Parquet file (copies of sample_data/sample.jsonl, every
   text tagged with its row number so no per-text cache helps).
2. Offline, for each --workers count, on a fresh local Ray cluster: rows/s over the whole run
   (read on the driver, score, collect: a Run with the Ray engine, as --engine ray), the peak RSS of each scoring worker (VmHWM) and of the
   driver, and the speed-up over the first count.
3. The judge path at the last --workers count against the mock OpenAI server with --latency-ms
   per call: --concurrency judge calls in flight in total (split among the workers), rows/s,
   calls and the calls in flight the server saw; then the same rows again with the judge cache
   the first run filled (every worker opens the same SQLite file): calls (should be 0) and rows/s.

Figures depend on the machine: on a 2-core machine shared with other work, 2 workers cannot
reach 2x. Runs take minutes at the default sizes; --rows 100000 gives a quicker look.
"""
from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Dict, List

from _common import DEFAULT_MOCK, start_mock, summarize_log

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluator import load_dataset  # noqa: E402
from evaluator.runs.ray_run import RayEngine  # noqa: E402
from evaluator.runs.run import OPENAI, Run, RunConfig  # noqa: E402

CHUNK = 50_000  # rows per Parquet row group while generating


def write_rows(path: Path, n: int) -> None:
    """`n` unique samples as Parquet, built column by column in chunks (memory stays flat)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    base = load_dataset(ROOT / "sample_data" / "sample.jsonl")
    writer = None
    for first in range(0, n, CHUNK):
        rows = [(base[i % len(base)], f" v{i}", i) for i in range(first, min(n, first + CHUNK))]
        table = pa.table({
            "sample_id": [f"{s.sample_id}-{i}" for s, _, i in rows],
            "question": [s.question + tag for s, tag, _ in rows],
            "answer": [s.answer + tag for s, tag, _ in rows],
            "contexts": [[c + tag for c in s.contexts] for s, tag, _ in rows],
            "ground_truth": [s.ground_truth for s, _, _ in rows],
            "expected_answer_keywords": [s.expected_answer_keywords for s, _, _ in rows],
            "expected_docs": [s.expected_docs for s, _, _ in rows],
            "category": [s.category for s, _, _ in rows],
        })
        writer = writer or pq.ParquetWriter(str(path), table.schema, compression="zstd")
        writer.write_table(table)
    writer.close()


def scoring_workers() -> List[Path]:
    """/proc entries of the Ray scoring-worker processes alive now."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cmdline").read_bytes().startswith(b"ray::MapWorker"):
                found.append(proc)
        except OSError:
            continue
    return found


def wait_for_no_workers(timeout: float = 60.0) -> None:
    """Let the previous cluster's workers exit, so they are not measured as this run's."""
    deadline = time.monotonic() + timeout
    while scoring_workers() and time.monotonic() < deadline:
        time.sleep(0.5)


class WorkerMemory:
    """Samples the peak RSS (VmHWM) and CPU seconds of every Ray scoring worker while a run goes on.

    The CPU seconds show whether every worker of the pool did its share.
    """

    def __init__(self, every: float = 0.5) -> None:
        self.every, self.peaks_kib, self.cpu_s = every, {}, {}
        self._tick = os.sysconf("SC_CLK_TCK")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    def __enter__(self) -> "WorkerMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _watch(self) -> None:
        while not self._stop.wait(self.every):
            for proc in scoring_workers():
                try:
                    hwm = next(l for l in (proc / "status").read_text().splitlines() if l.startswith("VmHWM"))
                    self.peaks_kib[proc.name] = max(self.peaks_kib.get(proc.name, 0), int(hwm.split()[1]))
                    fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                    self.cpu_s[proc.name] = (int(fields[11]) + int(fields[12])) / self._tick
                except (OSError, StopIteration):
                    continue


class Scored:
    """What one run on Ray gave: rows scored, seconds, the judge usage."""

    def __init__(self, run: Run, elapsed: float) -> None:
        self.rows, self.elapsed, self.usage = run.tally.n, elapsed, dict(run.report.usage or {})


def run_on_ray(data: Path, config: RunConfig, workers: int) -> Scored:
    """The file read, then scored on a fresh local cluster as `ragmeter evaluate --engine ray --no-history` does
    (a Run with the Ray engine under it, keeping no rows)."""
    start = time.perf_counter()
    run = Run.new(config, load_dataset(data), dataset_name=data.name)
    run.keep_rows = False
    engine = RayEngine(None, workers)
    try:
        engine.place(run, config)
        run.start().join()
    finally:
        engine.close()
    if run.status != "finished":
        raise SystemExit(f"the run ended {run.status}: {run.error}")
    return Scored(run, time.perf_counter() - start)


def offline(data: Path, rows: int, workers: int, out: Path) -> float:
    wait_for_no_workers()
    with WorkerMemory() as memory:
        run = run_on_ray(data, RunConfig(), workers)
    rate = run.rows / run.elapsed
    peaks = [round(kib / 1024) for kib in memory.peaks_kib.values()]
    cpu = [round(memory.cpu_s[pid]) for pid in memory.peaks_kib]
    driver = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    assert run.rows == rows, f"{run.rows} rows scored of {rows}"
    print(f"offline, {workers} worker(s): {run.rows:,} rows in {run.elapsed:.1f} s = {rate:,.0f} rows/s; "
          f"per worker process: peak RSS {peaks} MiB, CPU {cpu} s; driver peak RSS {driver:,.0f} MiB")
    return rate


def judged(data: Path, rows: int, workers: int, args: argparse.Namespace, tmp: Path) -> None:
    log = tmp / "mock.jsonl"
    with start_mock(Path(args.mock), log, ["--latency-ms", str(args.latency_ms)]) as mock:
        config = RunConfig(judge=OPENAI, model="mock", base_url=mock.base_url, max_workers=args.concurrency,
                           cache=str(tmp / "judge-cache.sqlite3"))
        for label in ("judge", "judge, cached rerun"):
            before = len(mock.records())
            run = run_on_ray(data, config, workers)
            seen = summarize_log(mock.records()[before:])
            usage = run.usage
            print(f"{label}, {workers} workers, {args.concurrency} calls in flight in total, "
                  f"{args.latency_ms:g} ms per call: {run.rows:,} rows in {run.elapsed:.1f} s = "
                  f"{run.rows / run.elapsed:,.1f} rows/s; server saw {seen.chat_calls:,} calls "
                  f"(mean in flight {seen.mean_in_flight:.1f}, peak {seen.peak_in_flight}); "
                  f"rows' usage: {usage['calls']:,} calls, {usage['cache_hits']:,} cache hits")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--judge-rows", type=int, default=1000, help="0 skips the judge path")
    parser.add_argument("--latency-ms", type=float, default=200.0)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--mock", default=str(DEFAULT_MOCK))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragmeter-scale-") as name:
        tmp = Path(name)
        start = time.perf_counter()
        write_rows(tmp / "rows.parquet", args.rows)
        size = (tmp / "rows.parquet").stat().st_size / 2**20
        print(f"generated {args.rows:,} rows in {time.perf_counter() - start:.1f} s ({size:,.0f} MiB Parquet)")
        rates: Dict[int, float] = {w: offline(tmp / "rows.parquet", args.rows, w, tmp / "out.parquet")
                                   for w in args.workers}
        first: List[int] = list(rates)
        for w in first[1:]:
            print(f"speed-up {w} vs {first[0]} worker(s): {rates[w] / rates[first[0]]:.2f}x")
        if args.judge_rows:
            write_rows(tmp / "judge.parquet", args.judge_rows)
            judged(tmp / "judge.parquet", args.judge_rows, args.workers[-1], args, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
