"""A history write that fails is counted on the Run (the verdict reads `run.history_failures`)."""
from evaluator.history import RunStore
from evaluator.model import EvalSample
from evaluator.runs import Run, RunConfig


class FullDiskStore(RunStore):
    """A real SQLite history whose row writes fail, as on a full disk."""

    def record_result(self, *args, **kwargs):
        raise OSError(28, "No space left on device")


def test_failed_row_writes_are_counted_and_named(tmp_path):
    samples = [EvalSample(f"Q{i}?", "A.", ["ctx"]) for i in range(3)]
    run = Run.new(RunConfig(), samples, dataset_name="d.jsonl", store=FullDiskStore(tmp_path / "h.sqlite3")).start()
    assert run.join(60)
    assert run.status == "finished" and len(run.report.results) == 3  # nothing computed is lost
    assert run.history_failures == 3
    assert "could not be saved to the history" in run.warning


def test_a_run_that_saves_everything_has_no_history_failures(tmp_path):
    run = Run.new(RunConfig(), [EvalSample("Q?", "A.", ["ctx"])], dataset_name="d.jsonl",
                  store=RunStore(tmp_path / "h.sqlite3")).start()
    assert run.join(60) and run.history_failures == 0
