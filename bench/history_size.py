"""Run-history size: bytes per run and per row, before and after the compact result rows (m003).

    python bench/history_size.py [--n 10000] [--seed 0]

Builds a realistic offline run (generated samples with 3-5 contexts of ~400 characters, scored by
the offline judge), then stores it twice, one row per transaction as a run does:

- before: the layout main wrote until m003, where every result row held the whole record, sample
  text included (`legacy_record_result` below is that writer, kept here as the reference);
- after: `RunStore` as it is now, where a result row keeps only scores and metric details.

It prints each database's size (WAL checkpointed), bytes per row, write time and the time
`load_report` takes to read the run back (best of 3); both must load to the results that were written.
"""
from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import List

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import _sentence, table  # noqa: E402

from evaluator import OfflineJudge, RAGEvaluator  # noqa: E402
from evaluator.store.history import MIGRATIONS, RunStore  # noqa: E402
from evaluator.io.records import result_to_record, sample_to_record  # noqa: E402
from evaluator.model import EvalResult, EvalSample  # noqa: E402

CATEGORIES = ("billing", "transport", "health", "housing", "energy")


def _passage(rng: random.Random, chars: int = 400) -> str:
    """Sentences until the passage reaches about `chars` characters."""
    out: List[str] = []
    while sum(len(s) + 1 for s in out) < chars:
        out.append(_sentence(rng))
    return " ".join(out)


def make_run(n: int, seed: int) -> List[EvalSample]:
    """`n` samples with 3-5 contexts of ~400 characters, a 2-sentence answer and a reference."""
    rng = random.Random(seed)
    return [
        EvalSample(
            question=f"What happened to project {i} and who decided it?",
            answer=" ".join(_sentence(rng) for _ in range(2)),
            contexts=[_passage(rng) for _ in range(rng.randint(3, 5))],
            ground_truth=_sentence(rng),
            sample_id=f"q{i:06d}",
            category=CATEGORIES[i % len(CATEGORIES)],
            metadata={"source": f"doc-{i % 97}.pdf", "retriever": "bm25"},
        )
        for i in range(n)
    ]


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def legacy_record_result(db: sqlite3.Connection, run_id: str, index: int, result: EvalResult) -> None:
    """RunStore.record_result before m003 (main at d197309): the whole record, sample text included."""
    with db:
        db.execute(
            "INSERT OR REPLACE INTO results (run_id, idx, sample_id, overall, record) VALUES (?, ?, ?, ?, ?)",
            (run_id, index, result.sample_id, result.overall(), _dumps(result_to_record(result, index))),
        )


def write_before(path: Path, samples: List[EvalSample], results: List[EvalResult]) -> tuple:
    """The run stored as main wrote it before m003 (schema m001+m002); returns (run_id, seconds)."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    with db:
        db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for step in MIGRATIONS[:2]:
            step(db)
            db.execute("INSERT INTO _migrations VALUES (?, 'bench')", (step.__name__,))
        db.execute("INSERT INTO runs (run_id, dataset_name, created_at, status, n_samples, settings) "
                   "VALUES ('before', 'bench', '2026-01-01T00:00:00', 'finished', ?, '{}')", (len(samples),))
        db.executemany("INSERT INTO samples VALUES ('before', ?, ?)",
                       [(i, _dumps(sample_to_record(s, i))) for i, s in enumerate(samples)])
    start = time.perf_counter()
    for i, r in enumerate(results):
        legacy_record_result(db, "before", i, r)
    elapsed = time.perf_counter() - start
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return "before", elapsed


def write_after(path: Path, samples: List[EvalSample], results: List[EvalResult]) -> tuple:
    """The run stored by RunStore as it is now; returns (run_id, seconds)."""
    store = RunStore(path)
    run_id = store.create_run(dataset_name="bench", samples=samples, settings={})
    start = time.perf_counter()
    for i, r in enumerate(results):
        store.record_result(run_id, i, r)
    elapsed = time.perf_counter() - start
    store.finish_run(run_id, total_time=0.0)
    store._db().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    store.close()
    return run_id, elapsed


def load(path: Path, run_id: str, results: List[EvalResult], repeats: int = 3) -> float:
    """Best-of-`repeats` seconds `load_report` takes (the History page's read); checks the rows.

    Best of a few, because on a shared machine one reading can be twice another.
    """
    store = RunStore(path)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        report = store.load_report(run_id)
        times.append(time.perf_counter() - start)
    if report.results != results:
        raise SystemExit(f"{path.name}: the run read back differs from the run written")
    store.close()
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    samples = make_run(args.n, args.seed)
    start = time.perf_counter()
    results = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results
    chars = sum(len(c) for s in samples for c in s.contexts) / sum(len(s.contexts) for s in samples)
    print(f"{args.n:,} samples, {sum(len(s.contexts) for s in samples) / args.n:.1f} contexts of "
          f"{chars:.0f} chars on average, scored offline in {time.perf_counter() - start:.1f} s")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for label, write in (("before (full rows)", write_before), ("after (compact, m003)", write_after)):
            path = Path(tmp) / f"{label.split()[0]}.sqlite3"
            run_id, write_s = write(path, samples, results)
            size = path.stat().st_size  # measured before load(): opening migrates the old file
            rows.append((label, f"{size / 1e6:.1f} MB", f"{size / args.n:,.0f}", f"{write_s / args.n * 1e3:.2f} ms",
                         f"{load(path, run_id, results):.2f} s"))
    print(table(("history layout", "bytes per run", "bytes per row", "write per row", "load_report"), rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
