"""History page compare (AppTest): runs scored differently are said to be so in red before any number; each
metric has one verdict, with the sequential test beside it and one sentence where the two disagree; the
compare chart is drawn."""
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


def compared(run_a: str, run_b: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/history.py").run()
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.button(key="btn_hist_compare").click().run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def deltas(at: AppTest):
    return [d.value for d in at.dataframe if "delta (B−A)" in d.value.columns][0].set_index("metric")


def test_runs_scored_differently_are_said_so_in_red(store):
    run_a = save_run(store, samples(), model="gpt-4o-mini")
    run_b = save_run(store, samples(better=True), model="gpt-4o")
    at = compared(run_a, run_b)
    red = [e.value for e in at.error]
    assert any("scored differently" in e and "judge model: gpt" in e and "(candidate)" in e for e in red)


def test_one_verdict_per_metric_the_sequential_test_beside_it_and_why_they_differ(store):
    run_a, run_b = save_run(store, samples()), save_run(store, samples(better=True))
    at = compared(run_a, run_b)
    table = deltas(at)
    assert table.loc["faithfulness", "verdict"] == "clearly better"
    assert "sequential test" in table.columns and table.loc["faithfulness", "sequential test"] in (
        "B better", "undecided", "A better", "no practical difference")
    assert not any("scored differently" in e.value for e in at.error)
    if table.loc["faithfulness", "sequential test"] != "B better":  # six pairs: too few to stop early
        said = [c.value for c in at.caption if c.value.startswith("faithfulness: the verdict is the fixed-size")]
        assert len(said) == 1 and "wider" in said[0]
    assert at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")  # the compare chart is drawn


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
    assert charts and "Over time" in charts[0].proto.spec and "faithfulness" in charts[0].proto.spec
    assert any(f"Changed at run {second}: heuristic set ragmeter → jaccard" in c.value for c in at.caption)


def test_the_comparison_downloads_as_one_html_page(store):
    run_a, run_b = save_run(store, samples()), save_run(store, samples(better=True))
    at = compared(run_a, run_b)
    labels = [d.proto.label for d in at.get("download_button")]
    assert "Download comparison (HTML)" in labels
