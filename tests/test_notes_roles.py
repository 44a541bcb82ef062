"""Who may write notes in team mode: `[roles] viewers_may_comment` in the team file, checked where a note is saved."""
import pytest

from evaluator import service
from evaluator.config import load
from evaluator.errors import ConfigError
from teamfiles import config_toml, write_config

VIEWER, EVALUATOR = "vera@example.com", "eve@example.com"


def team(tmp_path, **roles):
    text = config_toml(server={"shared": True, "auth": "proxy"},
                       roles={"viewers": ["*"], "evaluators": [EVALUATOR], **roles})
    return load(write_config(tmp_path, text))


@pytest.mark.parametrize("switch, viewer_may", [({}, False), ({"viewers_may_comment": False}, False),
                                                ({"viewers_may_comment": True}, True)])
def test_viewers_write_notes_only_when_the_team_file_says_so(tmp_path, switch, viewer_may):
    config = team(tmp_path, **switch)
    assert service.may_note(service.access_of(config, VIEWER)) is viewer_may
    assert service.may_note(service.access_of(config, EVALUATOR)) is True


def test_the_switch_must_be_true_or_false(tmp_path):
    with pytest.raises(ConfigError, match="viewers_may_comment"):
        team(tmp_path, viewers_may_comment="yes")
