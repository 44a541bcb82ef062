"""`ragmeter config`: each setting and its origin, secrets never printed; the CLI and `ragmeter worker` use
the team file's [server] history (README "A team deployment from nothing")."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.io.datasets import load_dataset
from evaluator.runs.jobs import submit_new
from evaluator.runs.run import RunConfig
from evaluator.store.history import RunStore
from teamfiles import config_toml

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
KEY_CANARY = "sk-canary-cli-93b1f0e27d"
GATEWAY_CANARY = "gw-canary-cli-5c8e21"
PG_PASSWORD = "pgpw-canary-cli-0d4a"


@pytest.fixture
def team(tmp_path, monkeypatch):
    """A laptop team file (no team mode) naming the shared history; $RAGMETER_HISTORY unset, as on a worker."""
    path = tmp_path / "team.toml"
    path.write_text(config_toml(
        server={"history": str(tmp_path / "shared.sqlite3")},
        judges=[{"name": "gateway", "model": "gpt-4o-mini", "base_url": "https://gw.example/v1",
                 "api_key_env": "GW_KEY"}]), encoding="utf-8")
    monkeypatch.setenv("RAGMETER_CONFIG", str(path))
    monkeypatch.delenv("RAGMETER_HISTORY")
    return path


def config_json(capsys, *flags):
    assert main(["config", "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)


def test_config_says_where_each_setting_came_from(team, tmp_path, capsys):
    found = config_json(capsys, "--judge", "gateway")
    assert found["config"] == {"value": str(team), "origin": "environment RAGMETER_CONFIG", "layer": "environment"}
    assert found["history"]["value"] == str(tmp_path / "shared.sqlite3")
    assert found["history"]["origin"] == f"{team} [server] history"
    assert found["judge.model"]["origin"] == f"{team} [[judges]] gateway.model"
    assert found["judge.api_key"] == {"value": "not set", "origin": "environment GW_KEY", "layer": "default"}
    assert {"judge_cache", "user", "project", "runs.workers", "runs.engine"} <= set(found)


def test_a_flag_beats_the_environment_and_the_environment_beats_the_file(team, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "env.sqlite3"))
    assert config_json(capsys)["history"]["origin"] == "environment RAGMETER_HISTORY"
    given = config_json(capsys, "--history", str(tmp_path / "flag.sqlite3"))["history"]
    assert (given["value"], given["origin"]) == (str(tmp_path / "flag.sqlite3"), "flag --history")


def test_the_text_lists_one_setting_a_line_with_its_origin(team, capsys):
    assert main(["config"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "VALUE", "ORIGIN"]
    history = next(line for line in lines if line.startswith("history "))
    assert history.split()[1:] == [str(team.parent / "shared.sqlite3"), str(team), "[server]", "history"]


def test_secrets_never_appear_in_text_or_json():
    env = {**os.environ, "OPENAI_API_KEY": KEY_CANARY, "GW_KEY": GATEWAY_CANARY,
           "RAGMETER_HISTORY": f"postgresql://ragmeter:{PG_PASSWORD}@db.example:5432/ragmeter"}
    ragmeter = Path(sys.executable).parent / "ragmeter"
    for flags in ([], ["--json"], ["--model", "gpt-4o-mini"], ["--json", "--model", "gpt-4o-mini"],
                  ["--json", "--model", "m", "--api-key-env", "GW_KEY", "--base-url", "http://127.0.0.1:9/v1"]):
        proc = subprocess.run([str(ragmeter), "config", *flags], capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        for secret in (KEY_CANARY, GATEWAY_CANARY, PG_PASSWORD):
            assert secret not in proc.stdout + proc.stderr
        if "--json" in flags:
            found = json.loads(proc.stdout)
            assert found["history"]["value"] == "postgresql://ragmeter@db.example:5432/ragmeter"
            if "--model" in flags:
                assert found["judge.api_key"]["value"].startswith("set (")


def test_evaluate_saves_to_the_team_files_history(team, tmp_path, capsys):
    assert main(["evaluate", str(SAMPLE), "--offline", "-q"]) == 0
    runs = RunStore(tmp_path / "shared.sqlite3").list_runs()
    assert [r.dataset_name for r in runs] == ["sample.jsonl"]
    assert main(["runs"]) == 0
    assert runs[0].run_id in capsys.readouterr().out


def test_the_worker_scores_runs_queued_in_the_team_files_history(team, tmp_path):
    store = RunStore(tmp_path / "shared.sqlite3")
    run_id = submit_new(store, RunConfig(), load_dataset(str(SAMPLE)), dataset_name="sample.jsonl")
    env = {k: v for k, v in os.environ.items() if k != "RAGMETER_HISTORY"}
    proc = subprocess.run([sys.executable, "-m", "evaluator", "worker", "--once"], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"waiting for runs in {tmp_path / 'shared.sqlite3'}" in proc.stdout
    assert store.get_run(run_id).status == "finished"
