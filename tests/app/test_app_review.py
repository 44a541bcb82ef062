"""Review page (AppTest): claims marked on the text (English, Arabic right-to-left), reviews recorded
and changed, agree-with-all, the queue orders, and the Report's agreement with reviewers."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, isolate, no_exception
from evaluator.store.history import RunStore
from evaluator.model import EvalResult, EvalSample, MetricScore
from evaluator.store.reviews import Review, ReviewStore
from review_samples import OCTOPUS, OCTOPUS_CLAIMS

TIMEOUT = 60
SAMPLES = [*OCTOPUS,
           EvalSample("Where is Lyon?", "Lyon is in France.", ["Lyon is a city in France."], sample_id="en2")]
CLAIMS = [*OCTOPUS_CLAIMS, [("Lyon is in France", "supported")]]
FAITH = [0.5, 1.0, 0.9]


def scored(i):
    verdicts = [{"claim": c, "verdict": v} for c, v in CLAIMS[i]]
    return EvalResult(SAMPLES[i].sample_id, sample=SAMPLES[i], scores={
        "faithfulness": MetricScore("faithfulness", FAITH[i], "why", method="llm_blend", llm_score=FAITH[i],
                                    heuristic_score=0.2 * i, verdicts=verdicts),
        "answer_relevancy": MetricScore("answer_relevancy", 0.8, "ok", method="llm_blend", llm_score=0.8,
                                        heuristic_score=0.7)})


@pytest.fixture
def page(tmp_path, monkeypatch):
    path = isolate(tmp_path, monkeypatch)
    runs = RunStore(path)
    run_id = runs.create_run(dataset_name="octopus", samples=SAMPLES, settings={"judge": "openai", "model": "m1"})
    for i in range(3):
        runs.record_result(run_id, i, scored(i))
    runs.finish_run(run_id)
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/review.py").run()
    no_exception(at)
    at.text_input(key="rev_reviewer").set_value("ana").run()
    return at, ReviewStore(RunStore(path)), run_id


def marked_html(at):
    return "\n".join(h.proto.body for h in at.get("html"))


def test_the_worst_sample_comes_first_with_its_claims_marked(page):
    at, _, _ = page
    body = marked_html(at)
    assert '<mark class="ok" title="faithfulness 1: supported">Octopus card was launched in 1997</mark>' in body
    assert '<mark class="bad" title="faithfulness 2: unsupported">costs 50 dollars</mark>' in body
    assert '<mark class="evidence"' in body


def test_an_arabic_sample_is_marked_right_to_left(page):
    at, _, _ = page
    at.selectbox(key="rev_order").set_value("unreviewed").run()
    at.button(key="rev_next").click().run()
    no_exception(at)
    body = marked_html(at)
    assert 'dir="rtl"><mark class="ok" title="faithfulness 1: supported">أُطلقت بطاقة أوكتوبس عام ١٩٩٧</mark>' in body


def test_record_then_change_a_review(page):
    at, store, run_id = page
    at.radio(key="rev_v_faithfulness").set_value("disagree")
    at.number_input(key="rev_c_faithfulness").set_value(0.2)
    at.text_input(key="rev_n_faithfulness").set_value("the price is made up <b>")
    at.button(key="rev_save").click().run()
    no_exception(at)
    (review,) = store.reviews(run_id)
    assert (review.index, review.verdict, review.corrected, review.note, review.reviewer, review.queue) == \
        (0, "disagree", 0.2, "the price is made up <b>", "ana", "worst")
    assert review.judge == {"judge": "openai", "model": "m1"} and review.judge_score == 0.5
    assert "Saved 1 review of sample #0." in [s.value for s in at.success]

    at.button(key="rev_prev").click().run()  # back to the sample: the form shows what was stored
    assert at.radio(key="rev_v_faithfulness").value == "disagree"
    assert at.number_input(key="rev_c_faithfulness").value == 0.2
    at.radio(key="rev_v_faithfulness").set_value("agree")
    at.number_input(key="rev_c_faithfulness").set_value(None)
    at.button(key="rev_save").click().run()
    (changed,) = store.reviews(run_id)
    assert (changed.verdict, changed.corrected) == ("agree", None)


def test_agree_with_all_records_every_metric_and_moves_on(page):
    at, store, run_id = page
    at.button(key="rev_agree_all").click().run()
    no_exception(at)
    assert sorted(r.metric for r in store.reviews(run_id)) == ["answer_relevancy", "faithfulness"]
    assert at.session_state["rev_pos"] == 1


def test_unreviewed_queue_shrinks_and_ends(page):
    at, store, run_id = page
    at.selectbox(key="rev_order").set_value("unreviewed").run()
    for _ in range(3):
        at.button(key="rev_agree_all").click().run()
        no_exception(at)
    assert "Nothing left in this queue." in [s.value for s in at.success]
    assert len(store.reviews(run_id, metric="faithfulness")) == 3


def test_a_review_needs_a_name(page):
    at, store, run_id = page
    at.text_input(key="rev_reviewer").set_value("  ").run()
    at.button(key="rev_agree_all").click().run()
    assert any("Type your name first" in w.value for w in at.warning)
    assert store.reviews(run_id) == []


def test_the_report_shows_agreement_with_reviewers_beside_each_mean(page):
    at, store, run_id = page
    at.selectbox(key="rev_order").set_value("random").run()
    for _ in range(3):
        at.button(key="rev_agree_all").click().run()
    at.switch_page("pages/history.py").run()
    at.query_params["run"] = run_id
    at.switch_page("pages/report.py").run()
    no_exception(at)
    captions = [c.value for c in at.caption]
    assert any(c.startswith("reviewers agree 100% (too few reviews for an interval), n=3 · judged 0.80 → corrected 0.80 "
                            "[0.80, 0.80] from 3 reviews; ±0.03 reached")
               for c in captions), captions
    assert "Judge agreement with your reviewers" in [h.value for h in at.subheader]


def test_the_report_lists_the_largest_disagreements_first(page):
    _, store, run_id = page
    # Judge faithfulness 0.5, 1.0, 0.9 against the reviewers' 0.4, 0.2, 0.8: gaps +0.1, +0.8, +0.1.
    store.record_many(Review(run_id, i, "faithfulness", "disagree", "ana", corrected=c, judge_score=FAITH[i])
                      for i, c in enumerate((0.4, 0.2, 0.8)))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.query_params["run"] = run_id
    at.switch_page("pages/report.py").run()
    no_exception(at)
    assert "Where they disagree most" in [c.value for c in at.caption]
    worst = next(d.value for d in at.dataframe if "gap" in d.value.columns)
    assert list(worst["sample #"])[0] == 1 and worst["gap"].iloc[0] == pytest.approx(0.8)
    assert list(worst["gap"].abs()) == sorted(worst["gap"].abs(), reverse=True)
