"""Evaluate page (AppTest): choosing metrics, the rubric form, TOML import/export, judge repeats."""
from pathlib import Path

import pytest

from evaluator import RubricMetric, load_dataset
from evaluator.scoring.costs import estimate_run
from evaluator.store.history import RunStore
from evaluator.metrics.rubric import parse_rubrics
from evaluator.runs.run import RunConfig
from apptest import choose_openai_judge, isolate, no_exception, open_app, shown_report
from openai_server import ChatServer, reply

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = load_dataset(ROOT / "sample_data" / "sample.jsonl")
POLITE = RubricMetric("politeness", "The answer is polite: no blame.", scale="1-5")


def calls_for(metrics, repeats=1):
    """What the run must cost: one call per judged metric a sample can be scored on, per repeat."""
    return estimate_run(SAMPLES, metrics=metrics, repeats=repeats).calls


TIMEOUT = 60


@pytest.fixture
def app(history):
    return open_app(TIMEOUT)


def add_rubric(at, name="politeness", criteria="The answer is polite: no blame.", scale="1-5", steps=""):
    at.text_input(key="rubric_name").set_value(name)
    at.text_area(key="rubric_criteria").set_value(criteria)
    at.selectbox(key="rubric_scale").set_value(scale)
    at.text_area(key="rubric_steps").set_value(steps)
    return at.button(key="btn_rubric_add").click().run()


def use_server(at, srv):
    return choose_openai_judge(at, srv.base_url)


def judged(request):
    return reply('{"reasoning": "curt", "score": 2}' if "CRITERION" in request.prompt else '{"score": 0.9}')


def test_a_rubric_from_the_form_is_chosen_scored_and_kept_in_the_run_settings(app, history):
    add_rubric(app, steps="Read the tone\nLook for blame")
    no_exception(app)
    assert app.session_state["rubrics"]["politeness"]["steps"] == ["Read the tone", "Look for blame"]
    assert app.multiselect(key="eval_metrics").value[-1] == "politeness"
    with ChatServer(responder=judged) as srv:
        use_server(app, srv)
        app.multiselect(key="eval_metrics").set_value(["faithfulness", "politeness"]).run()
        expected = calls_for(["faithfulness", POLITE])
        assert any("Judge calls (est.)" in m.label and m.value == f"{expected:,}" for m in app.metric)
        app.button(key="btn_run").click().run()
        no_exception(app)
        calls = len(srv.chat_requests)
    report = shown_report(app)
    assert calls == expected and report.metric_names() == ["faithfulness", "politeness"]
    assert report.mean_scores()["politeness"] == 0.25
    stored = RunStore(history).get_run(app.session_state["run"].run_id).settings
    config = RunConfig.from_settings(stored)
    assert [m.name for m in config.chosen_metrics()] == ["faithfulness", "politeness"]
    assert config.rubrics["politeness"]["criteria"] == "The answer is polite: no blame."


def test_a_bad_rubric_is_refused_with_the_reason(app):
    add_rubric(app, criteria="   ")
    no_exception(app)
    assert "rubrics" not in app.session_state or not app.session_state["rubrics"]
    assert any("criteria is empty" in e.value for e in app.error)
    add_rubric(app, name="faithfulness", criteria="x")
    assert any("a metric has that name" in e.value for e in app.error)


def test_rubrics_import_from_and_export_to_toml(app):
    toml = b'[tone]\ncriteria = "Calm."\nscale = "pass-fail"\n\n[brevity]\ncriteria = "Short."\nfields = ["answer"]\n'
    app.file_uploader(key="rubric_upload").set_value(("rubrics.toml", toml, "application/toml")).run()
    no_exception(app)
    assert list(app.session_state["rubrics"]) == ["tone", "brevity"]
    assert app.multiselect(key="eval_metrics").value[-2:] == ["tone", "brevity"]
    exported = app.get("download_button")
    assert exported, "no export button"
    assert [r.name for r in parse_rubrics(toml.decode())] == ["tone", "brevity"]
    app.button(key="btn_rubric_remove_tone").click().run()
    assert list(app.session_state["rubrics"]) == ["brevity"] and "tone" not in app.multiselect(key="eval_metrics").value


def test_offline_a_rubric_is_skipped_and_still_shown_in_the_report(app):
    add_rubric(app)
    assert any("need a judge" in c.value for c in app.caption)
    app.button(key="btn_run").click().run()
    no_exception(app)
    report = shown_report(app)
    assert "politeness" in report.metric_names() and report.mean_scores()["politeness"] is None
    assert all(r.scores["politeness"].skipped for r in report.results)
    assert all(r.scores["politeness"].reasoning.startswith("Needs a judge") for r in report.results if r.sample.answer)
    app.switch_page("pages/report.py").run()
    no_exception(app)
    assert any(m.label == "politeness" and m.value == "N/A" for m in app.metric)


def test_no_metric_chosen_disables_the_run(app):
    app.multiselect(key="eval_metrics").set_value([]).run()
    assert app.button(key="btn_run").disabled
    assert any("at least one metric" in w.value for w in app.warning)


def test_judge_repeats_multiply_the_calls_and_the_report_shows_the_noise(app):
    with ChatServer(responder=judged) as srv:
        use_server(app, srv)
        app.multiselect(key="eval_metrics").set_value(["answer_relevancy"]).run()
        app.number_input(key="eval_repeats").set_value(3).run()
        app.button(key="btn_run").click().run()
        no_exception(app)
        assert len(srv.chat_requests) == calls_for(["answer_relevancy"], repeats=3) == 3 * calls_for(["answer_relevancy"])
    report = shown_report(app)
    assert report.results[0].scores["answer_relevancy"].llm_scores == [0.9, 0.9, 0.9]
    app.switch_page("pages/report.py").run()
    no_exception(app)
    assert "Judge noise" in [h.value for h in app.subheader]


def test_the_picker_offers_retrieval_metrics_by_id_and_a_run_without_ids_shows_them_na(app, history):
    picker = app.multiselect(key="eval_metrics")
    assert {"hit@3", "mrr@10", "ndcg@5", "ndcg_exp@10"} <= set(picker.options)
    picker.set_value(["faithfulness", "ndcg@5"]).run()
    app.button(key="btn_run").click().run()
    no_exception(app)
    (info,) = RunStore(history).list_runs()
    report = RunStore(history).load_report(info.run_id)
    assert all(r.scores["ndcg@5"].skipped and "No retrieval ids" in r.scores["ndcg@5"].reasoning
               for r in report.results)  # the sample has no ids: N/A with the reason, never 0
    assert report.mean_scores().get("ndcg@5") is None
