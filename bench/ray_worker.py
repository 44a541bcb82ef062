"""A worker with engine "ray" against a local worker, side by side in one process on this machine: the same
large offline run queued twice, scored once by each (rows/s from start to the last row stored), then how
long a stop takes to end a run on each (from `ragmeter runs stop` to status "stopped").

    python bench/ray_worker.py [--rows 20000] [--ray-workers 2]

The Ray worker starts its own local cluster (its start-up is timed apart, not in rows/s). Offline rows
are pure Python: a local worker scores them on one thread, the Ray worker on `--ray-workers` processes.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluator.model import EvalSample  # noqa: E402
from evaluator.runs.jobs import stop_run, submit_new  # noqa: E402
from evaluator.runs.run import RunConfig  # noqa: E402
from evaluator.runs.worker import Worker  # noqa: E402
from evaluator.store.history import RunStore  # noqa: E402


def samples(n: int) -> list:
    return [EvalSample(f"How long does delivery take for order {i}?", f"Order {i} arrives in {i % 7 + 2} days.",
                       [f"Order {i}: delivery takes {i % 7 + 2} working days.", "Returns are free for 30 days."],
                       ground_truth=f"{i % 7 + 2} days", sample_id=f"o{i}") for i in range(n)]


def wait(store: RunStore, run_id: str, statuses: tuple, timeout: float = 1800.0) -> float:
    start = time.perf_counter()
    while store.get_run(run_id).status not in statuses and time.perf_counter() - start < timeout:
        time.sleep(0.05)
    return time.perf_counter() - start


def scored(store: RunStore, worker: Worker, rows: int) -> float:
    """Rows/s of one queued offline run scored by `worker`."""
    run_id = submit_new(store, RunConfig(), samples(rows), dataset_name="bench.jsonl")
    took = wait(store, run_id, ("finished", "failed"))
    assert store.get_run(run_id).n_done == rows, store.get_run(run_id)
    return rows / took


def stop_latency(store: RunStore, rows: int) -> float:
    """Seconds from a stop asked (another connection) to the run ended "stopped", halfway through a run."""
    run_id = submit_new(store, RunConfig(), samples(rows), dataset_name="stop.jsonl")
    while store.get_run(run_id).n_done < rows // 10:
        time.sleep(0.02)
    stop_run(RunStore(store.location), run_id)
    return wait(store, run_id, ("stopped", "finished"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20000)
    parser.add_argument("--ray-workers", type=int, default=2)
    args = parser.parse_args()
    store = RunStore(Path(tempfile.mkdtemp()) / "bench.sqlite3")
    figures = {}
    for engine in ("local", "ray"):
        began = time.perf_counter()
        worker = Worker(store, slots=1, engine=engine, ray_workers=args.ray_workers, on_event=lambda line: None)
        figures[f"{engine} start-up s"] = time.perf_counter() - began
        worker.start()
        figures[f"{engine} rows/s"] = scored(store, worker, args.rows)
        figures[f"{engine} stop s"] = stop_latency(store, args.rows)
        worker.shutdown(30)
    for name, value in figures.items():
        print(f"{name:>18}: {value:,.2f}")
    print(f"ray/local rows/s: {figures['ray rows/s'] / figures['local rows/s']:.2f}x "
          f"({args.rows:,} offline rows, {args.ray_workers} Ray workers, {len(__import__('os').sched_getaffinity(0))} CPUs)")


if __name__ == "__main__":
    main()
