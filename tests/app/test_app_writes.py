"""The write itself asks who may (evaluator.team.access through pages/_team.authorize): called with no
signed-in user in team mode, the run starter writes nothing, whatever page or script called it."""
import pytest

from evaluator.errors import NotAllowed
from evaluator.model import EvalSample
from evaluator.runs.run import RunConfig
from evaluator.store.history import RunStore

TEAM = """
[server]
shared = true
auth = "proxy"
history = "{history}"
[roles]
viewers = ["*"]
evaluators = ["*"]
"""


def test_the_run_starter_refuses_a_session_nobody_signed_into(tmp_path, monkeypatch):
    history = tmp_path / "team.sqlite3"
    config = tmp_path / "team.toml"
    config.write_text(TEAM.format(history=history))
    monkeypatch.setenv("RAGMETER_CONFIG", str(config))
    from pages import _runs

    with pytest.raises(NotAllowed, match="nobody signed in may not start runs"):
        _runs.start_run([EvalSample("q?", "a.", ["c."])], RunConfig(), dataset_name="sneaky.csv")
    assert RunStore(history).list_runs() == []
