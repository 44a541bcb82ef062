"""The write itself asks who may (evaluator.team.access through pages/_team.authorize): called with no
signed-in user in team mode, the run starter writes nothing, whatever page or script called it."""
import pytest

from evaluator.errors import NotAllowed
from evaluator.model import EvalSample
from evaluator.runs.run import RunConfig
from evaluator.store.history import RunStore
from teamfiles import write_team


def test_the_run_starter_refuses_a_session_nobody_signed_into(tmp_path, monkeypatch):
    history = tmp_path / "team.sqlite3"
    write_team(tmp_path, monkeypatch, history=history, evaluators=["*"])
    from pages import _runs

    with pytest.raises(NotAllowed, match="nobody signed in may not start runs"):
        _runs.start_run([EvalSample("q?", "a.", ["c."])], RunConfig(), dataset_name="sneaky.csv")
    assert RunStore(history).list_runs() == []
