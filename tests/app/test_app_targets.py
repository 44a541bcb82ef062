"""Evaluate with "call my pipeline" (AppTest): the form, Test target against a real loopback endpoint,
and the Report's target section and trajectory."""
from pathlib import Path

import pytest

from evaluator import OfflineJudge, RAGEvaluator
from evaluator.io.datasets import load_dataset
from evaluator.targets import FunctionTarget
from evaluator.targets.pipeline import evaluate_with_target
from apptest import isolate, no_exception, open_app, shown_report
from target_server import TargetServer

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30


@pytest.fixture
def app(tmp_path, monkeypatch):
    isolate(tmp_path, monkeypatch)
    return open_app(TIMEOUT)


def pipeline_mode(at, file="demo_questions.jsonl"):
    at.radio(key="eval_answers").set_value("call my pipeline (HTTP endpoint)").run()
    at.selectbox(key="eval_sample_file").set_value(file).run()
    return at


def test_a_file_without_answers_needs_a_pipeline(app):
    app.selectbox(key="eval_sample_file").set_value("demo_questions.jsonl").run()
    no_exception(app)
    assert any("no answer column" in e.value and "choose Answers: call my pipeline" in e.value for e in app.error)
    pipeline_mode(app)
    no_exception(app)
    assert not app.error and app.button(key="btn_test_target").disabled  # no URL yet
    assert any("Enter your endpoint's URL" in i.value for i in app.info)


def test_test_target_shows_the_parsed_reply_and_a_wrong_path(app):
    reply = {"data": {"reply": {"text": "Nine euros."}, "hits": [{"passage": "Day passes cost 9 euros."}]},
             "steps": [{"name": "search", "arguments": {"q": "x"}, "output": "hit"}]}
    with TargetServer(lambda req: (200, reply)) as srv:
        pipeline_mode(app)
        app.text_input(key="eval_target_url").input(srv.url).run()
        app.text_input(key="eval_target_answer").input("data.reply.text").run()
        app.text_input(key="eval_target_contexts").input("data.hits[].passage").run()
        app.button(key="btn_test_target").click().run()
        no_exception(app)
        assert "Nine euros." in app.success[0].value
        assert any("Day passes cost 9 euros." in t.value for t in app.text)
        assert srv.requests[0][2] == {"question": "How much does a day pass cost?"}
        app.text_input(key="eval_target_answer").input("data.answer").run()  # a wrong path
        app.button(key="btn_test_target").click().run()
        no_exception(app)
        assert any("no answer at 'data.answer'" in e.value for e in app.error)


def test_bad_target_options_are_shown_not_raised(app):
    pipeline_mode(app)
    app.text_input(key="eval_target_url").input("ftp://example.com").run()
    no_exception(app)
    assert any("needs an http:// or https:// URL" in e.value for e in app.error)
    app.text_input(key="eval_target_url").input("http://127.0.0.1:9/ask").run()
    app.text_input(key="eval_target_body").input('{"q": "x"}').run()
    assert any("must contain {question}" in e.value for e in app.error)


def test_report_shows_target_latency_failures_and_the_trajectory(app):
    from evaluator.demo import agent_answer
    from pages._runs import RunMeta

    def target(question):
        if "refund" in question:
            raise TimeoutError("pipeline down")
        return agent_answer(question)

    samples = load_dataset(ROOT / "sample_data" / "demo_agent_questions.jsonl", needs_answer=False)
    samples[0].question = "Any refund?"
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), samples, FunctionTarget(target))
    app.session_state["report"] = report
    app.session_state["run"] = RunMeta("demo_agent_questions.jsonl", {"judge": "offline"}, "finished",
                                       total=len(samples))
    app.switch_page("pages/report.py").run()
    no_exception(app)
    cards = {m.label: m.value for m in app.metric}
    assert cards["Target calls"] == "5" and cards["Failed calls"] == "1"
    assert cards["Latency p50"].endswith(" ms") and "tool_call_recall" in cards
    assert any("1 of 5 target calls failed" in e.value for e in app.error)
    assert any("The target call failed: the target raised TimeoutError: pipeline down" in e.value
               for e in app.error)  # sample 0 is the drill-down's first pick
    app.selectbox(key="rep_sample").set_value(1).run()
    no_exception(app)
    markdown = "\n".join(m.value for m in app.markdown)
    assert "**Trajectory**" in markdown
    assert any("Expected tools: search_docs, read_doc" in c.value for c in app.caption)
    assert any('"query"' in c.value for c in app.code)


def demo_reply(req):
    from evaluator.demo import rag_answer

    answer, docs = rag_answer(req["question"])
    if "riders" in req["question"]:
        return 500, {"detail": "index offline"}
    return 200, {"answer": answer, "sources": docs}


def test_run_with_the_pipeline_then_rescore_from_history(app, tmp_path):
    from evaluator.store.history import RunStore

    with TargetServer(demo_reply) as srv:
        pipeline_mode(app)
        app.text_input(key="eval_target_url").input(srv.url).run()
        app.number_input(key="eval_target_workers").set_value(2).run()
        app.button(key="btn_run").click().run()
        no_exception(app)
    report = shown_report(app)
    assert len(report.results) == 10 and report.target_stats()["failures"] == 1
    assert any("1 of 10 calls to your pipeline failed" in w.value for w in app.warning)
    [run] = RunStore(tmp_path / "history.sqlite3").list_runs()
    assert run.settings["target"]["url"] == srv.url and run.n_done == 10
    asked = len(srv.requests)
    app.switch_page("pages/history.py").run()
    app.button(key="btn_hist_rescore").click().run()
    no_exception(app)
    runs = RunStore(tmp_path / "history.sqlite3").list_runs()
    assert len(runs) == 2 and runs[0].settings["rescored_from"] == run.run_id
    assert len(srv.requests) == asked  # the pipeline was not called again
