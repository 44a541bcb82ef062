"""Monitor page (AppTest): a project's live runs charted with bands and deploys, its alerts linking to
their runs, the samples behind a point, and the empty state that says how to start a collector."""
from datetime import timedelta

import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, ROOT, no_exception
from evaluator.collect.alerts import AlertMonitor, parse_rule
from evaluator.store.history import RunStore
from live_runs import START, write_live_runs

TIMEOUT = 60
HOSTILE = "![x](http://127.0.0.1:9/x.png)"


def monitor_page():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/monitor.py").run()
    no_exception(at)
    assert not at.error, [e.value for e in at.error]
    return at


def quality(i):
    drop = 80 <= i < 160
    return {"faithfulness": 0.5 if drop else 0.9, "answer_relevancy": 0.8}


@pytest.fixture
def seeded(history):
    """Two days of the `shop` project (a deploy half-way, a quality drop and its recovery, both alerts
    fired) and a `bank` project; the shop's run ids."""
    store = RunStore(history)
    runs = write_live_runs(store, "shop", 288, scores=quality, version=lambda i: "v1" if i < 80 else "v2")
    write_live_runs(store, "bank", 6, scores=lambda i: {"faithfulness": 0.7}, start=START + timedelta(hours=30))
    store.create_run(dataset_name="ci.jsonl", samples=[], settings={}, project="ci-only")  # no traces: not listed
    fired = AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 20")], since="").poll()
    assert [e.state for e in fired] == ["breach", "recovered"]
    return runs


def test_no_live_runs_says_how_to_start_a_collector(history):
    at = monitor_page()
    assert "No production traces yet" in at.info[0].value
    assert at.code[0].value.startswith("ragmeter collect --listen")
    assert not at.get("vega_lite_chart")


def test_a_project_is_charted_per_metric_with_its_deploys_and_alerts(seeded):
    at = monitor_page()
    assert at.selectbox(key="mon_project").options == ["bank", "shop"]
    at.selectbox(key="mon_project").select("shop").run()
    no_exception(at)
    charts = at.get("vega_lite_chart")
    assert len(charts) == 2  # faithfulness and answer_relevancy
    deploys = at.dataframe[0].value
    assert deploys["version"].tolist() == ["v2"] and deploys["after"].tolist() == ["v1"]
    alerts = at.dataframe[1].value
    assert alerts["state"].tolist() == ["recovered", "breach"]
    assert alerts["rule"].tolist() == ["faithfulness < 0.75 over 20"] * 2
    # the breach (row 87) is in the first day's run, the recovery (row 173) in the second's
    assert alerts["report"].tolist() == [f"/report?run={seeded[1]}", f"/report?run={seeded[0]}"]
    assert alerts["sample"].tolist() == [173 - 144, 87]
    assert alerts["webhook"].tolist() == ["not posted", "not posted"]


def test_a_point_lists_its_samples_with_a_link_to_their_run(seeded):
    at = monitor_page()
    at.selectbox(key="mon_project").select("shop").run()
    at.selectbox(key="mon_point").select(START.strftime("%Y-%m-%dT01")).run()
    no_exception(at)
    table = at.dataframe[2].value
    assert table["run"].tolist() == [seeded[0]] and table["samples"].tolist() == ["#6–#11"]
    assert table["report"].tolist() == [f"/report?run={seeded[0]}"]


def test_daily_points_and_a_narrow_window(seeded):
    at = monitor_page()
    at.selectbox(key="mon_project").select("shop").run()
    at.selectbox(key="mon_days").select(7).run()
    points = at.selectbox(key="mon_point").options
    assert len(points) == 48
    at.get("button_group")[0].set_value("day").run()
    no_exception(at)
    assert at.selectbox(key="mon_point").options == [(START + timedelta(days=d)).strftime("%Y-%m-%d") for d in (1, 0)]


def test_a_hostile_project_name_with_old_traces_shows_as_text(history):
    store = RunStore(history)
    write_live_runs(store, HOSTILE, 3, scores=lambda i: {"faithfulness": 0.9}, start=START - timedelta(days=20))
    at = monitor_page()
    assert at.selectbox(key="mon_project").options == [HOSTILE]
    no_exception(at)
    # 20 days old: outside the default 14-day window, and the name is escaped in the message
    assert "No scored traces for" in at.info[0].value and "\\!\\[x\\]" in at.info[0].value
    assert not at.get("vega_lite_chart")


def test_an_unknown_user_sees_a_sign_in_message_only(tmp_path, monkeypatch, history):
    from test_app_team import team_config

    team_config(tmp_path, monkeypatch)
    write_live_runs(RunStore(tmp_path / "team-history.sqlite3"), "secret-project", 3,
                    scores=lambda i: {"faithfulness": 0.9})
    at = AppTest.from_file(str(ROOT / "pages" / "monitor.py"), default_timeout=30).run()
    no_exception(at)
    assert "Sign in" in at.info[0].value and not at.selectbox and not at.get("vega_lite_chart")
