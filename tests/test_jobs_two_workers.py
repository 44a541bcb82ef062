"""Two `ragmeter worker` processes on one PostgreSQL history share one queue: six runs submitted from
the CLI are each claimed once, both workers take some, every row is scored once, and SIGTERM ends both."""
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from openai_server import ChatServer, reply
from test_jobs_cli import rows_file

ROOT = Path(__file__).resolve().parents[1]
RUNS, ROWS = 6, 12


def ragmeter(*args, history):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_HISTORY=history, OPENAI_API_KEY="sk-test-worker",
               PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "evaluator", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


@pytest.mark.postgres
@pytest.mark.slow
def test_two_workers_share_one_postgresql_queue_and_score_each_run_once(tmp_path, postgres_url):
    from evaluator.store.history import RunStore

    data = rows_file(tmp_path, ROWS)
    # A judge slow enough (50 ms a call) that one worker cannot drain the queue before the other starts.
    with ChatServer(responder=lambda r: reply('{"score": 0.7, "reasoning": "ok"}', delay=0.05)) as srv:
        submitted = []
        for _ in range(RUNS):
            sub = ragmeter("evaluate", str(data), "--model", "m", "--base-url", srv.base_url, "--no-cache",
                           "--metrics", "faithfulness", "--submit", history=postgres_url)
            out, err = sub.communicate(timeout=120)
            assert sub.returncode == 0, err
            submitted.append(out.strip())
        workers = [ragmeter("worker", "--slots", "1", history=postgres_url) for _ in range(2)]
        store = RunStore(postgres_url)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if all(store.get_run(r).status == "finished" for r in submitted):
                break
            time.sleep(0.5)
        for w in workers:
            w.send_signal(signal.SIGTERM)
        outs = [w.communicate(timeout=30)[0] for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outs
    claimed = [re.findall(r"claimed run ([0-9a-f]{12})", out) for out in outs]
    assert all(claimed), f"both workers must take runs: {claimed}"
    every = claimed[0] + claimed[1]
    assert sorted(every) == sorted(submitted)  # each run claimed exactly once, none lost
    for run_id in submitted:
        info = store.get_run(run_id)
        assert (info.status, info.n_done, info.n_samples) == ("finished", ROWS, ROWS)
        rows = store.query("SELECT COUNT(*), COUNT(DISTINCT idx) FROM results WHERE run_id = ?", (run_id,))
        assert rows[0] == (ROWS, ROWS)
    dumped = str(store.query("SELECT * FROM runs")) + str(store.query("SELECT * FROM jobs"))
    assert "sk-test-worker" not in dumped  # the workers read the key from their own environment
