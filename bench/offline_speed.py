"""Offline judge speed on one core: samples/s on the bundled sample data, every text made unique.

    python bench/offline_speed.py [--data sample_data/sample.jsonl] [--n 5000]

The heuristics cache analyses per text; repeating the 28 sample rows would measure cache hits, so
each copy gets a unique tag on every text. Required: >= 2,000 samples/s (issue 4).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluator import OfflineJudge, RAGEvaluator, load_dataset  # noqa: E402


def unique_copies(base, n):
    for i in range(n):
        s, tag = base[i % len(base)], f" v{i}"
        yield dataclasses.replace(s, question=s.question + tag, answer=s.answer + tag,
                                  contexts=[c + tag for c in s.contexts], sample_id=f"{s.sample_id}-{i}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(ROOT / "sample_data" / "sample.jsonl"))
    parser.add_argument("--n", type=int, default=5000)
    args = parser.parse_args()
    samples = list(unique_copies(load_dataset(args.data), args.n))
    start = time.perf_counter()
    RAGEvaluator(OfflineJudge()).evaluate_dataset(samples)
    rate = len(samples) / (time.perf_counter() - start)
    print(f"{Path(args.data).name}, {len(samples):,} unique samples, max_workers=1: {rate:,.0f} samples/s "
          f"(required >= 2,000)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
