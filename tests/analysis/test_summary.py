"""analysis/summary.py and scoring/summaries.py: a run's summary is computed once, stored, and reads back as the
figures the whole report gives."""
import json
from pathlib import Path

from evaluator import OfflineJudge, RAGEvaluator, load_dataset
from evaluator.analysis import summary
from evaluator.analysis.agreement import agreement_table
from evaluator.analysis.noise import judge_noise
from evaluator.analysis.stats import summarize
from evaluator.runs.run import Run, RunConfig
from evaluator.scoring import summaries
from evaluator.scoring.verdict import verdict
from evaluator.store.history import RunStore

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "sample.jsonl"


def test_a_summary_survives_json_and_reads_back_as_the_report_figures():
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))
    made = summaries.of_report(report, {"judge": "offline"})
    stored = json.loads(json.dumps(made.to_dict()))
    assert summary.current(stored)
    built = summary.RunSummary.from_dict(stored)
    assert built == made and built.to_dict() == stored  # the stored JSON reads back as the same dataclass
    assert built.n_rows == len(report.results)
    assert list(built.metrics) == summarize(report)
    assert summary.agreement(built) == agreement_table(report)  # the sample carries human labels
    assert summary.noise(built) == judge_noise(report)
    assert built.verdict == verdict(report)
    assert built.overall_mean == report.overall_mean() and built.trust.offline is True
    assert list(built.category_names) == sorted({r.sample.category for r in report.results if r.sample.category})
    assert sum(b.count for b in built.histogram if b.metric == "faithfulness") == len(report.values("faithfulness"))


def test_the_stored_keys_are_those_version_2_has_always_had():
    """Summaries stored before RunSummary existed open without a rebuild: to_dict keeps their keys."""
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))
    stored = summaries.of_report(report, {"judge": "offline"}).to_dict()
    assert summary.VERSION == 2 and set(stored) == {
        "version", "n_rows", "total_time", "usage", "metric_names", "metrics", "overall_mean", "n_overall",
        "verdict", "decision", "judge_status", "trust", "noise", "target", "agreement", "histogram", "categories",
        "category_names", "external_columns", "conversations", "turns", "n_turns", "worst_turn"}
    assert set(stored["trust"]) == {"stopped", "fallback", "judged", "main_cause", "offline", "language_note"}
    assert set(stored["decision"]) == {"counts", "means", "stopped", "judge_cause", "target_cause", "nothing_cause"}


def test_a_run_stores_its_summary_when_it_ends(tmp_path):
    store = RunStore(tmp_path / "h.sqlite3")
    run = Run.new(RunConfig(), load_dataset(SAMPLE), dataset_name="sample.jsonl", store=store).start()
    run.join()
    stored = store.get_summary(run.run_id)
    assert stored is not None and summary.current(stored)
    read = summary.RunSummary.from_dict(stored)
    assert list(read.metrics) == summarize(run.report) and read == run.summary
    assert read.verdict == store.get_run(run.run_id).verdict


def test_a_run_without_a_summary_gets_one_on_its_first_open(tmp_path):
    store = RunStore(tmp_path / "h.sqlite3")
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))
    run_id = store.create_run(dataset_name="old", samples=[r.sample for r in report.results], settings={})
    store.record_results(run_id, list(enumerate(report.results)))
    store.finish_run(run_id, status="stopped")
    assert store.get_summary(run_id) is None
    built = summaries.stored(store, run_id)
    assert store.get_summary(run_id) == json.loads(json.dumps(built.to_dict()))
    assert list(built.metrics) == summarize(report)
    store.save_summary(run_id, dict(built.to_dict(), version=0, n_rows=-1))  # an older version's: rebuilt
    assert summaries.stored(store, run_id) == built
    assert (store.get_summary(run_id) or {})["version"] == summary.VERSION
