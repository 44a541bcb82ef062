"""SIGTERM to a real `streamlit run` while its worker scores a slow judge run: the server process exits
within 10 s, the run is marked "interrupted" with every finished row saved, and the judge gets no
call after the exit (issue 27: it used to stay up for minutes with HTTP down, calling the judge).
The run is scored by the dashboard's worker process (evaluator/runs/child.py, issue 28), which the
server stops on its way out; killed with -9 the server cannot, and the worker process notices its
parent is gone and ends the same way: no orphan left scoring.

The judge is a loopback OpenAI-compatible server (tests/openai_server.py) answering after 0.3 s.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue
from openai_server import ChatServer
from ports import stop
from teamfiles import start_dashboard

from .test_dashboard import RUN_TIMEOUT, _big_rows, _write_csv, expect, open_app, upload
from .test_judge_failure import choose_judge

pytestmark = pytest.mark.browser

ROWS = 300
EXIT_WITHIN = 10.0  # seconds, issue 27


def start_slow_run(page, tmp_path, judge):
    """A real dashboard scoring a ROWS-row run on `judge` (no key typed: its worker process scores it),
    seen running in the page; the server's process and the history."""
    history = tmp_path / "history.sqlite3"
    env = {**os.environ, "RAGMETER_HISTORY": str(history), "RAGMETER_JUDGE_CACHE": str(tmp_path / "cache.sqlite3")}
    env.pop("OPENAI_API_KEY", None)
    env.pop("RAGMETER_CONFIG", None)

    proc, url = start_dashboard(env, tmp_path / "server.log")
    try:
        open_app(page, url)
        upload(page, _write_csv(tmp_path / "slow_judge.csv", _big_rows(ROWS)))
        choose_judge(page, judge.base_url)
        page.get_by_role("button", name="Run evaluation").click()
        progress = page.locator('[data-testid="stProgress"]').first
        expect(progress).to_contain_text(re.compile(rf"^[1-9][\d,]*/{ROWS} samples scored"), timeout=RUN_TIMEOUT)
    except BaseException:
        stop(proc)
        raise
    return proc, RunStore(history)


def scored_by(store: RunStore) -> int:
    """The pid of the worker that took the history's one run (its id is host:pid:random)."""
    (info,) = store.list_runs()
    job = JobQueue(store).get(info.run_id)
    assert job is not None and job.worker
    return int(job.worker.split(":")[1])


def interrupted_with_rows_kept(store: RunStore, log: str) -> int:
    """The run ended "interrupted", every finished row saved and the rest pending; the rows kept."""
    (info,) = store.list_runs()
    job = JobQueue(store).get(info.run_id)
    assert (info.status, job.state if job else None) == ("interrupted", "ended"), log[-3000:]
    kept = store.load_report(info.run_id).results
    assert 0 < info.n_done == len(kept) < ROWS
    assert len(store.pending_samples(info.run_id)) == ROWS - len(kept)
    return len(kept)


def gone(pid: int) -> bool:
    """Whether process `pid` has ended (a zombie not yet reaped by its new parent counts as ended)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except OSError:
        return True


def test_sigterm_interrupts_the_run_keeps_its_rows_and_exits_within_10_s(page, tmp_path, shot):
    log = tmp_path / "server.log"
    with ChatServer(latency=0.3) as judge:
        proc, store = start_slow_run(page, tmp_path, judge)
        try:
            shot("1-running")
            worker = scored_by(store)
            assert worker != proc.pid, "the run was scored in the server's own process"
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"the server was still running 30 s after SIGTERM:\n{log.read_text()[-3000:]}")
            took = time.monotonic() - sent
            calls = len(judge.chat_requests)
            time.sleep(1.0)
            assert len(judge.chat_requests) == calls, "the judge was called after the server exited"
            assert gone(worker), "the worker process outlived the server"
        finally:
            stop(proc)
    assert took < EXIT_WITHIN, f"exited {took:.1f} s after SIGTERM:\n{log.read_text()[-3000:]}"
    kept = interrupted_with_rows_kept(store, log.read_text())
    print(f"SIGTERM to exit: {took:.2f} s; {kept} of {ROWS} rows kept, run interrupted")


def test_a_server_killed_with_9_leaves_no_worker_process_and_the_run_ends_interrupted(page, tmp_path, shot):
    log = tmp_path / "server.log"
    with ChatServer(latency=0.3) as judge:
        proc, store = start_slow_run(page, tmp_path, judge)
        try:
            worker = scored_by(store)
            assert worker != proc.pid
            proc.kill()  # the server only: its exit hooks never run
            proc.wait(timeout=30)
            deadline = time.monotonic() + 30
            while not gone(worker) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert gone(worker), f"the worker process outlived the killed server:\n{log.read_text()[-3000:]}"
            calls = len(judge.chat_requests)
            time.sleep(1.0)
            assert len(judge.chat_requests) == calls, "the judge was called after the worker process exited"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # whatever is left of its process group
    kept = interrupted_with_rows_kept(store, log.read_text())
    print(f"kill -9: the worker process ended the run; {kept} of {ROWS} rows kept, run interrupted")
