"""alerts: rules read from text, the evaluator's breaches and recoveries, and their state in a real history."""
from datetime import timedelta

import pytest

from evaluator.analysis.timeline import ScoredRow
from evaluator.collect import alerts
from evaluator.collect.alerts import AlertMonitor, AlertRuleError, Rule, evaluate, parse_rule
from evaluator.store.history import RunStore

from live_runs import START, write_live_runs


@pytest.mark.parametrize("text, rule", [
    ("faithfulness < 0.75 over 200", Rule("faithfulness", "<", 0.75, 200)),
    ("faithfulness<0.75", Rule("faithfulness", "<", 0.75, 200)),
    ("  Answer_Relevancy >= 0.9 over 50 ", Rule("answer_relevancy", ">=", 0.9, 50)),
    ("faithfulness mean over the last 100 < 0.7", Rule("faithfulness", "<", 0.7, 100)),
    ("drop of 0.05 against 3f2a9c1d", Rule("overall", "<", None, 200, drop=0.05, against="3f2a9c1d")),
    ("faithfulness drop of 0.1 against baseline over 30",
     Rule("faithfulness", "<", None, 30, drop=0.1, against="baseline")),
])
def test_rules_read_as_written(text, rule):
    assert parse_rule(text) == rule
    assert parse_rule(rule.text) == rule  # the canonical spelling reads back as the same rule


@pytest.mark.parametrize("text, says", [
    ("", "it is empty"),
    ("faithfulness", "comes a comparison"),
    ("faithfulness = 0.75", "'=' is not a comparison"),
    ("faithfulness < abc over 200", "'abc' is not a number (the threshold)"),
    ("faithfulness < 75", "75 is outside 0-1"),
    ("faithfulness < 0.75 over", "`over` needs a count"),
    ("faithfulness < 0.75 over ten", "'ten' is not a count of samples"),
    ("faithfulness < 0.75 over 0", "'0' is not a count of samples"),
    ("faithfulness < 0.75 during 200", "expected 'over' as word 4 (found 'during')"),
    ("faithfulness < 0.75 over 200 please", "unexpected 'please'"),
    ("faith-fulness < 0.75", "'faith-fulness' is not a metric name"),
    ("faithfulness drop 0.05 against baseline", "expected 'of' as word 3 (found '0.05')"),
    ("faithfulness drop of 0.05", "expected 'against' as word 5 (the rule ends there)"),
    ("faithfulness drop of 0.05 against", "`against` needs a run id or `baseline`"),
    ("drop of 0.05 against ../../etc", "is not a run id"),
])
def test_bad_rules_say_which_word_and_show_an_example(text, says):
    with pytest.raises(AlertRuleError) as caught:
        parse_rule(text)
    message = str(caught.value)
    assert says in message and f"Alert rule {text!r}" in message and "faithfulness < 0.75 over 200" in message


def rows(values):
    return [ScoredRow(f"2026-12-01T00:{i // 60:02d}:{i % 60:02d}Z", "r1", i, v) for i, v in enumerate(values)]


def test_a_drop_half_way_fires_one_breach_and_one_recovery():
    rule = parse_rule("faithfulness < 0.75 over 20")
    values = [0.9] * 100 + [0.5] * 100 + [0.9] * 100
    changes = evaluate(rule, 0.75, rows(values))
    # k low rows in the window: mean 0.9 - 0.02k, under 0.75 at the 8th (row 107); back at 0.5 + 0.02j,
    # 0.77 (limit + margin) or more at the 14th high row (row 213)
    assert [(c.state, c.row.idx) for c in changes] == [("breach", 107), ("recovered", 213)]
    assert changes[0].value < 0.75 and changes[1].value >= 0.75 + alerts.MARGIN


def test_a_mean_hovering_at_the_limit_does_not_flap():
    # 0.74 / 0.76 alternating: the mean of 10 swings across 0.75 on every sample, never 0.77
    values = [0.9] * 10 + [0.74 if i % 2 else 0.76 for i in range(200)]
    changes = evaluate(parse_rule("faithfulness < 0.75 over 10"), 0.75, rows(values))
    assert [c.state for c in changes] == ["breach"]


