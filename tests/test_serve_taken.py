"""`ragmeter serve` and `dashboard` say when they cannot start (issue 49): the dashboard's port or a trace
receiver's taken by a real listening socket, or a second supervisor on the same team file: one line, exit 2,
nothing started and nothing retried (a second `serve` used to restart its receiver on a taken port forever)."""
from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.cli.serve import supervisor_lock
from ports import free_port
from teamfiles import config_toml, write_config

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def listening():
    """A real socket listening on a free loopback port: the port another program holds."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", free_port()))
        sock.listen()
        yield sock.getsockname()[1]


def last_error(capsys) -> str:
    return capsys.readouterr().err.strip().splitlines()[-1]


def test_serve_on_a_taken_dashboard_port_says_so_and_exits_2(listening, monkeypatch, capsys):
    monkeypatch.delenv("RAGMETER_CONFIG", raising=False)
    assert main(["serve", "--port", str(listening)]) == 2
    last = last_error(capsys)
    assert last.startswith("ragmeter: error: cannot start: the dashboard's port") and f"port {listening}" in last
    assert "is taken (Address already in use)" in last and "--port" in last


def test_the_dashboard_command_checks_its_port_before_it_becomes_streamlit(listening, tmp_path):
    env = {k: v for k, v in __import__("os").environ.items() if k != "RAGMETER_CONFIG"}
    proc = subprocess.run([sys.executable, "-m", "evaluator", "dashboard", "--port", str(listening)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"the dashboard's port {listening} on 127.0.0.1 is taken" in proc.stderr.strip().splitlines()[-1]


def test_a_taken_receiver_port_is_named_with_its_project_and_exits_2(listening, tmp_path, monkeypatch, capsys):
    path = write_config(tmp_path, config_toml(collect=[{"project": "shop", "listen": f"127.0.0.1:{listening}"}]))
    assert main(["serve", "--config", str(path), "--port", str(free_port())]) == 2
    last = last_error(capsys)
    assert f"[[collect]] project 'shop': listen = '127.0.0.1:{listening}' is taken" in last, last
    assert "change listen" in last


def test_a_second_supervisor_on_the_same_team_file_is_refused_naming_the_first(tmp_path, monkeypatch, capsys):
    path = write_config(tmp_path, config_toml(collect=[{"project": "shop", "listen": f"127.0.0.1:{free_port()}"}]))
    first = supervisor_lock(str(path.resolve()))  # what the first `serve` holds for its life
    try:
        assert main(["serve", "--config", str(path), "--port", str(free_port())]) == 2
    finally:
        first.close()
    last = last_error(capsys)
    assert "another `ragmeter serve` (pid " in last and str(path.resolve()) in last and "stop it first" in last, last
    second = supervisor_lock(str(path.resolve()))  # once the first is gone, the file is free again
    second.close()
