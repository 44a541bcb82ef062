"""Live runs as the collector writes them (evaluator/collect): one run per project and day, each sample's
metadata carrying trace_id, trace_end (ISO UTC) and service_version. Written with the real RunStore.
(tests/ is on sys.path under pytest: `from live_runs import ...`.)"""
from datetime import datetime, timedelta, timezone
from typing import Callable, Dict, List, Optional

from evaluator.model import EvalResult, EvalSample, MetricScore
from evaluator.store.history import RunStore

# Two days before today's UTC midnight: inside every window a page reads, whenever the tests run.
START = datetime.now(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(days=2)


def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def trace(i: int, end: datetime, version: Optional[str]) -> EvalSample:
    meta = {"trace_id": f"{i:032x}", "trace_end": iso(end)}
    if version is not None:
        meta["service_version"] = version
    return EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], sample_id=f"t{i}", metadata=meta)


def result(sample: EvalSample, scores: Dict[str, Optional[float]]) -> EvalResult:
    """`None` as a score: the metric was skipped for that row."""
    made = {m: MetricScore(m, 0.0 if s is None else s, "why", skipped=s is None, method="heuristic")
            for m, s in scores.items()}
    return EvalResult(sample.sample_id, scores=made, elapsed_sec=0.1, sample=sample)


def write_live_runs(store: RunStore, project: str, n: int, *, every: timedelta = timedelta(minutes=10),
                    start: datetime = START, scores: Callable[[int], Dict[str, Optional[float]]],
                    version: Callable[[int], Optional[str]] = lambda i: "v1") -> List[str]:
    """`n` traces ending `every` apart from `start`, scored with `scores(i)`, in one run per UTC day;
    the run ids, oldest first."""
    by_day: Dict[str, List[int]] = {}
    for i in range(n):
        by_day.setdefault((start + i * every).strftime("%Y-%m-%d"), []).append(i)
    run_ids = []
    for day, indices in by_day.items():
        samples = [trace(i, start + i * every, version(i)) for i in indices]
        run_id = store.create_run(dataset_name=f"live {project} {day}", samples=samples,
                                  settings={"metrics": sorted(scores(indices[0]))}, project=project,
                                  name=f"{project} live {day}")
        store.record_results(run_id, [(k, result(s, scores(i))) for k, (i, s) in enumerate(zip(indices, samples))])
        store.finish_run(run_id)
        run_ids.append(run_id)
    return run_ids

