"""store/pages.py: a run read by aggregates and pages equals the same run read whole, on SQLite and PostgreSQL."""
import shutil
import sqlite3
from pathlib import Path

import pytest

from evaluator.analysis.stats import summarize
from evaluator.model import METHOD_FALLBACK, METHOD_LLM, EvalResult, EvalSample, MetricScore
from evaluator.store import pages
from evaluator.store.history import RunStore
from evaluator.store.pages import Filters

OLD_HISTORY = Path(__file__).resolve().parent / "fixtures" / "history_2f405f4.sqlite3"


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def result(i: int) -> EvalResult:
    """Row i: faithfulness i/10 (1.0 at i=10), relevancy skipped on odd rows; a 50% heuristic fallback on row 3."""
    sample = EvalSample(f"Question {i} about {'refunds' if i % 3 == 0 else 'shipping'}?", f"Answer {i}.",
                        [f"Context {i}."], sample_id=f"id{i}", category="a" if i % 2 else "b")
    faith = MetricScore("faithfulness", min(i, 10) / 10, "why", method=METHOD_FALLBACK if i == 3 else METHOD_LLM)
    rel = MetricScore("answer_relevancy", 0.0, "n/a", skipped=True, method="skipped") if i % 2 else \
        MetricScore("answer_relevancy", 1 - i / 20, "why", method=METHOD_LLM)
    return EvalResult(sample.sample_id, faithfulness=faith, answer_relevancy=rel, sample=sample)


@pytest.fixture
def run(store):
    rows = [result(i) for i in range(12)]
    run_id = store.create_run(dataset_name="d.jsonl", samples=[r.sample for r in rows], settings={})
    store.record_results(run_id, list(enumerate(rows[:6])))
    for i, r in enumerate(rows[6:], start=6):  # both write paths store score rows
        store.record_result(run_id, i, r)
    return store, run_id


def test_summary_equals_the_whole_report_statistics(run):
    store, run_id = run
    report = store.load_report(run_id)
    agg = pages.summary(store, run_id)
    assert (agg.n_rows, agg.overall_mean) == (12, round(report.overall_mean(), 4))
    assert [m.name for m in agg.metrics] == report.metric_names()  # the order the metrics were chosen in
    for m, s in zip(agg.metrics, summarize(report)):
        assert (m.mean, m.std, m.n_scored, m.n_total, m.methods) == (s.mean, s.std, s.n_scored, s.n_total, s.methods)
    faith = agg.metrics[0]
    assert (faith.low, faith.high) == (0.0, 1.0)
    assert faith.bins == (1, 1, 1, 1, 1, 1, 1, 1, 1, 3)  # 0.9, 1.0 and 1.0 share the last bin


@pytest.mark.parametrize("filters, expected", [
    (Filters(), list(range(12))),
    (Filters(text="REFUNDS"), [0, 3, 6, 9]),
    (Filters(text="id1"), [1, 10, 11]),
    (Filters(text="50%_"), []),  # LIKE's wildcards are the user's characters
    (Filters(categories=["a"]), [1, 3, 5, 7, 9, 11]),
    (Filters(metric="faithfulness", at_most=0.3), [0, 1, 2, 3]),
    (Filters(metric="answer_relevancy", at_most=1.0), [0, 2, 4, 6, 8, 10]),  # skipped scores never match
    (Filters(methods=[METHOD_FALLBACK]), [3]),
    (Filters(text="shipping", categories=["b"], metric="faithfulness", at_most=0.5), [2, 4]),
])
def test_a_page_keeps_the_rows_the_filters_match(run, filters, expected):
    store, run_id = run
    rows, total = pages.page(store, run_id, filters=filters, limit=50)
    assert [i for i, _ in rows] == expected and total == len(expected)


def test_pages_split_the_matches_and_sort_in_sql(run):
    store, run_id = run
    first, total = pages.page(store, run_id, limit=5)
    second, _ = pages.page(store, run_id, offset=5, limit=5)
    assert total == 12 and [i for i, _ in first + second] == list(range(10))
    by_relevancy, _ = pages.page(store, run_id, sort=("answer_relevancy", "asc"), limit=12)
    assert [i for i, _ in by_relevancy] == [10, 8, 6, 4, 2, 0, 1, 3, 5, 7, 9, 11]  # skipped rows last
    by_overall, _ = pages.page(store, run_id, sort=("overall", "desc"), limit=3)
    assert [r.overall_score() for _, r in by_overall] == sorted((result(i).overall_score() for i in range(12)),
                                                                  reverse=True)[:3]
    with pytest.raises(ValueError, match="asc, desc"):
        pages.page(store, run_id, sort=("idx", "sideways"))


