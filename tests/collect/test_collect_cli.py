"""`ragmeter collect` as a user runs it: a real process, SIGTERM, usage errors, the [[collect]] team config."""
import argparse
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from evaluator.cli.args import build_parser
from evaluator.cli.collect import collect_settings
from evaluator.cli.command import main
from evaluator.errors import ConfigError
from ports import free_port
from teamfiles import config_toml, team_judge, write_config
from trace_app import TraceApp

REPO = Path(__file__).resolve().parents[2]
TOKEN_ENV = "RAGMETER_TEST_COLLECT_TOKEN"


def status(port: int, token: str) -> dict:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/status", headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=5) as reply:
        return json.loads(reply.read())


def start(history: Path, port: int, *extra: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO), **{TOKEN_ENV: "cli-token"})
    proc = subprocess.Popen([sys.executable, "-m", "evaluator", "collect", "--listen", f"127.0.0.1:{port}",
                             "--project", "desk", "--history", str(history), "--token-env", TOKEN_ENV,
                             "--settle", "0.2", "--status-every", "1", *extra],
                            env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    line = proc.stderr.readline()
    assert "listening on" in line, line + proc.stderr.read()
    return proc


@pytest.mark.slow
def test_collect_scores_traces_and_sigterm_stops_it_cleanly(history, capsys):
    port = free_port()
    proc = start(history, port, "--rule", 'metadata.env = "prod"')
    try:
        app = TraceApp(f"http://127.0.0.1:{port}/v1/traces", token="cli-token")
        for i in range(30):
            app.ask(i, env="prod" if i < 20 else "dev")
        assert app.flush()
        app.close()
        end = time.monotonic() + 60
        while status(port, "cli-token")["scored"] < 20 and time.monotonic() < end:
            time.sleep(0.2)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 0
        err = proc.stderr.read()
        assert "stopped; traces 30, sampled 20, scored 20/20" in err
    finally:
        if proc.poll() is None:
            proc.kill()
    assert main(["runs", "--project", "desk", "--history", str(history)]) == 0
    out = capsys.readouterr().out
    assert "20/20" in out and "desk live" in out


@pytest.mark.parametrize("argv, message", [
    (["--listen", "4318"], "write HOST:PORT"),
    (["--listen", "127.0.0.1:4318", "--token-env", "RAGMETER_NOT_SET_ANYWHERE"], "the variable is not set"),
    (["--listen", "127.0.0.1:4318", "--rule", "env"], "KEY = VALUE"),
    (["--listen", "127.0.0.1:4318", "--sample", "2"], "a share from 0 to 1"),
    (["--listen", "127.0.0.1:4318", "--webhook", "http://127.0.0.1:9/hook"], "give at least one --alert"),
    ([], "--listen HOST:PORT is required"),
    (["--listen", "127.0.0.1:4318", "--alert", "faithfulness < 0.7 over 10", "--webhook-env", "RAGMETER_NOT_SET_HOOK"],
     "--webhook-env RAGMETER_NOT_SET_HOOK: the variable is not set"),
])
def test_bad_options_exit_2_with_one_line(history, capsys, argv, message):
    assert main(["collect", "--project", "desk", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_port_in_use_is_said_plainly(history, capsys):
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        assert main(["collect", "--project", "desk", "--listen", f"127.0.0.1:{held.getsockname()[1]}"]) == 2
    assert "cannot listen there" in capsys.readouterr().err


JUDGE = team_judge("http://127.0.0.1:9/v1", name="house", model="judge-small", api_key_env="HOUSE_KEY")
DESK = {"project": "desk", "judge": "house", "sample": 0.25, "rules": ['metadata.env = "prod"', "route != /health"],
        "max_per_hour": 500}


def write_collect(tmp_path, monkeypatch=None, **desk):
    """The [[judges]] house judge and the desk project's [[collect]] entry (`desk`: its keys instead)."""
    return write_config(tmp_path, config_toml(judges=[JUDGE], collect=[desk or DESK]), monkeypatch)


def args_for(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(["collect", "--listen", "127.0.0.1:4318", "--project", "desk", *argv])


def test_the_team_config_gives_the_project_its_rate_rules_cap_and_judge(tmp_path, monkeypatch):
    write_collect(tmp_path, monkeypatch)
    rules, config = collect_settings(args_for())
    assert (rules.rate, rules.max_per_hour, [str(c) for c in rules.conditions]) == (
        0.25, 500, ['metadata.env = "prod"', 'route != "/health"'])
    assert (config.model, config.base_url, config.api_key_env) == ("judge-small", "http://127.0.0.1:9/v1", "HOUSE_KEY")
    rules, config = collect_settings(args_for("--sample", "0.5", "--rule", "tier = gold", "--offline"))
    assert rules.rate == 0.5 and [c.key for c in rules.conditions] == ["tier"] and config.offline  # flags win


@pytest.mark.parametrize("entry, message", [
    ({"project": "desk", "judge": "nobody"}, "collect[0].judge 'nobody' is not a [[judges]] name"),
    ({"project": "desk", "sample": 3}, "collect[0].sample must be a share from 0 to 1"),
    ({"judge": "house"}, "collect[0].project is required"),
    ({"project": "desk", "every": 1}, "unknown key 'collect[0].every'"),
    ({"project": "desk", "listen": "4318"}, "collect[0].listen must be HOST:PORT"),
    ({"project": "desk", "listen": "0.0.0.0:4318"}, "takes traces from other machines: set collect[0].token_env"),
    ({"project": "desk", "listen": "127.0.0.1:4318", "token_env": "s3cr3t token"}, "the NAME of an environment"),
    ({"project": "desk", "webhook_env": "https://hooks.example.com/x"}, "collect[0].webhook_env is the NAME"),
])
def test_a_wrong_collect_entry_names_the_file_and_key(tmp_path, entry, message):
    from evaluator import config

    path = write_collect(tmp_path, **entry)
    with pytest.raises(ConfigError) as caught:
        config.load(path)
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_a_bad_rule_in_the_team_config_names_the_file_and_project(tmp_path, monkeypatch):
    write_collect(tmp_path, monkeypatch, **{**DESK, "rules": ['metadata.env = "prod"', "route"]})
    with pytest.raises(ConfigError, match=r"team.toml: \[\[collect\]\] project 'desk': sampling rule 'route'"):
        collect_settings(args_for())
