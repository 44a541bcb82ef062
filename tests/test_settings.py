"""team/settings.py: every setting resolved flag > environment > team file > default, with its origin,
secrets masked; the library's own defaults (a script's RunStore()) agree with it."""
import getpass
from pathlib import Path

import pytest

from evaluator.errors import ConfigError
from evaluator.judges.cache import default_cache_path
from evaluator.store.history import DEFAULT_HISTORY_PATH, RunStore, default_history_location, default_owner
from evaluator.team import settings
from evaluator.team.settings import DEFAULT, ENVIRONMENT, FILE, FLAG, Flags, resolve
from teamfiles import config_toml

CANARY = "sk-canary-7f3e9a1c5b"
PG_PASSWORD = "pw-canary-4411"


@pytest.fixture
def team_file(tmp_path):
    """A team file with a value for every key the resolver reads from one."""
    path = tmp_path / "team.toml"
    path.write_text(config_toml(
        server={"history": str(tmp_path / "file-history.sqlite3")},
        runs={"engine": "ray", "ray_address": "auto", "ray_workers": 3, "max_queued": 9},
        judges=[{"name": "gateway", "model": "gpt-4o-mini", "base_url": "https://gw.example/v1",
                 "api_key_env": "GW_KEY"}]), encoding="utf-8")
    return path


def env_with(team_file=None, **variables):
    """An environment of only these variables (and RAGMETER_CONFIG naming `team_file`)."""
    return {**({"RAGMETER_CONFIG": str(team_file)} if team_file else {}), **variables}


# -- precedence, one table per setting ---------------------------------------------------------------
@pytest.mark.parametrize("flag, env, in_file, layer, origin", [
    ("flag.sqlite3", "env.sqlite3", True, FLAG, "flag --history"),
    (None, "env.sqlite3", True, ENVIRONMENT, "environment RAGMETER_HISTORY"),
    (None, None, True, FILE, "[server] history"),
    (None, None, False, DEFAULT, "default"),
])
def test_history_is_the_flag_then_the_environment_then_the_team_file_then_the_default(
        tmp_path, team_file, flag, env, in_file, layer, origin):
    environ = env_with(team_file if in_file else None, **({"RAGMETER_HISTORY": env} if env else {}))
    found = resolve(Flags(history=flag), environ)["history"]
    expected = {FLAG: flag, ENVIRONMENT: env, FILE: str(tmp_path / "file-history.sqlite3"),
                DEFAULT: str(DEFAULT_HISTORY_PATH)}[layer]
    assert (found.value, found.layer) == (expected, layer)
    assert found.origin.endswith(origin)
    if layer == FILE:
        assert found.origin == f"{team_file} [server] history"


@pytest.mark.parametrize("flags, env, layer, value", [
    (Flags(cache="flag.sqlite3", no_cache=False), {"RAGMETER_JUDGE_CACHE": "/env/cache.sqlite3"}, FLAG, "flag.sqlite3"),
    (Flags(no_cache=True), {"RAGMETER_JUDGE_CACHE": "/env/cache.sqlite3"}, FLAG, None),
    (Flags(), {"RAGMETER_JUDGE_CACHE": "/env/cache.sqlite3"}, ENVIRONMENT, "/env/cache.sqlite3"),
    (Flags(), {}, DEFAULT, "~/.ragmeter/judge-cache.sqlite3"),  # the isolated home of the test
])
def test_the_judge_cache_is_the_flag_then_the_environment_then_the_default(flags, env, layer, value):
    found = settings.judge_cache(flags, env)
    assert (found.value, found.layer) == (value and str(Path(value).expanduser()), layer)


def test_the_user_is_ragmeter_user_else_the_login_name():
    assert settings.user({"RAGMETER_USER": " alice "}).value == "alice"
    assert settings.user({"RAGMETER_USER": " alice "}).origin == "environment RAGMETER_USER"
    found = settings.user({})
    assert (found.value, found.layer) == (getpass.getuser(), DEFAULT)


def test_the_team_file_is_the_flag_then_ragmeter_config_then_none(team_file, tmp_path):
    assert settings.config_file("other.toml", env_with(team_file)).origin == "flag --config"
    assert settings.config_file(None, env_with(team_file)).value == str(team_file)
    assert settings.config_file(None, {}).value is None
    assert resolve(Flags(), {})["team"].value is False


def test_the_project_is_the_flag_else_the_datasets_name():
    assert settings.project("shop").value == "shop"
    assert settings.project(None).origin == "default (the dataset's file name)"


@pytest.mark.parametrize("flags, layers", [
    (Flags(), {"judge": DEFAULT, "judge.model": DEFAULT}),
    (Flags(model="m"), {"judge": FLAG, "judge.model": FLAG, "judge.base_url": DEFAULT, "judge.api_key_env": DEFAULT}),
    (Flags(judge="gateway"), {"judge": FILE, "judge.model": FILE, "judge.base_url": FILE, "judge.api_key_env": FILE}),
    (Flags(judge="gateway", model="m2", base_url="http://127.0.0.1:8080/v1", api_key_env="MINE"),
     {"judge": FILE, "judge.model": FLAG, "judge.base_url": FLAG, "judge.api_key_env": FLAG}),
    (Flags(judge="gateway", offline=True), {"judge": FLAG}),
])
def test_the_judge_is_the_flags_then_the_named_team_judge_then_the_default(team_file, flags, layers):
    found = resolve(flags, env_with(team_file))
    assert {name: found[name].layer for name in layers} == layers


