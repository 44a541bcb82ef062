"""Receivers the team configuration starts beside the dashboard ([[collect]] listen = "HOST:PORT"): real
`ragmeter collect` child processes, their secrets off the command line, a port in use said plainly
(and not retried in a loop), and no receiver left behind when the dashboard is stopped or killed."""
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from apptest import APP, no_exception
from evaluator import config as team_config
from evaluator.collect import beside
from ports import free_port
import teamfiles
from trace_app import TraceApp

REPO = Path(__file__).resolve().parents[2]
TOKEN_ENV, HOOK_ENV = "RAGMETER_TEST_BESIDE_TOKEN", "RAGMETER_TEST_BESIDE_HOOK"
TOKEN = "beside-token-canary"


def write_config(tmp_path: Path, monkeypatch, *entries: tuple) -> team_config.Config:
    """A [[collect]] receiver per (project, port), its token and webhook in the environment."""
    path = teamfiles.write_config(tmp_path, teamfiles.config_toml(collect=[
        {"project": project, "listen": f"127.0.0.1:{port}", "token_env": TOKEN_ENV,
         "alerts": ["faithfulness < 0.2 over 50"], "webhook_env": HOOK_ENV} for project, port in entries]), monkeypatch)
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    monkeypatch.setenv(HOOK_ENV, "http://127.0.0.1:9/hook-canary")
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    return team_config.load(path)


def wait_state(receiver: beside.Receiver, state: str, timeout: float = 60.0) -> beside.ReceiverStatus:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        status = receiver.status()
        if status.state == state:
            return status
        time.sleep(0.1)
    raise AssertionError(f"{receiver.project}: still {receiver.status()} after {timeout} s")


def scored(port: int) -> int:
    req = urllib.request.Request(f"http://127.0.0.1:{port}/status", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=5) as reply:
        return int(json.loads(reply.read())["scored"])


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(autouse=True)
def no_receivers_left():
    yield
    beside.stop_all()
    beside._receivers.clear()


@pytest.mark.slow
def test_a_configured_receiver_starts_beside_the_dashboard_scores_traces_and_stops_with_it(
        history, tmp_path, monkeypatch):
    port = free_port()
    config = write_config(tmp_path, monkeypatch, ("desk", port))
    stops, started = [], []
    # started from a thread that then ends, as a Streamlit page run does: the receiver must outlive it
    page_run = threading.Thread(target=lambda: started.extend(
        beside.ensure_started(config, str(history), on_first=stops.append)))
    page_run.start()
    page_run.join()
    (receiver,) = started
    assert stops == [beside.stop_all]  # the dashboard's exit hook gets the way to stop them
    wait_state(receiver, "listening")
    time.sleep(2)
    assert receiver.status().state == "listening"
    assert beside.ensure_started(config, str(history)) == [receiver]  # idempotent: one child per project
    cmdline = Path(f"/proc/{receiver.process.pid}/cmdline").read_bytes().decode()
    assert TOKEN not in cmdline and "hook-canary" not in cmdline and str(history) not in cmdline

    app = TraceApp(f"http://127.0.0.1:{port}/v1/traces", token=TOKEN)
    for i in range(5):
        app.ask(i)
    assert app.flush()
    app.close()
    end = time.monotonic() + 60
    while scored(port) < 5 and time.monotonic() < end:
        time.sleep(0.2)
    assert scored(port) == 5

    beside.stop_all()
    assert receiver.process.wait(timeout=15) == 0
    assert not port_open(port)
    assert any("stopped; traces 5" in line for line in receiver.status().lines)


def test_a_port_in_use_is_said_in_the_receivers_words_and_not_retried_at_once(history, tmp_path, monkeypatch):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        config = write_config(tmp_path, monkeypatch, ("desk", held.getsockname()[1]))
        (receiver,) = beside.ensure_started(config, str(history))
        status = wait_state(receiver, "exited")
        assert status.exit_code == 2 and "cannot listen there" in status.problem
        first = receiver.process
        assert beside.ensure_started(config, str(history)) == [receiver] and receiver.process is first


@pytest.mark.slow
def test_a_killed_dashboard_leaves_no_receiver_behind(history, tmp_path, monkeypatch):
    port = free_port()
    write_config(tmp_path, monkeypatch, ("desk", port))
    dashboard = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "from evaluator import config\n"
        "from evaluator.collect import beside\n"
        f"(r,) = beside.ensure_started(config.current(), {str(history)!r})\n"
        "print(r.process.pid, flush=True)\n"
        "time.sleep(600)\n")], stdout=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        child = int(dashboard.stdout.readline())
        end = time.monotonic() + 60
        while not port_open(port) and time.monotonic() < end:
            time.sleep(0.2)
        assert port_open(port)
        dashboard.send_signal(signal.SIGKILL)
        dashboard.wait(10)
        end = time.monotonic() + 20
        while Path(f"/proc/{child}").exists() and time.monotonic() < end:
            time.sleep(0.2)
        assert not port_open(port), "the receiver outlived the dashboard"
    finally:
        if dashboard.poll() is None:
            dashboard.kill()


def test_the_monitor_page_shows_a_receiver_that_could_not_start_in_a_red_box(history, tmp_path, monkeypatch):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        config = write_config(tmp_path, monkeypatch, ("desk", held.getsockname()[1]))
        wait_state(beside.ensure_started(config, str(history))[0], "exited")
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.switch_page("pages/monitor.py").run()
        no_exception(at)
    # the project is listed before its first trace, and the box says why no trace can come
    assert at.selectbox(key="mon_project").value == "desk"
    (box,) = [e.value for e in at.error]
    assert "The trace receiver for this project is not running" in box and "cannot listen there" in box