def test_nothing_is_judged_before_the_window_is_full():
    assert evaluate(parse_rule("faithfulness < 0.75 over 50"), 0.75, rows([0.1] * 49)) == []
    assert len(evaluate(parse_rule("faithfulness < 0.75 over 50"), 0.75, rows([0.1] * 50))) == 1


def test_an_upper_limit_breaches_above_it():
    changes = evaluate(parse_rule("hallucination > 0.2 over 5"), 0.2, rows([0.0] * 5 + [0.9] * 5 + [0.0] * 10))
    assert [c.state for c in changes] == ["breach", "recovered"]


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def quality(i, drop_from=150, drop_to=300):
    return {"faithfulness": 0.5 if drop_from <= i < drop_to else 0.9}


def test_monitor_fires_once_per_breach_and_never_again_after_a_restart(store):
    write_live_runs(store, "shop", 150, scores=quality)
    first = AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 40")], since="")
    assert first.poll() == []
    # the drop arrives; a rule polled again sees only the new rows
    write_live_runs(store, "shop", 150, scores=lambda i: quality(i + 150), start=START + timedelta(minutes=1500))
    breach = first.poll()
    assert [(e.state, e.metric, e.threshold) for e in breach] == [("breach", "faithfulness", 0.75)]
    assert first.poll() == []
    # a restarted collector (a new monitor on the same history) refires nothing
    again = AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 40")], since="")
    assert again.poll() == []
    # quality comes back: one recovery, from the restarted monitor whose window was refilled from the history
    write_live_runs(store, "shop", 100, scores=lambda i: {"faithfulness": 0.9}, start=START + timedelta(minutes=3000))
    recovery = again.poll()
    assert [e.state for e in recovery] == ["recovered"]
    assert [e.state for e in alerts.events(store, "shop")] == ["recovered", "breach"]
    assert AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 40")], since="").poll() == []


def test_a_refilled_window_judges_as_the_unbroken_one_would(store, tmp_path):
    write_live_runs(store, "shop", 300, scores=lambda i: quality(i, 100, 200))
    straight = AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 40")], since="").poll()
    other = RunStore(tmp_path / "other.sqlite3")
    write_live_runs(other, "shop", 120, scores=lambda i: quality(i, 100, 200))
    assert [e.state for e in AlertMonitor(other, "shop", [parse_rule("faithfulness < 0.75 over 40")],
                                          since="").poll()] == ["breach"]
    write_live_runs(other, "shop", 180, scores=lambda i: quality(i + 120, 100, 200),
                    start=START + timedelta(minutes=1200))
    resumed = AlertMonitor(other, "shop", [parse_rule("faithfulness < 0.75 over 40")], since="").poll()
    assert [(e.state, e.value) for e in resumed] == [(e.state, e.value) for e in straight[1:]]


def test_drop_against_a_run_and_against_the_baseline(store):
    base = write_live_runs(store, "base", 10, scores=lambda i: {"faithfulness": 0.8})[0]
    store.rename_run(base, "baseline")
    write_live_runs(store, "shop", 60, scores=lambda i: {"faithfulness": 0.8 if i < 30 else 0.7})
    for against in (base, "baseline"):
        monitor = AlertMonitor(store, "shop", [parse_rule(f"faithfulness drop of 0.05 against {against} over 10")],
                               since="")
        assert [(e.state, e.threshold) for e in monitor.poll()] == [("breach", 0.75)]


def test_a_missing_baseline_says_what_to_do(store):
    write_live_runs(store, "shop", 5, scores=lambda i: {"faithfulness": 0.8})
    with pytest.raises(AlertRuleError, match="rename the run to compare against 'baseline'"):
        AlertMonitor(store, "shop", [parse_rule("drop of 0.05 against baseline")], since="").poll()
    with pytest.raises(AlertRuleError, match="no answer_relevancy scores"):
        run = store.list_runs()[0].run_id
        AlertMonitor(store, "shop", [parse_rule(f"answer_relevancy drop of 0.05 against {run}")], since="").poll()
