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
    built = json.loads(json.dumps(summaries.of_report(report, {"judge": "offline"})))
    assert summary.current(built) and built["n_rows"] == len(report.results)
    assert summary.metric_summaries(built) == summarize(report)
    assert summary.agreement(built) == agreement_table(report)  # the sample carries human labels
    assert summary.noise(built) == judge_noise(report)
    assert summary.verdict_of(built) == verdict(report)
    assert built["overall_mean"] == report.overall_mean() and built["trust"]["offline"] is True
    assert built["category_names"] == sorted({r.sample.category for r in report.results if r.sample.category})
    assert sum(row["count"] for row in built["histogram"] if row["metric"] == "faithfulness") == \
        len(report.values("faithfulness"))


def test_a_run_stores_its_summary_when_it_ends(tmp_path):
    store = RunStore(tmp_path / "h.sqlite3")
    run = Run.new(RunConfig(), load_dataset(SAMPLE), dataset_name="sample.jsonl", store=store).start()
    run.join()
    stored = store.get_summary(run.run_id)
    assert stored is not None and summary.metric_summaries(stored) == summarize(run.report)
    assert summary.verdict_of(stored) == store.get_run(run.run_id).verdict


def test_a_run_without_a_summary_gets_one_on_its_first_open(tmp_path):
    store = RunStore(tmp_path / "h.sqlite3")
    report = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(SAMPLE))
    run_id = store.create_run(dataset_name="old", samples=[r.sample for r in report.results], settings={})
    store.record_results(run_id, list(enumerate(report.results)))
    store.finish_run(run_id, status="stopped")
    assert store.get_summary(run_id) is None
    built = summaries.stored(store, run_id)
    assert store.get_summary(run_id) == json.loads(json.dumps(built))
    assert summary.metric_summaries(built) == summarize(report)
    store.save_summary(run_id, dict(built, version=0))  # an older version's summary is rebuilt
    assert summaries.stored(store, run_id)["version"] == summary.VERSION
