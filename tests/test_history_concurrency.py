"""history: several processes on one history at once (two CI runs and a dashboard), on both backends.

Real processes, real files and a real PostgreSQL server: each child opens its own RunStore, as a
separate `ragmeter evaluate` would.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.store.history import MIGRATIONS, RunStore
from evaluator.model import EvalSample

ROOT = Path(__file__).resolve().parents[1]

OPEN = """
import sys, time
from evaluator.store.history import RunStore
start = float(sys.argv[2])
while time.time() < start:  # every child opens the store at the same moment
    pass
RunStore(sys.argv[1])
"""

WRITE = """
import sys
from evaluator.store.history import RunStore
from evaluator.model import EvalResult, EvalSample, MetricScore, METRICS
store = RunStore(sys.argv[1])
run_id, first, last = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
for i in range(first, last):
    s = EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], sample_id=f"s{i}")
    scores = {m: MetricScore(m, 0.5, "why") for m in METRICS}
    store.record_result(run_id, i, EvalResult(s.sample_id, **scores, sample=s))
    if i % 10 == 0:  # a dashboard or another CI job starting runs meanwhile
        store.create_run(dataset_name=f"other-{i}", samples=[s], settings={}, owner="ci")
"""


def children(code, *args_per_child):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen([sys.executable, "-c", code, *map(str, args)], env=env, stderr=subprocess.PIPE,
                              text=True) for args in args_per_child]
    return [(p.wait(timeout=120), p.stderr.read()) for p in procs]


def location(backend, tmp_path, request, name="history.sqlite3"):
    return str(tmp_path / name) if backend == "sqlite" else request.getfixturevalue("postgres_url")


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_a_new_history_opened_by_four_processes_at_once_is_migrated_once(backend, tmp_path, request):
    # Before the migration lock, 4 processes opening a new SQLite file failed about 1 in 10 times
    # with "table runs already exists".
    trials = 5 if backend == "sqlite" else 1
    for trial in range(trials):
        where = location(backend, tmp_path, request, f"h{trial}.sqlite3")
        start = time.time() + 1.0
        results = children(OPEN, *[(where, start)] * 4)
        assert [code for code, _ in results] == [0] * 4, [err for _, err in results]
        store = RunStore(where)
        applied = store._query("SELECT name FROM _migrations ORDER BY name")
        assert [name for (name,) in applied] == sorted(step.__name__ for step in MIGRATIONS)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_three_writing_processes_lose_nothing(backend, tmp_path, request):
    where = location(backend, tmp_path, request)
    store = RunStore(where)
    n = 90
    data = [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], sample_id=f"s{i}") for i in range(n)]
    run_id = store.create_run(dataset_name="shared", samples=data, settings={})
    results = children(WRITE, (where, run_id, 0, 30), (where, run_id, 30, 60), (where, run_id, 60, 90))
    assert [code for code, _ in results] == [0, 0, 0], [err for _, err in results]
    assert store.completed_indices(run_id) == set(range(n)) and store.pending_samples(run_id) == []
    assert [r.sample_id for r in store.load_report(run_id).results] == [f"s{i}" for i in range(n)]
    others = store.list_runs(owner="ci")
    assert sorted(r.dataset_name for r in others) == sorted(f"other-{i}" for i in range(0, n, 10))
