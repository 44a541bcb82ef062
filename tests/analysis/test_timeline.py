"""timeline: a project's scores over time, read with SQL from a real history of live runs (SQLite and PostgreSQL)."""
from datetime import timedelta

import pytest

from evaluator.analysis import timeline as tl

from evaluator.model import EvalSample

from live_runs import START, trace, write_live_runs

NOW = START + timedelta(days=3)
DAY0, DAY1 = START.strftime("%Y-%m-%d"), (START + timedelta(days=1)).strftime("%Y-%m-%d")


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def scores(i):
    # faithfulness alternates 0.6/0.8 (mean 0.7 per hour); context_recall is skipped on odd rows
    return {"faithfulness": 0.6 if i % 2 else 0.8, "context_recall": None if i % 2 else 1.0}


def test_hourly_means_bands_and_runs(store):
    runs = write_live_runs(store, "shop", 36, scores=scores)  # 6 hours of traces, 10 minutes apart
    line = tl.timeline(store, "shop", now=NOW)
    assert sorted(line.points) == ["context_recall", "faithfulness"]
    faith = line.points["faithfulness"]
    assert [p.bucket for p in faith] == [f"{DAY0}T0{h}" for h in range(6)]
    assert all(p.n == 6 and p.mean == pytest.approx(0.7) for p in faith)
    # t-interval of six values 0.6/0.8: sd 0.1095, t(5) 2.571 -> half-width 0.115
    assert faith[0].low == pytest.approx(0.7 - 0.115, abs=0.002) and faith[0].high == pytest.approx(0.815, abs=0.002)
    assert faith[0].run_ids == (runs[0],) and faith[0].start == f"{DAY0}T00:00:00Z"
    recall = line.points["context_recall"]
    assert all(p.n == 3 and p.mean == pytest.approx(1.0) for p in recall)  # skipped rows left out, not zeros


def test_daily_points_span_one_run_each(store):
    runs = write_live_runs(store, "shop", 2 * 144, scores=scores)  # two days
    faith = tl.timeline(store, "shop", step="day", now=NOW).points["faithfulness"]
    assert [(p.bucket, p.n, p.run_ids) for p in faith] == [(DAY0, 144, (runs[0],)), (DAY1, 144, (runs[1],))]


def test_window_bounds_what_is_read(store):
    write_live_runs(store, "shop", 2 * 144, scores=scores)
    line = tl.timeline(store, "shop", days=1, now=START + timedelta(days=2))
    assert {p.bucket[:10] for p in line.points["faithfulness"]} == {DAY1}


def test_other_projects_and_plain_runs_stay_out(store):
    write_live_runs(store, "shop", 12, scores=scores)
    write_live_runs(store, "bank", 12, scores=lambda i: {"faithfulness": 0.1})
    assert all(p.mean == pytest.approx(0.7) for p in tl.timeline(store, "shop", now=NOW).points["faithfulness"])
    assert tl.timeline(store, "nobody", now=NOW).empty


def test_deploy_marks_where_the_version_changes(store):
    versions = {i: ("v1" if i < 10 else "v2" if i < 20 else "v1") for i in range(30)}
    versions[5] = None  # a trace without a version is no deploy
    write_live_runs(store, "shop", 30, scores=scores, version=versions.get)
    marks = tl.timeline(store, "shop", now=NOW).deploys
    assert [(d.at[:16], d.previous, d.version) for d in marks] == [(f"{DAY0}T01:40", "v1", "v2"),
                                                                   (f"{DAY0}T03:20", "v2", "v1")]


def test_drill_down_lists_the_rows_behind_a_point(store):
    runs = write_live_runs(store, "shop", 12, scores=scores)
    assert tl.samples_at(store, "shop", f"{DAY0}T01") == [(runs[0], i) for i in range(6, 12)]
    assert tl.samples_at(store, "shop", f"{DAY0}T01", limit=2) == [(runs[0], 6), (runs[0], 7)]


def test_scored_rows_page_in_trace_order_after_a_cursor(store):
    write_live_runs(store, "shop", 300, scores=lambda i: {"faithfulness": i / 300})
    rows = list(tl.scored_rows(store, "shop", "faithfulness", page=64))
    assert len(rows) == 300 and [r.value for r in rows] == [pytest.approx(i / 300) for i in range(300)]
    rest = list(tl.scored_rows(store, "shop", "faithfulness", after=rows[99].key, page=64))
    assert [r.key for r in rest] == [r.key for r in rows[100:]]
    assert [r.key for r in tl.last_rows(store, "shop", "faithfulness", upto=rows[99].key, n=3)] == \
        [r.key for r in rows[97:100]]


def test_overall_and_run_means(store):
    runs = write_live_runs(store, "shop", 4, scores=lambda i: {"faithfulness": 0.5})
    assert tl.run_mean(store, runs[0], "faithfulness") == pytest.approx(0.5)
    assert tl.run_mean(store, runs[0], "overall") == pytest.approx(0.5)
    assert tl.run_mean(store, runs[0], "answer_relevancy") is None


@pytest.mark.parametrize("name", ["faith fulness", "x'); DROP TABLE runs; --", "", "1abc"])
def test_a_metric_name_is_never_sql(store, name):
    with pytest.raises(ValueError, match="not a metric name"):
        tl.metric_points(store, "shop", name, since="2026-01-01")


def test_live_projects_are_those_with_traces(store):
    write_live_runs(store, "shop", 3, scores=scores)
    store.create_run(dataset_name="batch.jsonl", samples=[trace(0, START, None)], settings={}, project="bank")
    store.create_run(dataset_name="plain.jsonl", samples=[EvalSample("q?", "a.", ["c"])], settings={}, project="ci")
    assert tl.live_projects(store) == ["bank", "shop"]
