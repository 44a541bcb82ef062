"""History page compare (AppTest): runs scored differently are "not comparable", said in red before any number,
with no verdict and no red box per metric (verdicts only when "Compare across scorers" is ticked, marked so);
runs scored alike get one decision per metric, a starred footnote where the sequential test reads it
differently; the compare chart is drawn; run names are shown as text."""
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator
from evaluator.store.history import RunStore

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def samples(better: bool = False, n: int = 6) -> list:
    out = []
    for i in range(n):
        ctx = f"Policy {i}: parcels to zone {i} arrive within {i + 2} working days."
        answer = ctx if better else f"Maybe a week or so, it depends on the weather in zone {i}."
        out.append(EvalSample(f"How fast do parcels reach zone {i}?", answer, [ctx], f"Within {i + 2} days.", f"z{i}"))
    return out


def save_run(store: RunStore, data: list, **settings) -> str:
    run_id = store.create_run(dataset_name="zones.jsonl", samples=data,
                              settings={"judge": "offline", "language": "auto", "heuristics": "ragmeter", **settings})
    evaluator = RAGEvaluator(OfflineJudge())
    for i, sample in enumerate(data):
        store.record_result(run_id, i, evaluator.evaluate(sample))
    store.finish_run(run_id, status="finished", total_time=0.1)
    return run_id


pytestmark = pytest.mark.usefixtures("history")  # the app reads the history `store` opens (tests/conftest.py)


def compared(run_a: str, run_b: str, across: bool = False) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/history.py").run()
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.checkbox(key="hist_cmp_across").set_value(across)
    at.button(key="btn_hist_compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def deltas(at: AppTest):
    return [d.value for d in at.dataframe if "delta (B−A)" in d.value.columns][0].set_index("metric")


def test_runs_scored_differently_are_not_comparable_and_get_no_verdict_and_no_red_box(store):
    run_a = save_run(store, samples(), model="gpt-4o-mini")
    run_b = save_run(store, samples(better=True), model="gpt-4o")
    at = compared(run_b, run_a)  # B is clearly worse: between comparable runs, red boxes would say so
    red = [e.value for e in at.error]
    assert len(red) == 1 and red[0].startswith("Not comparable: scored with different settings (judge model")
    assert "judge model: gpt-4o (baseline) vs gpt-4o-mini (candidate)" in red[0]
    assert set(deltas(at)["decision"]) == {"not comparable"}


def test_different_heuristics_are_not_comparable_unless_asked_then_marked(store):
    run_a = save_run(store, samples())
    run_b = save_run(store, samples(better=True), heuristics="jaccard")
    at = compared(run_b, run_a)
    assert [e.value.split(".")[0] for e in at.error] == [
        "Not comparable: scored by different heuristics (jaccard vs default)"]
    assert not [e for e in at.error if e.value.startswith("Worse")]
    at = compared(run_b, run_a, across=True)
    decisions = deltas(at)["decision"]
    assert decisions["faithfulness"].startswith("worse (scorers differ)")
    assert at.warning and at.warning[0].value.startswith("Compared across scorers: scored by different heuristics")
    assert any(e.value.startswith("Worse: faithfulness") and "(scorers differ)" in e.value for e in at.error)


def test_one_decision_per_metric_and_a_footnote_where_the_sequential_test_differs(store):
    run_a, run_b = save_run(store, samples()), save_run(store, samples(better=True))
    at = compared(run_a, run_b)
    table = deltas(at)
    assert table.loc["faithfulness", "decision"].split(" ")[0] == "better"
    assert "sequential test" not in table.columns and "verdict" not in table.columns
    assert not [e for e in at.error if "comparable" in e.value]  # scored the same way
    worse = [m for m, d in table["decision"].items() if d.startswith("worse")]
    assert [e.value.split(" ")[1] for e in at.error] == worse  # a red box per metric decided worse, none else
    if table.loc["faithfulness", "decision"].endswith("*"):  # six pairs: too few for the sequential test to stop
        said = [c.value for c in at.caption if c.value.startswith("\\* faithfulness: better over all")]
        assert len(said) == 1 and "reads no clear change" in said[0]
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the compare chart is drawn


def test_run_names_with_html_and_rtl_characters_are_shown_as_text(store):
    hostile = "<b>bold</b> **star** \u202eevil مقارنة"
    run_a = save_run(store, samples())
    store.rename_run(run_a, hostile)
    run_b = save_run(store, samples(better=True))
    at = compared(run_a, run_b)
    shown = "<b>bold</b> **star** evil مقارنة"  # the bidi override dropped, the rest kept as typed
    assert store.get_run(run_a).name == shown
    assert shown in at.selectbox(key="hist_cmp_a").format_func(run_a)
    caption = [c.value for c in at.caption if c.value.startswith("Candidate B")][0]
    assert "\\<b\\>bold\\</b\\>" in caption or "&lt;b&gt;" in caption, caption  # escaped, not markup


def test_a_project_over_time_is_charted_and_a_change_of_scorer_marked(store):
    first = store.create_run(dataset_name="zones.jsonl", samples=samples(), project="zones",
                             settings={"judge": "offline", "heuristics": "ragmeter"})
    second = store.create_run(dataset_name="zones.jsonl", samples=samples(better=True), project="zones",
                              settings={"judge": "offline", "heuristics": "jaccard"})
    evaluator = RAGEvaluator(OfflineJudge())
    for run_id, data in ((first, samples()), (second, samples(better=True))):
        for i, sample in enumerate(data):
            store.record_result(run_id, i, evaluator.evaluate(sample))
        store.finish_run(run_id, status="finished", total_time=0.1)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/history.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert "A project over time" in [h.value for h in at.subheader]
    assert at.selectbox(key="hist_trend_project").value == "zones"
    charts = at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")
    spec = charts[0].proto.spec
    assert "Runs in order, one series per scorer" in spec and "faithfulness" in spec
    assert '"field": "scorer"' in spec and '"field": "tick"' in spec  # a series per scorer; runs in order
    assert any(f"Changed at run {second}: heuristic set default → jaccard" in c.value for c in at.caption)


def test_the_comparison_downloads_as_one_html_page(store):
    run_a, run_b = save_run(store, samples()), save_run(store, samples(better=True))
    at = compared(run_a, run_b)
    labels = [d.proto.label for d in at.get("download_button")]
    assert "Download comparison (HTML)" in labels
