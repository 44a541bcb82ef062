"""`ragmeter serve` and `ragmeter dashboard`: the supervisor (restart with back-off, one prefixed stream, every
child stopped), the refusals a team server gives, the receivers not started twice, and a whole deployment
end to end: a run queued against its history is scored by its worker, a worker killed with -9 is started
again and logged, SIGTERM stops every child within seconds."""
from __future__ import annotations

import io
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import List

import pytest

from evaluator.cli.command import main
from evaluator.collect import beside
from evaluator.config import from_dict
from evaluator.runs.supervisor import Program, Supervisor, exit_words
from evaluator.store.history import RunStore
from ports import free_port
from teamfiles import config_toml, team_toml, write_config
from waiting import wait_for

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


# --- the supervisor ----------------------------------------------------------------------------------------
def run_in_thread(supervisor: Supervisor) -> threading.Thread:
    thread = threading.Thread(target=lambda: setattr(supervisor, "code", supervisor.run(install_signals=False)))
    thread.start()
    return thread


def test_every_line_comes_out_prefixed_by_its_process():
    out = io.StringIO()
    s = Supervisor([Program("alpha", (PY, "-c", "print('one'); import time; time.sleep(60)")),
                    Program("b", (PY, "-c", "print('two'); import time; time.sleep(60)"))], out=out, grace=5)
    thread = run_in_thread(s)
    wait_for(lambda: "alpha | one" in out.getvalue() and "b     | two" in out.getvalue())
    s.stop()
    thread.join(15)
    assert getattr(s, "code") == 0 and "ragmeter serve: stopped" in out.getvalue()


def test_a_child_that_dies_is_started_again_after_a_back_off_and_the_stream_says_why():
    out = io.StringIO()
    s = Supervisor([Program("flaky", (PY, "-c", "import sys; print('up'); sys.exit(3)"))], out=out, grace=5,
                   first_backoff=0.2)
    thread = run_in_thread(s)
    wait_for(lambda: out.getvalue().count("flaky | up") >= 3)
    s.stop()
    thread.join(15)
    text = out.getvalue()
    delays = [float(d) for d in re.findall(r"exited with code 3 after \d+ s; starting it again in ([\d.]+) s", text)]
    assert len(delays) >= 2 and delays[1] == 2 * delays[0]  # the back-off doubles
    assert "(restart 1)" in text and "(restart 2)" in text


def test_stop_ends_every_child_and_kills_one_that_ignores_sigterm():
    out = io.StringIO()
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"
    s = Supervisor([Program("polite", (PY, "-c", "import time; print('ready', flush=True); time.sleep(60)")),
                    Program("stubborn", (PY, "-c", stubborn))], out=out, grace=1.0)
    thread = run_in_thread(s)
    wait_for(lambda: out.getvalue().count("| ready") == 2)
    pids = [c.proc.pid for c in s.children if c.proc is not None]
    started = time.monotonic()
    s.stop()
    thread.join(15)
    assert time.monotonic() - started < 5
    assert "stubborn" in out.getvalue().split("did not stop within")[0].splitlines()[-1]
    assert all(c.proc is not None and c.proc.poll() is not None for c in s.children) and len(pids) == 2


def test_exit_words():
    assert exit_words(-9) == "was killed by SIGKILL" and exit_words(2) == "exited with code 2"


