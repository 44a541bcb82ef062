"""config: the operator's RAGMETER_CONFIG file, read into frozen dataclasses; mistakes named by file and key."""
import pytest

from evaluator.runs.run import RunConfig

from evaluator import config
from evaluator.errors import ConfigError
from teamfiles import team_judge, team_toml, write_config as write

TEAM = team_toml(history="postgresql://ragmeter@db/ragmeter", user_header="X-Forwarded-Email", max_upload_mb=50,
                 evaluators=["alice@example.com", "bob@example.com"], admins=["alice@example.com"],
                 judges=[team_judge("https://api.openai.com/v1", name="gpt-4o-mini (team key)", model="gpt-4o-mini",
                                    api_key_env="OPENAI_API_KEY")],
                 targets={"allow": ["http://rag-staging.internal:8000/"], "allow_env": ["RAG_TOKEN"]})


def test_no_config_is_the_laptop_default(monkeypatch):
    monkeypatch.delenv("RAGMETER_CONFIG", raising=False)
    got = config.current()
    assert got is config.LAPTOP and not got.team and not got.targets.restricted and got.judges == ()


def test_the_issue_example_reads_whole(tmp_path, monkeypatch):
    write(tmp_path, TEAM, monkeypatch)
    got = config.current()
    assert got.team and got.server.auth == "proxy" and got.server.max_upload_mb == 50
    assert got.server.history == "postgresql://ragmeter@db/ragmeter"
    assert got.targets == config.TargetsConfig(("http://rag-staging.internal:8000/",), ("RAG_TOKEN",), True)
    judge = got.judge("gpt-4o-mini (team key)")
    run = judge.run_config(RunConfig())
    assert (run.judge, run.model, run.base_url, run.api_key_env) == (
        "openai", "gpt-4o-mini", "https://api.openai.com/v1", "OPENAI_API_KEY")
    with pytest.raises(ConfigError, match="no judge named 'other'.*gpt-4o-mini \\(team key\\)"):
        got.judge("other")


@pytest.mark.parametrize("user, role, can_view, can_evaluate, can_admin", [
    ("alice@example.com", "admin", True, True, True),
    ("bob@example.com", "evaluator", True, True, False),
    ("carol@example.com", "viewer", True, False, False),
])
def test_roles_nest(tmp_path, user, role, can_view, can_evaluate, can_admin):
    roles = config.load(write(tmp_path, TEAM)).roles
    assert roles.role_of(user) == role
    assert [roles.allows(user, r) for r in ("viewer", "evaluator", "admin")] == [can_view, can_evaluate, can_admin]


def test_a_user_in_no_list_has_no_role(tmp_path):
    roles = config.load(write(tmp_path, TEAM.replace('viewers = ["*"]', 'viewers = ["dana@example.com"]'))).roles
    assert roles.role_of("mallory@example.com") is None and not roles.allows("mallory@example.com", "viewer")


@pytest.mark.parametrize("change, message", [
    (('auth = "proxy"\n', ""), r"team\.toml: team mode \(server\.shared = true\) needs server\.auth"),
    (('auth = "proxy"', 'auth = "basic"'), r"server\.auth must be one of 'proxy', 'oidc', not 'basic'"),
    (("max_upload_mb = 50", 'max_upload_mb = "50"'), r"server\.max_upload_mb must be int, not '50'"),
    (("shared = true", "shared = 1"), r"server\.shared must be bool, not 1"),
    (('viewers = ["*"]', 'viewers = "*"'), r"roles\.viewers must be a list of strings"),
    (('model = "gpt-4o-mini"\n', ""), r"judges\[0\]\.model is required"),
    (("api_key_env", "api_key"), r"unknown key 'judges\[0\]\.api_key'"),
    (("[targets]", "[target]"), r"unknown key 'target'"),
    (('allow = ["http://rag-staging.internal:8000/"]', 'allow = ["http://me@rag-staging.internal/"]'),
     r"targets\.allow entry .* without user info"),
    (("max_upload_mb = 50", "max_upload_mb = [50"), r"team\.toml:\d+:\d+: not valid TOML"),
])
def test_mistakes_name_the_file_and_the_key(tmp_path, change, message):
    path = write(tmp_path, TEAM.replace(*change))
    with pytest.raises(ConfigError, match=message):
        config.load(path)


def test_an_unreadable_file_names_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_CONFIG", str(tmp_path / "missing.toml"))
    with pytest.raises(ConfigError, match=r"cannot read the configuration .*missing\.toml.*RAGMETER_CONFIG"):
        config.current()


def test_a_changed_file_is_read_again(tmp_path, monkeypatch):
    path = write(tmp_path, TEAM, monkeypatch)
    assert config.current().server.max_upload_mb == 50
    path.write_text(TEAM.replace("max_upload_mb = 50", "max_upload_mb = 7"))
    import os
    os.utime(path, (1, 1))  # a different mtime even within the same clock tick
    assert config.current().server.max_upload_mb == 7


@pytest.mark.parametrize("typed, message", [
    ("site-packages/evil.pth", "ends in .sqlite3"),
    ("/etc/ragmeter.sqlite3", "under your home folder"),
    ("../outside/h.sqlite3", "under your home folder"),
    ("new-folder/h.sqlite3", "does not exist"),
    ("", "type the path"),
])
def test_a_typed_history_path_creates_nothing_outside_home_or_cwd(tmp_path, monkeypatch, typed, message):
    home, cwd = tmp_path / "home", tmp_path / "work"
    home.mkdir(), cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = sorted(tmp_path.rglob("*"))
    with pytest.raises(ConfigError, match=message):
        config.typed_history_path(typed, home=home, cwd=cwd)
    assert sorted(tmp_path.rglob("*")) == before


def test_a_typed_history_path_under_home_is_accepted(tmp_path):
    (tmp_path / "runs").mkdir()
    assert config.typed_history_path(str(tmp_path / "runs" / "h.db"), home=tmp_path, cwd=tmp_path) == \
        (tmp_path / "runs" / "h.db").resolve()
