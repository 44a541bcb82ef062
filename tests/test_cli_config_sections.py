"""`ragmeter config` shows every section of the team file with its origin, never a secret, and refuses a
broken file in one line (issue 45): a real team file in a tmp dir, `main([...])` and one real process."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.team.settings import SPECS
from teamfiles import config_toml

ROOT = Path(__file__).resolve().parent.parent
CANARIES = {
    "GW_KEY": "sk-canary-judge-6a1d94",
    "COLLECT_TOKEN": "tok-canary-collect-2f7e",
    "ALERT_HOOK": "https://hooks.example/services/T0/B0/canary-hook-91c3",
    "PROXY_SECRET": "proxy-canary-secret-5b08",
    "OPENAI_API_KEY": "sk-canary-openai-c44e",
}
PG_PASSWORD = "pgpw-canary-sections-7d2"


def team_file(tmp_path: Path) -> Path:
    path = tmp_path / "team.toml"
    path.write_text(config_toml(
        server={"shared": True, "auth": "proxy", "proxy_secret_env": "PROXY_SECRET",
                "history": f"postgresql://ragmeter:{PG_PASSWORD}@db.example:5432/ragmeter"},
        roles={"evaluators": ["bob@example.com"], "admins": ["alice@example.com"]},
        judges=[{"name": "gateway", "model": "gpt-4o-mini", "base_url": "https://gw.example/v1",
                 "api_key_env": "GW_KEY"}],
        targets={"allow": ["http://rag.internal:8000/"], "allow_env": ["RAG_TOKEN"]},
        runs={"max_queued": 7},
        collect=[{"project": "shop", "judge": "gateway", "listen": "127.0.0.1:4318", "token_env": "COLLECT_TOKEN",
                  "webhook_env": "ALERT_HOOK", "alerts": ["faithfulness < 0.5"]}]), encoding="utf-8")
    return path


@pytest.fixture
def team(tmp_path, monkeypatch):
    path = team_file(tmp_path)
    monkeypatch.setenv("RAGMETER_CONFIG", str(path))
    for name, value in CANARIES.items():
        monkeypatch.setenv(name, value)
    return path


def shown(capsys, *flags):
    assert main(["config", "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_section_is_shown_with_its_origin(team, capsys):
    found = shown(capsys)
    assert found["roles.admins"] == {"value": ["alice@example.com"], "origin": f"{team} [roles] admins",
                                     "layer": "file"}
    assert found["roles.viewers"]["origin"] == "default"
    assert found["server.auth"]["origin"] == f"{team} [server] auth"
    assert found["targets.allow"]["value"] == ["http://rag.internal:8000/"]
    assert found["targets.allow_env"]["origin"] == f"{team} [targets] allow_env"
    assert found["judges[gateway].base_url"]["origin"] == f"{team} [[judges]] gateway.base_url"
    assert found["judges[gateway].temperature"]["origin"] == "default"
    assert found["collect[shop].alerts"]["value"] == ["faithfulness < 0.5"]
    assert found["collect[shop].listen"]["origin"] == f"{team} [[collect]] shop.listen"
    assert found["runs.max_queued"] == {"value": 7, "origin": f"{team} [runs] max_queued", "layer": "file"}


def test_a_secrets_variable_is_named_and_said_to_be_set(team, capsys, monkeypatch):
    monkeypatch.delenv("ALERT_HOOK")
    found = shown(capsys)
    assert found["collect[shop].token_env"]["value"] == "COLLECT_TOKEN"
    assert found["collect[shop].token"] == {"value": f"set ({len(CANARIES['COLLECT_TOKEN'])} characters)",
                                            "origin": "environment COLLECT_TOKEN", "layer": "environment"}
    assert found["collect[shop].webhook"]["value"] == "not set"
    assert found["server.proxy_secret"]["value"].startswith("set (")
    assert found["judges[gateway].api_key"]["origin"] == "environment GW_KEY"


def test_every_registered_setting_is_shown(team, capsys):
    assert set(SPECS) <= set(shown(capsys))


@pytest.mark.parametrize("flags", [[], ["--json"], ["--judge", "gateway"], ["--json", "--judge", "gateway"],
                                   ["--json", "--model", "gpt-4o-mini"]])
def test_no_secret_appears_in_the_output(team, capsys, flags):
    assert main(["config", *flags]) == 0
    out = capsys.readouterr()
    for secret in (*CANARIES.values(), PG_PASSWORD):
        assert secret not in out.out + out.err


def test_the_docs_table_is_the_registry():
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from gen_reference import expand, settings_markdown
    finally:
        sys.path.remove(str(ROOT / "docs"))
    table = settings_markdown()
    for spec in SPECS.values():
        row = next(line for line in table.splitlines() if line.startswith(f"| `{spec.name}` |"))
        for part in (spec.flag, spec.env, spec.file_key):
            assert not part or f"`{part}`" in row, (spec.name, part)
    assert table in expand((ROOT / "docs" / "team.md").read_text(encoding="utf-8"))


BASE = {"server": {"auth": "proxy"}, "roles": {"admins": []}, "targets": {"allow": []}, "runs": {"lease_s": 30},
        "judge": {"max_tokens": 0}}


@pytest.mark.parametrize("section, typo, known", [
    ("server", "user_headr", "user_header"), ("roles", "admin", "admins"), ("targets", "allowed", "allow"),
    ("runs", "max_queue", "max_queued"), ("judge", "max_token", "max_tokens"),
    ("judges", "api_key_evn", "api_key_env"), ("collect", "webhok_env", "webhook_env"),
])
def test_an_unknown_key_in_any_section_names_it_and_the_closest(tmp_path, monkeypatch, capsys, section, typo, known):
    tables = {k: dict(v) for k, v in BASE.items()}
    entries = {"judges": [{"name": "j", "model": "m"}], "collect": [{"project": "p"}]}
    (entries[section][0] if section in entries else tables[section])[typo] = "x"
    path = tmp_path / "team.toml"
    path.write_text(config_toml(**tables, **entries), encoding="utf-8")
    monkeypatch.setenv("RAGMETER_CONFIG", str(path))
    assert main(["config"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err
    assert f"unknown key '{section}" in err and typo in err and f"did you mean '{known}'?" in err


@pytest.mark.parametrize("text, says", [
    ("[serverr]\nshared = false\n", "unknown key 'serverr'; did you mean 'server'?"),  # an unknown table
    ("[runs]\nengine = 'spark'\n", "team.toml: runs.engine must be one of"),  # a known key, a bad value
])
def test_a_broken_team_file_is_one_line_naming_it(tmp_path, monkeypatch, capsys, text, says):
    path = tmp_path / "team.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("RAGMETER_CONFIG", str(path))
    assert main(["config"]) == 2
    assert says in capsys.readouterr().err


def test_bad_toml_is_one_line_with_file_line_and_column(tmp_path):
    path = tmp_path / "team.toml"
    path.write_text("[server]\nshared = false\nhistory = \"unclosed\n", encoding="utf-8")
    env = {**os.environ, "RAGMETER_CONFIG": str(path)}
    proc = subprocess.run([sys.executable, "-m", "evaluator", "config"], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.startswith(f"ragmeter: error: {path}:3:")
    assert "not valid TOML" in proc.stderr
