"""The Monitor page's reads on months of live runs: the SQL timeline against loading every run.

    python bench/monitor_timeline.py [--days 60] [--per-day 1000] [--window 14]

Writes `--days` live runs (one per day, `--per-day` traces each, two metrics, a deploy every ten
days) to a fresh SQLite history, then times, best of 3:

- timeline.timeline(): per-hour means with bands and deploys over the last `--window` days, summed
  in the database (what the Monitor page reads);
- the naive way: load_report() of every run in the window, then the means in Python;
- an alert rule's first poll over every row of the history (rows/s), and a poll with nothing new.

Both ways must give the same hourly means. Prints the figures side by side, with the ratio.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _common import table  # noqa: E402

from evaluator.analysis import timeline as tl  # noqa: E402
from evaluator.collect.alerts import AlertMonitor, parse_rule  # noqa: E402
from evaluator.model import EvalResult, EvalSample, MetricScore  # noqa: E402
from evaluator.store.history import RunStore  # noqa: E402

PROJECT = "shop"


def write_history(store: RunStore, days: int, per_day: int, now: datetime) -> int:
    start = (now - timedelta(days=days)).replace(hour=0, minute=0, second=0, microsecond=0)
    step = timedelta(seconds=86400 / per_day)
    rows = 0
    for d in range(days):
        day = start + timedelta(days=d)
        samples, results = [], []
        for i in range(per_day):
            end = day + i * step
            meta = {"trace_id": f"{d:08x}{i:024x}", "trace_end": end.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
                    "service_version": f"v{d // 10}"}
            sample = EvalSample(f"Question {d}-{i}?", f"Answer {i}.", [f"Context {i} " * 40], metadata=meta)
            value = 0.6 + 0.3 * ((i * 7919 + d) % 100) / 100
            scores = {m: MetricScore(m, value, "why", method="heuristic") for m in ("faithfulness", "answer_relevancy")}
            samples.append(sample)
            results.append((i, EvalResult(None, scores=scores, elapsed_sec=0.01, sample=sample)))
        run_id = store.create_run(dataset_name=f"live {day:%Y-%m-%d}", samples=[], settings={}, project=PROJECT,
                                  n_samples=per_day)
        store.record_results(run_id, results)
        store.finish_run(run_id)
        # a collector creates each day's run on that day
        store.write("UPDATE runs SET created_at = ? WHERE run_id = ?", (day.isoformat(timespec="seconds"), run_id))
        rows += per_day
    return rows


def naive(store: RunStore, window: int, now: datetime) -> Dict[Tuple[str, str], float]:
    """Every run of the window loaded whole, then the hourly means in Python."""
    since = tl.window_start(window, now)
    sums: Dict[Tuple[str, str], List[float]] = {}
    for info in store.list_runs(project=PROJECT):
        for result in store.load_report(info.run_id).results:
            end = str(result.sample.metadata["trace_end"]) if result.sample else ""
            if end >= since:
                for name, ms in result.metric_scores().items():
                    sums.setdefault((name, end[:13]), []).append(ms.score)
    return {k: statistics.fmean(v) for k, v in sums.items()}


def best(fn: Callable[[], object], rounds: int = 3) -> Tuple[float, object]:
    times, out = [], None
    for _ in range(rounds):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--days", type=int, default=60)
    ap.add_argument("--per-day", type=int, default=1000)
    ap.add_argument("--window", type=int, default=14)
    args = ap.parse_args()
    now = datetime.now(timezone.utc)
    with tempfile.TemporaryDirectory() as folder:
        store = RunStore(Path(folder) / "history.sqlite3")
        t0 = time.perf_counter()
        rows = write_history(store, args.days, args.per_day, now)
        print(f"wrote {rows:,} rows in {args.days} runs in {time.perf_counter() - t0:.1f} s")
        sql_s, line = best(lambda: tl.timeline(store, PROJECT, days=args.window, now=now))
        naive_s, means = best(lambda: naive(store, args.window, now))
        got = {(m, p.bucket): p.mean for m, points in line.points.items() for p in points}  # type: ignore[union-attr]
        assert got.keys() == means.keys() and all(abs(got[k] - means[k]) < 1e-9 for k in got), "the two ways differ"
        rule = [parse_rule("faithfulness < 0.7 over 200")]
        poll_s, _ = best(lambda: AlertMonitor(store, PROJECT, rule, since="").poll(), rounds=1)
        monitor = AlertMonitor(store, PROJECT, rule, since="")
        monitor.poll()
        idle_s, _ = best(monitor.poll)
        print(table(["read", "seconds", "note"], [
            (f"timeline, last {args.window} days, per hour (SQL)", f"{sql_s:.3f}",
             f"{sum(len(p) for p in line.points.values()):,} points, {len(line.deploys)} deploys"),  # type: ignore[union-attr]
            (f"load_report of each run in the window (Python)", f"{naive_s:.3f}", f"{naive_s / sql_s:.1f}x the SQL read"),
            ("alert rule, first poll over the whole history", f"{poll_s:.3f}", f"{rows / poll_s:,.0f} rows/s"),
            ("alert rule, poll with nothing new", f"{idle_s:.4f}", ""),
        ]))


if __name__ == "__main__":
    main()
