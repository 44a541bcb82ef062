"""History page (AppTest): comparing two runs of one dataset also runs the sequential A/B test."""
from streamlit.testing.v1 import AppTest

from apptest import APP, isolate, no_exception
from evaluator import EvalResult, EvalSample, MetricScore
from evaluator.runs.ab import ab_from_runs
from evaluator.store.history import RunStore

N = 40


SAMPLES = [EvalSample(f"How fast do parcels reach zone {i}?", f"Within {i % 9 + 2} days.",
                      [f"Parcels to zone {i} arrive within {i % 9 + 2} working days."], None, f"z{i}")
           for i in range(N)]


def save_run(store, faithfulness, dataset="zones.jsonl"):
    """A judged run of the same samples: B's judge found its answers faithful, A's did not."""
    run_id = store.create_run(dataset_name=dataset, samples=SAMPLES, settings={"judge": "offline"})
    for i, sample in enumerate(SAMPLES):
        score = faithfulness + 0.05 * (i % 3)
        store.record_result(run_id, i, EvalResult(sample.sample_id, sample=sample, scores={
            "faithfulness": MetricScore("faithfulness", score, "why", method="llm_blend", llm_score=score)}))
    store.finish_run(run_id, status="finished", total_time=0.1)
    return run_id


def compared(run_a, run_b):
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/history.py").run()
    at.selectbox(key="hist_cmp_a").set_value(run_a)
    at.selectbox(key="hist_cmp_b").set_value(run_b)
    at.button(key="btn_hist_compare").click().run()
    no_exception(at)
    return at


def test_the_sequential_test_names_the_better_run_and_the_rows_it_needed(tmp_path, monkeypatch):
    store = RunStore(isolate(tmp_path, monkeypatch))
    run_a, run_b = save_run(store, 0.2), save_run(store, 0.85)
    at = compared(run_a, run_b)
    table = [d.value for d in at.dataframe if "rows needed" in d.value.columns][0].set_index("metric")
    expected = ab_from_runs(store, run_a, run_b)["faithfulness"]
    row = table.loc["faithfulness"]
    assert row["decision"] == "B better" and expected.decision == "B"
    assert row["rows needed"] == f"{expected.samples_used}/{N}" and expected.samples_used < N
    assert row["delta (B−A)"] == round(-expected.difference, 4) > 0  # candidate − baseline, as every delta
    assert row["interval low"] > 0


def test_runs_of_different_datasets_get_no_sequential_test(tmp_path, monkeypatch):
    store = RunStore(isolate(tmp_path, monkeypatch))
    at = compared(save_run(store, 0.2), save_run(store, 0.85, dataset="other.jsonl"))
    assert not [d for d in at.dataframe if "rows needed" in d.value.columns]
    assert ("No sequential test: it pairs the rows of one dataset, and these runs scored different datasets "
            "(zones.jsonl and other.jsonl).") in [c.value for c in at.caption]
