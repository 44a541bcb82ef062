"""A run's rows and the judge usage that paid for them are stored together (runs/rows.py, one transaction
in store/history.py's `record_results`): a process killed after any batch leaves a history whose usage
counts at least the calls of the rows it kept, which the resumed run's report adds to its own."""
import sqlite3
import threading

import pytest

from evaluator.errors import HistoryError
from evaluator.model import EvalSample
from evaluator.runs.rows import RowWriter
from evaluator.runs.run import Run, RunConfig
from evaluator.store.history import RunStore
from fakes import ScriptedJudge


def samples(n):
    return [EvalSample(f"What is item {i}?", f"Item {i} is a blue box.", [f"Item {i}: a blue box."])
            for i in range(n)]


class CountingJudge(ScriptedJudge):
    """A scripted judge that reports its calls as OpenAIJudge.usage() does."""

    def usage(self):
        return {"calls": self.calls}


class WatchedStore(RunStore):
    """A real SQLite history that notes, at each batch, how many rows it holds and the calls stored with them."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.batches = []
        self._rows = 0
        self._guard = threading.Lock()

    def record_results(self, run_id, pairs, stored=frozenset(), usage=None):
        super().record_results(run_id, pairs, stored, usage=usage)
        with self._guard:
            self._rows += len(pairs)
            self.batches.append((self._rows, self.stored_usage(run_id).get("calls", 0)))


def test_every_batch_of_rows_is_stored_with_the_calls_it_cost(tmp_path):
    store = WatchedStore(tmp_path / "h.sqlite3")
    judge = CountingJudge()
    run = Run.new(RunConfig(max_workers=2), samples(60), dataset_name="boxes.csv", store=store, judge=judge).start()
    assert run.join(120)
    per_row = judge.calls / 60
    assert per_row >= 1 and len(store.batches) >= 1
    for rows, calls in store.batches:  # what a kill right after this batch would have left
        assert calls >= per_row * rows, (rows, calls, store.batches)
    assert store.stored_usage(run.run_id)["calls"] == judge.calls


def test_a_batch_whose_usage_cannot_be_written_keeps_neither(tmp_path):
    """One transaction: a failure on the usage update takes the batch's rows with it (to be retried or
    counted as not saved), so the history never holds rows whose calls it does not count."""
    store = RunStore(tmp_path / "h.sqlite3")
    run_id = store.create_run(dataset_name="boxes.csv", samples=samples(3), settings={})
    with sqlite3.connect(tmp_path / "h.sqlite3") as db:
        # Fails as a write does (an OperationalError), only on the usage update, only when it runs.
        db.execute("CREATE TRIGGER no_usage BEFORE UPDATE OF usage ON runs BEGIN INSERT INTO disk_full VALUES (1); END")
    report = Run.new(RunConfig(), samples(3), dataset_name="x.csv", judge=CountingJudge()).start()
    assert report.join(60)
    pairs = list(enumerate(report.report.results))
    with pytest.raises(HistoryError, match="disk_full"):
        store.record_results(run_id, pairs, usage={"calls": 6})
    assert store.completed_indices(run_id) == set() and store.stored_usage(run_id) == {}
    store.record_results(run_id, pairs)  # without usage the rows are written
    assert store.completed_indices(run_id) == {0, 1, 2}


def test_a_usage_that_cannot_be_read_costs_the_usage_never_the_rows(tmp_path):
    store = RunStore(tmp_path / "h.sqlite3")
    run_id = store.create_run(dataset_name="boxes.csv", samples=samples(2), settings={})
    finished = Run.new(RunConfig(), samples(2), dataset_name="x.csv", judge=CountingJudge()).start()
    assert finished.join(60)

    def broken():
        raise RuntimeError("judge gone")

    writer = RowWriter(store, run_id, usage=broken).start()
    for i, result in enumerate(finished.report.results):
        writer.add(i, result)
    writer.close()
    assert writer.saved == 2 and writer.lost == 0 and store.completed_indices(run_id) == {0, 1}