def test_a_named_team_judge_gives_its_model_url_and_key_variable(team_file):
    found = resolve(Flags(judge="gateway"), env_with(team_file, GW_KEY=CANARY))
    assert [found[n].value for n in ("judge", "judge.model", "judge.base_url", "judge.api_key_env")] == [
        "openai", "gpt-4o-mini", "https://gw.example/v1", "GW_KEY"]
    assert found["judge.model"].origin == f"{team_file} [[judges]] gateway.model"


@pytest.mark.parametrize("flags, env, variable", [
    (Flags(model="m"), {}, "OPENAI_API_KEY"),  # OpenAI's own URL
    (Flags(model="m"), {"OPENAI_BASE_URL": "https://proxy.example/v1"}, "OPENAI_API_KEY"),  # the operator's URL
    (Flags(model="m", base_url="http://127.0.0.1:8080/v1"), {}, None),  # a typed URL never gets the server's key
    (Flags(model="m", base_url="http://127.0.0.1:8080/v1", api_key_env="LOCAL_KEY"), {}, "LOCAL_KEY"),
])
def test_the_key_variable_is_the_one_the_judge_reads(flags, env, variable):
    found = resolve(flags, env)
    assert found["judge.api_key_env"].value == variable
    base_url = found["judge.base_url"]
    assert base_url.value == (flags.base_url or env.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    assert base_url.layer == (FLAG if flags.base_url else ENVIRONMENT if env else DEFAULT)


@pytest.mark.parametrize("flags, key, layer, value", [
    (Flags(engine="local", ray_workers=5), "runs.engine", FLAG, "local"),
    (Flags(engine="local", ray_workers=5), "runs.ray_workers", FLAG, 5),
    (Flags(), "runs.engine", FILE, "ray"),
    (Flags(), "runs.ray_address", FILE, "auto"),
    (Flags(), "runs.max_queued", FILE, 9),
    (Flags(), "runs.workers", DEFAULT, "local"),
    (Flags(), "runs.lease_s", DEFAULT, 30.0),
])
def test_runs_settings_are_the_flag_then_the_team_file_then_the_default(team_file, flags, key, layer, value):
    found = resolve(flags, env_with(team_file))[key]
    assert (found.value, found.layer) == (value, layer)


def test_a_wrong_team_file_is_an_error_naming_it(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[server]\nhistroy = 'x'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bad.toml.*histroy"):
        resolve(Flags(), env_with(bad))


# -- secrets ---------------------------------------------------------------------------------------
def test_a_key_is_only_set_or_not_set():
    found = resolve(Flags(model="m"), {"OPENAI_API_KEY": CANARY})["judge.api_key"]
    assert (found.value, found.shown) == (True, f"set ({len(CANARY)} characters)")
    assert CANARY not in repr(found)
    assert resolve(Flags(model="m"), {})["judge.api_key"].shown == "not set"


def test_a_history_url_is_shown_without_its_password():
    url = f"postgresql://ragmeter:{PG_PASSWORD}@db.example:5432/ragmeter"
    found = settings.history(None, {"RAGMETER_HISTORY": url})
    assert found.value == url  # what the store opens
    assert found.shown == "postgresql://ragmeter@db.example:5432/ragmeter"
    assert PG_PASSWORD not in str(found.to_dict())


# -- the library's defaults agree with the resolver -------------------------------------------------
def test_the_librarys_defaults_are_the_resolvers_without_flag_and_file(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "h.sqlite3"))
    monkeypatch.setenv("RAGMETER_USER", "carol")
    assert str(default_history_location()) == settings.history().value
    assert default_owner() == settings.user().value
    assert str(default_cache_path()) == settings.judge_cache().value
    for name in ("RAGMETER_HISTORY", "RAGMETER_USER", "RAGMETER_JUDGE_CACHE"):
        monkeypatch.delenv(name)
    assert str(default_history_location()) == settings.history().value
    assert default_owner() == settings.user().value
    assert str(default_cache_path()) == settings.judge_cache().value


def test_a_program_opens_the_team_files_history(tmp_path, team_file, monkeypatch):
    monkeypatch.delenv("RAGMETER_HISTORY")
    monkeypatch.setenv("RAGMETER_CONFIG", str(team_file))
    store = RunStore(settings.history_location())
    assert Path(store.path) == tmp_path / "file-history.sqlite3"


@pytest.mark.parametrize("argv, engine, ray_workers", [
    (["worker"], "ray", 3),  # the team file's [runs]
    (["worker", "--engine", "local"], "local", 3),
    (["worker", "--engine", "ray", "--ray-workers", "1"], "ray", 1),
])
def test_the_workers_engine_flags_beat_the_team_files_runs(team_file, monkeypatch, argv, engine, ray_workers):
    from evaluator.cli.args import build_parser

    monkeypatch.setenv("RAGMETER_CONFIG", str(team_file))
    flags = Flags.of(build_parser().parse_args(argv))  # the worker's own defaults read as not given
    assert settings.run_setting("engine", flags).value == engine
    assert settings.run_setting("ray_workers", flags).value == ray_workers
