"""What the AppTest files share: the app's path, an isolated history and judge cache, and the check
that a page raised nothing. (tests/ is on sys.path under pytest: `from apptest import ...`.)"""
from pathlib import Path

from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")


def isolate(tmp_path: Path, monkeypatch) -> Path:
    """Point the history and the judge cache into `tmp_path`; returns the history's path."""
    path = tmp_path / "history.sqlite3"
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", str(tmp_path / "judge-cache.sqlite3"))
    monkeypatch.setenv("RAGMETER_HISTORY", str(path))
    return path


def open_app(timeout: float) -> AppTest:
    """The whole app, run once (its first page is Evaluate)."""
    return AppTest.from_file(APP, default_timeout=timeout).run()


def no_exception(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def choose_openai_judge(at: AppTest, base_url: str, model: str = "test-model", api_key: str = "") -> AppTest:
    """On Evaluate: the OpenAI-compatible judge at `base_url` running `model` (with `api_key` typed, when
    given), the judge cache off, so every call reaches the server; the page run again."""
    at.radio(key="eval_judge").set_value("OpenAI-compatible API").run()
    at.text_input(key="eval_base_url").set_value(base_url)
    at.text_input(key="eval_model").set_value(model)
    if api_key:
        at.text_input(key="eval_api_key").set_value(api_key)
    return at.checkbox(key="eval_cache").uncheck().run()


def stopped_keeping_rows(at: AppTest, history: Path, total: int) -> None:
    """The session's run of `total` rows was stopped after 3 or more: its finished rows are kept in the
    history, the rest pending there."""
    from evaluator.store.history import RunStore

    report, meta = shown_report(at), at.session_state["run"]
    kept = len(report.results)
    assert 3 <= kept < total and (meta.status, meta.total, meta.error) == ("stopped", total, None)
    store = RunStore(history)
    (info,) = store.list_runs()
    assert (info.run_id, info.status, info.n_done) == (meta.run_id, "stopped", kept)
    assert len(store.pending_samples(info.run_id)) == total - kept


def shown_report(at: AppTest):
    """The report the session shows: a run the history holds is read from there (pages keep only its id and
    summary, never its rows); a report held in memory (one the history could not keep) as it is."""
    from evaluator.store.history import RunStore

    if "report" in at.session_state:
        return at.session_state["report"]
    return RunStore().load_report(at.session_state["run"].run_id)
