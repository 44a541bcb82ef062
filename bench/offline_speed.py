"""Offline judge speed on one core: samples/s on the bundled sample data, every text made unique.

    python bench/offline_speed.py [--data sample_data/sample.jsonl] [--n 5000] [--repeat 3]

The process pins itself to one CPU core. The heuristics cache analyses per text; repeating the 28
sample rows would measure cache hits, so each copy gets a unique tag on its question, answer and
contexts (references repeat, as in the seed's version of this bench). Each round scores the
samples with the ragmeter heuristics and then with the seed's Jaccard set, in the same process and
from cold caches, and prints both rates and their ratio; the last line gives min / median over the
rounds. Rates are samples per second of wall-clock time and of CPU time (the CPU figure is steadier
on a machine shared with other work). Required: >= 5,000 samples/s (issue 12).
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluator import OfflineJudge, RAGEvaluator, load_dataset  # noqa: E402
from evaluator.metrics.heuristics import clear_caches  # noqa: E402

REQUIRED = 5_000


def unique_copies(base, n):
    for i in range(n):
        s, tag = base[i % len(base)], f" v{i}"
        yield dataclasses.replace(s, question=s.question + tag, answer=s.answer + tag,
                                  contexts=[c + tag for c in s.contexts], sample_id=f"{s.sample_id}-{i}")


def pin_to_one_core() -> str:
    """Run on one CPU core from here on; says which (or why not)."""
    if not hasattr(os, "sched_setaffinity"):
        return "not pinned (no sched_setaffinity on this platform)"
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return f"pinned to core {core}"


def rates(samples, heuristics: str):
    """(wall, cpu) samples/s of one offline run from cold caches."""
    clear_caches()
    evaluator = RAGEvaluator(OfflineJudge(), heuristics=heuristics)
    wall, cpu = time.perf_counter(), time.process_time()
    evaluator.evaluate_dataset(samples)
    return len(samples) / (time.perf_counter() - wall), len(samples) / (time.process_time() - cpu)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT / "sample_data" / "sample.jsonl"))
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds (min and median are reported)")
    args = parser.parse_args()
    print(f"{pin_to_one_core()}; {Path(args.data).name}, {args.n:,} unique samples, max_workers=1")
    samples = list(unique_copies(load_dataset(args.data), args.n))
    ours, ratios = [], []
    for k in range(1, args.repeat + 1):
        wall, cpu = rates(samples, "ragmeter")
        seed_wall, seed_cpu = rates(samples, "jaccard")
        ours.append((wall, cpu))
        ratios.append(wall / seed_wall)
        print(f"round {k}: ragmeter {wall:,.0f} samples/s ({cpu:,.0f} by CPU time); seed Jaccard set "
              f"{seed_wall:,.0f} ({seed_cpu:,.0f}); ratio {wall / seed_wall:.2f}")
    walls, cpus = [w for w, _ in ours], [c for _, c in ours]
    print(f"ragmeter samples/s min {min(walls):,.0f} / median {statistics.median(walls):,.0f} "
          f"(CPU time: min {min(cpus):,.0f} / median {statistics.median(cpus):,.0f}); ratio to the seed's "
          f"Jaccard set min {min(ratios):.2f} / median {statistics.median(ratios):.2f} (required >= {REQUIRED:,})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
