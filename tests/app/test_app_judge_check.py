"""Evaluate page (AppTest): "Check this judge" runs the exam against a real loopback judge, shows the
verdict (a red box when unusable) beside the baselines and stores it; the max-tokens field caps every call."""
import pytest
from openai_server import ChatServer, reply

from apptest import choose_openai_judge, no_exception, open_app
from evaluator.judges.replies import forget_servers
from evaluator.store.exams import judge_key, latest_exams
from evaluator.store.history import RunStore

TIMEOUT = 60


@pytest.fixture
def app(history):
    forget_servers()
    yield open_app(TIMEOUT)
    forget_servers()


def test_check_this_judge_shows_an_unusable_verdict_in_red_and_stores_it(app, history):
    with ChatServer(default=reply("It looks fine to me.")) as srv:
        choose_openai_judge(app, srv.base_url)
        app.radio(key="eval_exam_size").set_value("Quick (12 items per metric)").run()
        app.button(key="eval_check").click().run()
        no_exception(app)
        asked = len(srv.chat_requests)
        key = judge_key("test-model", srv.base_url)
    # a judge whose replies hold no score stops the exam before its 12 x 5 items, and no probe is asked
    assert 0 < asked < 12 * 5
    assert any("the exam stopped early" in t.value for t in app.text)
    assert any("Verdict: unusable" in e.value for e in app.error)
    table = app.dataframe[0].value
    assert set(table["judge"]) >= {"offline heuristics", "constant judge (always 1.0)", "random judge (seeded)"}
    assert latest_exams(RunStore(history), [key])[key]["verdict"] == "unusable"


def test_the_max_tokens_field_caps_every_judge_call(app):
    with ChatServer(default=reply('{"score": 1.0, "reasoning": "ok"}')) as srv:
        choose_openai_judge(app, srv.base_url)
        app.number_input(key="eval_max_tokens").set_value(96).run()
        app.radio(key="eval_exam_size").set_value("Quick (12 items per metric)").run()
        app.button(key="eval_check").click().run()
        no_exception(app)
        caps = {r.body.get("max_tokens") for r in srv.chat_requests}
    assert caps == {96}
