"""History page (AppTest): comparing two runs of one dataset also runs the sequential A/B test, folded into the
one decision per metric (a footnote only where it reads the change differently)."""
from streamlit.testing.v1 import AppTest

from apptest import APP, isolate, no_exception
from evaluator import EvalResult, EvalSample, MetricScore
from evaluator.runs.ab import ab_from_runs
from evaluator.store.history import RunStore

N = 40


SAMPLES = [EvalSample(f"How fast do parcels reach zone {i}?", f"Within {i % 9 + 2} days.",
                      [f"Parcels to zone {i} arrive within {i % 9 + 2} working days."], None, f"z{i}")
           for i in range(N)]


def save_run(store, faithfulness, dataset="zones.jsonl", offset=0):
    """A judged run of the same samples: B's judge found its answers faithful, A's did not (`offset` shifts the
    per-row pattern, so the paired differences vary)."""
    run_id = store.create_run(dataset_name=dataset, samples=SAMPLES, settings={"judge": "offline"})
    for i, sample in enumerate(SAMPLES):
        score = faithfulness + 0.05 * ((i + offset) % 3)
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


def test_the_sequential_test_is_folded_into_one_decision(tmp_path, monkeypatch):
    store = RunStore(isolate(tmp_path, monkeypatch))
    run_a, run_b = save_run(store, 0.2), save_run(store, 0.85)
    at = compared(run_a, run_b)
    expected = ab_from_runs(store, run_a, run_b)["faithfulness"]
    assert expected.decision == "B" and expected.samples_used < N  # it could have stopped early: both say better
    [table] = [d.value.set_index("metric") for d in at.dataframe if "decision" in d.value.columns]
    assert table.loc["faithfulness", "decision"] == "better"  # one word, no star: the two tests agree
    assert not [c for c in at.caption if "sequential test, which may stop" in c.value]
    assert not [d for d in at.dataframe if "rows needed" in d.value.columns]  # no second table of decisions


def test_where_the_tests_differ_a_footnote_says_so(tmp_path, monkeypatch):
    store = RunStore(isolate(tmp_path, monkeypatch))
    run_a, run_b = save_run(store, 0.50), save_run(store, 0.53, offset=1)  # small and noisy: clear only at the end
    at = compared(run_a, run_b)
    [table] = [d.value.set_index("metric") for d in at.dataframe if "decision" in d.value.columns]
    assert table.loc["faithfulness", "decision"] == "better *"
    notes = [c.value for c in at.caption if "the sequential test, which may stop at any pair" in c.value]
    assert len(notes) == 1 and notes[0].startswith("\\* faithfulness: better over all 40 pairs")
    assert "reads no clear change after 40 of 40 rows" in notes[0]


def test_runs_of_different_datasets_get_no_sequential_test(tmp_path, monkeypatch):
    store = RunStore(isolate(tmp_path, monkeypatch))
    at = compared(save_run(store, 0.2), save_run(store, 0.85, dataset="other.jsonl"))
    assert not [d for d in at.dataframe if "rows needed" in d.value.columns]
    assert ("No sequential test: it pairs the rows of one dataset, and these runs scored different datasets "
            "(zones.jsonl and other.jsonl).") in [c.value for c in at.caption]
