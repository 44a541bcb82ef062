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


def shown_report(at: AppTest):
    """The report the session shows: a run the history holds is read from there (pages keep only its id and
    summary, never its rows); a report held in memory (one the history could not keep) as it is."""
    from evaluator.store.history import RunStore

    if "report" in at.session_state:
        return at.session_state["report"]
    return RunStore().load_report(at.session_state["run"].run_id)