def test_a_row_is_the_stored_result_with_its_sample(run):
    store, run_id = run
    found = pages.row(store, run_id, 4)
    assert found.sample.question == result(4).sample.question
    assert found.score_values() == result(4).score_values()
    assert pages.row(store, run_id, 99) is None


def test_a_rescored_row_keeps_no_score_of_its_old_metrics(run):
    store, run_id = run
    only = EvalResult("id0", faithfulness=MetricScore("faithfulness", 0.5, "again", method=METHOD_LLM),
                      sample=result(0).sample)
    store.record_result(run_id, 0, only)
    rows, _ = pages.page(store, run_id, filters=Filters(metric="answer_relevancy"), limit=50)
    assert 0 not in [i for i, _ in rows]


def test_deleting_a_run_deletes_its_score_rows(run):
    store, run_id = run
    store.delete_run(run_id)
    assert store.query("SELECT COUNT(*) FROM scores WHERE run_id = ?", (run_id,))[0][0] == 0


def test_an_older_history_gets_score_rows_from_the_migration(tmp_path):
    copy = tmp_path / "old.sqlite3"
    shutil.copyfile(OLD_HISTORY, copy)
    with sqlite3.connect(copy) as db:
        assert not db.execute("SELECT name FROM sqlite_master WHERE name = 'scores'").fetchall()
    store = RunStore(copy)
    for info in store.list_runs():
        report = store.load_report(info.run_id)
        agg = pages.summary(store, info.run_id)
        assert [(m.name, m.mean) for m in agg.metrics] == [(s.name, s.mean) for s in summarize(report)]
        assert pages.page(store, info.run_id, limit=2)[1] == len(report.results)


def test_summaries_are_stored_with_the_run(run):
    store, run_id = run
    assert store.get_summary(run_id) is None
    store.save_summary(run_id, {"metrics": [{"name": "faithfulness", "mean": 0.5}]})
    assert store.get_summary(run_id) == {"metrics": [{"name": "faithfulness", "mean": 0.5}]}
    store.save_summary(run_id, None)
    assert store.get_summary(run_id) is None


def test_light_results_hold_every_rows_scores_and_nothing_else(run):
    store, run_id = run
    light = pages.light_results(store, run_id, ["faithfulness"])
    assert [i for i, _ in light] == list(range(12))
    for i, r in light:
        assert list(r.scores) == ["faithfulness"] and r.sample is None
        assert (r.scores["faithfulness"].score, r.scores["faithfulness"].method) == \
            (result(i).faithfulness.score, result(i).faithfulness.method)
    assert pages.light_results(store, run_id, []) == []
    both = dict(pages.light_results(store, run_id))
    assert both[1].scores["answer_relevancy"].skipped and list(both[0].scores) == ["faithfulness", "answer_relevancy"]


def test_reviewable_metrics_leave_out_rule_and_never_scored_metrics(run):
    store, run_id = run
    assert pages.reviewable_metrics(store, run_id, exclude_method="rule") == ["faithfulness", "answer_relevancy"]
    assert pages.reviewable_metrics(store, run_id, exclude_method=METHOD_LLM) == ["faithfulness"]  # row 3's fallback


def test_the_worst_rows_are_the_html_reports_worst_samples(run):
    from evaluator.report.export import _sample_rows

    store, run_id = run
    whole = store.indexed_results(run_id)
    expected = [row["label"] for row in _sample_rows(iter(whole), len(whole), 4)[0]]
    worst = pages.worst_rows(store, run_id, 4)
    assert [r.sample_id for _, r in worst] == expected and len(expected) == 4


def test_rows_read_a_page_at_a_time_are_the_rows_read_whole(run, monkeypatch):
    from evaluator.store import history

    store, run_id = run
    whole = [(i, r.sample_id, r.score_values()) for i, r in store.indexed_results(run_id)]
    for size in (1, 5, 12, 50):  # pages that split the run, fit it exactly, or hold it with room to spare
        paged = [(i, r.sample_id, r.score_values()) for i, r in store.iter_results(run_id, page=size)]
        assert paged == whole, size
    monkeypatch.setattr(history, "PAGE", 4)  # a new run's samples written, and a resumed run's read, 4 at a time
    extra = store.create_run(dataset_name="more.jsonl", samples=[result(i).sample for i in range(11)], settings={})
    assert [s.sample_id for s in store.samples(extra)] == [f"id{i}" for i in range(11)]
    store.record_results(extra, [(3, result(3)), (7, result(7))])
    assert [i for i, _ in store.pending_samples(extra)] == [0, 1, 2, 4, 5, 6, 8, 9, 10]
