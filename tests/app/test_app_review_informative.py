"""Review page (AppTest): the informative queue records its seed, corrects the judged mean from
those reviews, and says when the target width is reached."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, isolate, no_exception
from evaluator.model import EvalResult, EvalSample, MetricScore
from evaluator.review.queue import review_queue
from evaluator.store.history import RunStore
from evaluator.store.reviews import ReviewStore

TIMEOUT = 60
N = 30
SAMPLES = [EvalSample(f"Question {i}?", f"Answer {i}.", [f"Context {i}."], sample_id=f"s{i}") for i in range(N)]


def scored(i):
    score = (i % 10) / 10 + 0.05
    return EvalResult(SAMPLES[i].sample_id, sample=SAMPLES[i], scores={
        "faithfulness": MetricScore("faithfulness", score, "why", method="llm_blend", llm_score=score)})


@pytest.fixture
def page(tmp_path, monkeypatch):
    path = isolate(tmp_path, monkeypatch)
    runs = RunStore(path)
    run_id = runs.create_run(dataset_name="many", samples=SAMPLES, settings={"judge": "openai", "model": "m1"})
    for i in range(N):
        runs.record_result(run_id, i, scored(i))
    runs.finish_run(run_id)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/review.py").run()
    at.text_input(key="rev_reviewer").set_value("ana").run()
    at.selectbox(key="rev_order").set_value("informative").run()
    no_exception(at)
    return at, ReviewStore(RunStore(path)), run_id


def test_informative_reviews_follow_the_queue_and_record_its_seed(page):
    at, store, run_id = page
    assert any("once a few samples are reviewed here" in c.value for c in at.caption)
    for _ in range(4):
        at.button(key="rev_agree_all").click().run()
    no_exception(at)
    reviews = store.reviews(run_id)
    expected = review_queue(RunStore().indexed_results(run_id), "faithfulness", "informative", seed=0)[:4]
    assert sorted(r.index for r in reviews) == sorted(expected)
    assert {r.queue for r in reviews} == {"informative:0"}
    shown = [i.value for i in at.info] + [s.value for s in at.success]
    assert any("→ corrected" in v and "from 4 reviews, weighted" in v for v in shown), shown


def test_the_page_says_when_the_target_width_is_reached(page):
    at, _, _ = page
    at.number_input(key="rev_target").set_value(0.5).run()
    for _ in range(4):
        at.button(key="rev_agree_all").click().run()
    no_exception(at)
    assert any(s.value.startswith("Target ±0.500 reached: judged") for s in at.success), [s.value for s in at.success]
