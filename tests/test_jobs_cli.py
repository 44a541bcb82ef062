"""The jobs commands through real `python -m evaluator` processes: a run stopped from another shell,
`evaluate --submit` queued and listed with its place, then scored by `ragmeter worker --once`."""
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openai_server import ChatServer, reply

ROOT = Path(__file__).resolve().parents[1]


def rows_file(tmp_path, n):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps({"question": f"What is box {i}?", "answer": f"Box {i} is blue.",
                                          "contexts": [f"Box {i}: blue."]}) for i in range(n)) + "\n")
    return path


def ragmeter(*args, history, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_HISTORY=str(history))
    return subprocess.Popen([sys.executable, "-m", "evaluator", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def stored(history):
    try:
        with sqlite3.connect(history) as db:
            return db.execute("SELECT run_id, COUNT(*) FROM results GROUP BY run_id").fetchall()
    except sqlite3.Error:
        return []


@pytest.mark.slow
def test_runs_stop_from_another_shell_stops_the_cli_run_within_a_second(tmp_path):
    history = tmp_path / "h.sqlite3"
    with ChatServer(responder=lambda r: reply('{"score": 0.7, "reasoning": "ok"}', delay=0.05)) as srv:
        cli = ragmeter("evaluate", str(rows_file(tmp_path, 300)), "--model", "m", "--base-url", srv.base_url,
                       "--no-cache", "--max-workers", "2", "--metrics", "faithfulness", "-q", history=history)
        deadline = time.monotonic() + 60
        while not (stored(history) and stored(history)[0][1] >= 5) and time.monotonic() < deadline:
            time.sleep(0.1)
        run_id = stored(history)[0][0]
        asked = time.monotonic()
        stop = ragmeter("runs", "stop", run_id, history=history)
        out, err = stop.communicate(timeout=60)
        assert stop.returncode == 0 and "stops it within about a second" in out, err
        code = cli.wait(timeout=60)
        took = time.monotonic() - asked
        err = cli.stderr.read()
    assert code == 130, err
    assert "stopped from elsewhere" in err and f"resume with: ragmeter evaluate --resume {run_id}" in err
    assert took < 6  # the stop command's own start-up included
    listing = ragmeter("runs", history=history).communicate(timeout=60)[0]
    assert run_id in listing and "stopped" in listing


@pytest.mark.slow
def test_submit_queues_the_run_and_a_worker_once_scores_it(tmp_path):
    history = tmp_path / "h.sqlite3"
    sub = ragmeter("evaluate", str(rows_file(tmp_path, 20)), "--offline", "--submit", history=history)
    out, err = sub.communicate(timeout=60)
    assert sub.returncode == 0, err
    run_id = out.strip()
    assert "queued run" in err and "ragmeter worker" in err
    listing = ragmeter("runs", history=history).communicate(timeout=60)[0]
    assert "queued #1" in listing and run_id in listing
    worker = ragmeter("worker", "--once", history=history)
    out, err = worker.communicate(timeout=120)
    assert worker.returncode == 0, err
    assert f"claimed run {run_id}" in out and f"run {run_id} ended: finished (20/20 rows)" in out
    assert stored(history) == [(run_id, 20)]


def test_runs_stop_without_a_run_id_says_what_to_give(tmp_path):
    proc = ragmeter("runs", "stop", history=tmp_path / "h.sqlite3")
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 2 and "needs a RUN_ID" in err