# --- refusals: the dashboard's own words, before anything starts ----------------------------------------------
@pytest.mark.parametrize("command", ["serve", "dashboard"])
def test_a_proxy_sign_in_listening_beyond_loopback_refuses_to_start(tmp_path, monkeypatch, capsys, command):
    path = write_config(tmp_path, team_toml(history=str(tmp_path / "h.sqlite3")), monkeypatch)
    assert main([command, "--address", "0.0.0.0", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "ragmeter: error: the dashboard cannot start: the server listens on 0.0.0.0" in err
    assert "trusted_proxies" in err


def test_a_missing_proxy_secret_refuses_to_start(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("PROXY_SECRET", raising=False)
    path = write_config(tmp_path, team_toml(history=str(tmp_path / "h.sqlite3"), proxy_secret_env="PROXY_SECRET"))
    assert main(["serve", "--config", str(path)]) == 2
    assert "proxy_secret_env names PROXY_SECRET, which is not set" in capsys.readouterr().err


def test_a_receivers_missing_token_refuses_to_start(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("COLLECT_TOKEN", raising=False)
    path = write_config(tmp_path, config_toml(collect=[{"project": "shop", "listen": "127.0.0.1:4318",
                                                        "token_env": "COLLECT_TOKEN"}]))
    assert main(["serve", "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "[[collect]] project 'shop': token_env names COLLECT_TOKEN, which is not set" in err


def test_a_broken_team_file_is_named(tmp_path, capsys):
    path = write_config(tmp_path, "[server\n")
    assert main(["serve", "--config", str(path)]) == 2
    assert str(path) in capsys.readouterr().err


def test_without_a_team_file_serve_is_the_laptop_dashboard(monkeypatch):
    from evaluator.cli.args import build_parser
    from evaluator.cli.serve import Plan

    monkeypatch.delenv("RAGMETER_CONFIG", raising=False)
    plan = Plan.of(build_parser().parse_args(["serve"]))
    assert plan.config_path is None and plan.workers() == 0 and plan.receivers() == []  # its own worker, as today
    argv = plan.dashboard_argv()
    assert argv[argv.index("--server.port") + 1] == "8501" and argv[argv.index("--server.address") + 1] == "127.0.0.1"


def test_a_relative_history_means_the_folder_serve_was_started_in(monkeypatch, tmp_path):
    # The dashboard runs in the checkout (its .streamlit/ is there): a relative path must not move with it.
    from evaluator.cli.args import build_parser
    from evaluator.cli.serve import Plan

    monkeypatch.delenv("RAGMETER_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    plan = Plan.of(build_parser().parse_args(["serve", "--history", "runs.sqlite3"]))
    assert plan.env()["RAGMETER_HISTORY"] == str(tmp_path / "runs.sqlite3")
    monkeypatch.setenv("RAGMETER_HISTORY", "postgresql://me:secret@db/ragmeter")
    plan = Plan.of(build_parser().parse_args(["dashboard"]))
    assert plan.env()["RAGMETER_HISTORY"] == "postgresql://me:secret@db/ragmeter"  # in the environment, never argv
    assert "secret" not in " ".join(plan.dashboard_argv()) and "secret" not in plan.describe()


# --- receivers: started by serve, never a second time by its dashboard ----------------------------------------
def test_under_serve_the_dashboard_starts_no_receiver_and_reports_the_port(monkeypatch, tmp_path):
    port = free_port()
    config = from_dict({"collect": [{"project": "shop", "listen": f"127.0.0.1:{port}"}]}, "team.toml")
    monkeypatch.setenv(beside.SUPERVISED_ENV, "1")
    receivers = beside.ensure_started(config, str(tmp_path / "h.sqlite3"))
    assert [type(r) for r in receivers] == [beside.SupervisedReceiver] and receivers[0].process is None
    assert receivers[0].status().state == "exited" and "ragmeter serve" in receivers[0].status().problem
    with socket.create_server(("127.0.0.1", port)):
        assert receivers[0].status().state == "listening"


# --- a deployment, end to end -----------------------------------------------------------------------------------
class Stream:
    """The output of `ragmeter serve`, read on a thread."""

    def __init__(self, proc: subprocess.Popen) -> None:
        self.lines: List[str] = []
        self.thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self.thread.start()

    def _read(self, proc: subprocess.Popen) -> None:
        for line in proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def wait(self, pattern: str, timeout: float = 90.0, after: int = 0) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in self.lines[after:]:
                found = re.search(pattern, line)
                if found:
                    return found
            time.sleep(0.1)
        raise AssertionError(f"no line matching {pattern!r} in:\n" + "\n".join(self.lines[-40:]))


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of ours is not alive
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except OSError:
        return False


@pytest.mark.slow
def test_serve_scores_a_queued_run_restarts_a_killed_worker_and_stops_everything(tmp_path):
    history = tmp_path / "history.sqlite3"
    receiver = free_port()
    team = write_config(tmp_path, config_toml(server={"history": str(history)}, runs={"workers": "external"},
                                              collect=[{"project": "shop", "listen": f"127.0.0.1:{receiver}"}]))
    env = {k: v for k, v in os.environ.items() if k not in ("RAGMETER_HISTORY", "RAGMETER_CONFIG", "OPENAI_API_KEY")}
    port = free_port()
    proc = subprocess.Popen([PY, "-m", "evaluator", "serve", "--config", str(team), "--workers", "1", "--port", str(port)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    stream = Stream(proc)
    try:
        dashboard_pid = int(stream.wait(r"started dashboard \(pid (\d+)\)").group(1))
        worker_pid = int(stream.wait(r"started worker-1 \(pid (\d+)\)").group(1))
        stream.wait(r"^worker-1 +\| ragmeter worker .*waiting for runs in " + re.escape(str(history)))
        stream.wait(rf"the dashboard is ready at http://127.0.0.1:{port}")
        receiver_pid = int(stream.wait(r"started collect-shop \(pid (\d+)\)").group(1))
        stream.wait(rf"^collect-shop +\| ragmeter collect: listening on http://127.0.0.1:{receiver}/v1/traces")

        # A run queued against the deployment's history (the team file names it) is scored by its worker.
        queued = subprocess.run([PY, "-m", "evaluator", "evaluate", str(ROOT / "sample_data" / "sample.jsonl"),
                                 "--offline", "--submit", "-q"], env={**env, "RAGMETER_CONFIG": str(team)},
                                capture_output=True, text=True, timeout=120)
        assert queued.returncode == 0, queued.stderr
        run_id = queued.stdout.strip().splitlines()[0]
        stream.wait(rf"^worker-1 +\| ragmeter worker: run {run_id} ended: finished")
        assert RunStore(history).get_run(run_id).status == "finished"
        assert len(RunStore(history).completed_indices(run_id)) == 28  # every row of the sample scored

        # A worker killed with -9 is started again, and the stream says so.
        os.kill(worker_pid, signal.SIGKILL)
        stream.wait(rf"worker-1 \(pid {worker_pid}\) was killed by SIGKILL after \d+ s; starting it again in 1 s "
                    r"\(restart 1\)")
        new_pid = int(stream.wait(r"started worker-1 \(pid (?!%d\))(\d+)\)" % worker_pid).group(1))
        assert new_pid != worker_pid and alive(new_pid)

        # SIGTERM stops every child, within seconds.
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        assert time.monotonic() - started < 20
        stream.thread.join(5)
        assert "ragmeter serve: stopped" in stream.lines
        assert not alive(dashboard_pid) and not alive(new_pid) and not alive(receiver_pid)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
