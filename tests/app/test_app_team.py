"""Team mode in AppTest: what AppTest can check without sending headers (the roles, which need the
proxy's header, are checked in real Chromium). Laptop-mode share links and key policy too."""
import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, ROOT, choose_openai_judge, no_exception, shown_report
from evaluator.store.history import RunStore
from evaluator.model import EvalSample
from teamfiles import team_judge, write_team

CANARY = "sk-canary-team-5a0c"

PAGES = ["pages/evaluate.py", "pages/report.py", "pages/spot_check.py", "pages/generate.py", "pages/history.py"]


def team_config(tmp_path, monkeypatch, **options):
    """Team mode: alice evaluates, everyone signed in views, one team judge; `options` change teamfiles' defaults."""
    return write_team(tmp_path, monkeypatch, history=tmp_path / "team-history.sqlite3",
                      evaluators=["alice@example.com"],
                      judges=[team_judge("http://127.0.0.1:9/v1", model="m", api_key_env="TEAM_KEY")], **options)


def texts(at):
    return " ".join(str(getattr(e, "value", "")) for kind in ("markdown", "info", "error", "warning", "text", "title")
                    for e in getattr(at, kind))


@pytest.mark.parametrize("page", PAGES)
def test_an_unknown_user_sees_a_sign_in_message_and_nothing_else(tmp_path, monkeypatch, history, page):
    team_config(tmp_path, monkeypatch)
    store = RunStore(tmp_path / "team-history.sqlite3")
    store.create_run(dataset_name="secret-dataset.csv", samples=[EvalSample("q?", "a.", ["c."])], settings={})
    at = AppTest.from_file(str(ROOT / page), default_timeout=30).run()
    no_exception(at)
    assert "Sign in through your organisation's single sign-on" in at.info[0].value
    assert not at.text_input and not at.file_uploader and not at.button and not at.selectbox
    assert "secret-dataset" not in texts(at) and not at.sidebar.text_input


def test_team_mode_without_auth_refuses_to_start(tmp_path, monkeypatch, history):
    team_config(tmp_path, monkeypatch, auth=None)
    at = AppTest.from_file(APP, default_timeout=30).run()
    no_exception(at)
    assert "The dashboard cannot start" in at.error[0].value and "needs server.auth" in at.error[0].value
    assert not at.text_input and not at.file_uploader and not at.button


def test_a_share_link_opens_the_run_straight_away(history):
    store = RunStore(history)
    from evaluator import OfflineJudge, RAGEvaluator
    data = [EvalSample(f"Where is office {i}?", f"In city {i}.", [f"Office {i} is in city {i}."]) for i in range(3)]
    run_id = store.create_run(dataset_name="offices.jsonl", samples=data, settings={"judge": "offline"})
    for i, r in enumerate(RAGEvaluator(OfflineJudge()).evaluate_dataset(data).results):
        store.record_result(run_id, i, r)
    store.finish_run(run_id)
    at = AppTest.from_file(str(ROOT / "pages" / "report.py"), default_timeout=60)
    at.query_params["run"] = run_id
    at.run()
    no_exception(at)
    assert at.session_state["run"].run_id == run_id and len(shown_report(at).results) == 3


def test_the_servers_openai_key_never_goes_to_a_typed_base_url(history, monkeypatch):
    from openai_server import ChatServer

    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    with ChatServer() as srv:
        at = AppTest.from_file(APP, default_timeout=60).run()
        choose_openai_judge(at, srv.base_url)
        at.button(key="btn_run").click().run()
        no_exception(at)
        assert srv.chat_requests and all(CANARY not in str(r.headers) for r in srv.chat_requests)
