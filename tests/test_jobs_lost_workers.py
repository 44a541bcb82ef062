"""Issue 42, runs never stuck "running", and two of its untried attacks: a `ragmeter worker` SIGKILLed
mid-row, and a run deleted while a worker scores it. Real worker processes, a loopback judge that answers
slowly, and the statuses the pages read through evaluator.service; SQLite and PostgreSQL."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator import service
from evaluator.model import EvalSample
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue, Limits
from evaluator.team.access import LAPTOP_ACCESS
from openai_server import ChatServer, reply
from test_jobs_cli import rows_file
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
ROWS, LEASE = 12, 3.0


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return str(tmp_path / "h.sqlite3") if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def ragmeter(tmp_path, *args, history):
    config = tmp_path / "runs.toml"
    config.write_text(f"[runs]\nlease_s = {LEASE}\n", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_HISTORY=history, OPENAI_API_KEY="sk-test-lost",
               RAGMETER_CONFIG=str(config), PYTHONUNBUFFERED="1")
    return subprocess.Popen([sys.executable, "-m", "evaluator", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def submit(tmp_path, srv, history, rows=ROWS):
    sub = ragmeter(tmp_path, "evaluate", str(rows_file(tmp_path, rows)), "--model", "m", "--base-url", srv.base_url,
                   "--no-cache", "--metrics", "faithfulness", "--submit", history=history)
    out, err = sub.communicate(timeout=120)
    assert sub.returncode == 0, err
    return out.strip()


@pytest.mark.slow
def test_a_worker_killed_mid_row_leaves_the_run_queued_again_within_its_lease_and_no_row_lost(tmp_path, location):
    store = RunStore(location)
    with ChatServer(responder=lambda r: reply('{"score": 0.7, "reasoning": "ok"}', delay=0.4)) as srv:
        run_id = submit(tmp_path, srv, location)
        worker = ragmeter(tmp_path, "worker", "--slots", "1", history=location)
        assert wait_for(lambda: store.get_run(run_id).n_done >= 2, 120)
        worker.send_signal(signal.SIGKILL)  # mid-row: a judge call is in flight
        worker.communicate(timeout=30)
        killed = time.monotonic()
        assert service.run_info(store, run_id).status == "running"  # its lease has not passed yet
        # no worker is left to notice: the pages' own reads expire the lease
        status = wait_for(lambda: service.run_info(store, run_id).status != "running" and
                          service.run_info(store, run_id).status, LEASE + 5)
        assert status == "queued" and time.monotonic() - killed <= LEASE + 3  # unpinned: any worker resumes it
        assert [r.status for r in service.list_runs(store) if r.run_id == run_id] == ["queued"]
        done_before = store.get_run(run_id).n_done
        again = ragmeter(tmp_path, "worker", "--once", history=location)
        out, err = again.communicate(timeout=240)
        assert again.returncode == 0, err
    info = store.get_run(run_id)
    assert (info.status, info.n_done) == ("finished", ROWS) and done_before < ROWS
    rows = store.query("SELECT COUNT(*), COUNT(DISTINCT idx) FROM results WHERE run_id = ?", (run_id,))
    assert tuple(rows[0]) == (ROWS, ROWS)  # every row once: none lost, none scored twice into the table


def test_a_pinned_run_whose_process_is_gone_reads_interrupted_on_every_page_within_its_lease(location):
    store = RunStore(location)
    run_id = store.create_run(dataset_name="d.csv", samples=[EvalSample("q?", "a.", ["c."])], settings={},
                              owner="alice", status="queued")
    queue = JobQueue(store, Limits(lease_s=2.0))
    queue.submit(run_id, kind="new", owner="alice", pinned="gone-host:4242:deadbeef")  # a dashboard's own run
    assert queue.claim("gone-host:4242:deadbeef", pinned="gone-host:4242:deadbeef").run_id == run_id
    started = time.monotonic()
    status = wait_for(lambda: service.run_info(store, run_id).status != "running"
                      and service.run_info(store, run_id).status, 6.0)
    assert status == "interrupted" and time.monotonic() - started <= 2.0 + 1.5
    assert [r.status for r in service.list_runs(store) if r.run_id == run_id] == ["interrupted"]
    found = service.job(store, run_id)
    assert found.state == "ended" and service.resumable(service.run_info(store, run_id), found)


@pytest.mark.slow
def test_deleting_a_run_while_a_worker_scores_it_stops_the_judge_calls_and_leaves_no_row(tmp_path, location):
    store = RunStore(location)
    with ChatServer(responder=lambda r: reply('{"score": 0.7, "reasoning": "ok"}', delay=0.3)) as srv:
        # The doomed run is long (10x the kept one), so it is still scoring when it is deleted, however slow the machine.
        doomed, kept = submit(tmp_path, srv, location, rows=10 * ROWS), submit(tmp_path, srv, location)
        worker = ragmeter(tmp_path, "worker", "--slots", "1", history=location)
        try:
            assert wait_for(lambda: store.get_run(doomed).n_done >= 1, 120)
            assert store.get_run(doomed).status == "running"
            service.delete_run(store, store.get_run(doomed), access=LAPTOP_ACCESS)
            calls_at_delete = len(srv.requests)
            assert doomed not in {r.run_id for r in service.list_runs(store)}
            assert wait_for(lambda: store.get_run(kept).status == "finished", 240, every=0.5)
            time.sleep(1.0)
            doomed_calls = [r for r in srv.requests[calls_at_delete:] if "What is box" in str(r.body)]
            assert len(srv.requests) - calls_at_delete >= ROWS  # the next run was scored
            assert len(doomed_calls) <= 2 * ROWS  # (both runs ask the same questions: counted below by rows)
        finally:
            worker.send_signal(signal.SIGTERM)
            out, err = worker.communicate(timeout=60)
    assert worker.returncode == 0, err
    assert "Traceback" not in err
    left = store.query("SELECT COUNT(*) FROM results WHERE run_id = ?", (doomed,))
    assert left[0][0] == 0  # the worker wrote nothing back for the deleted run
    assert store.query("SELECT COUNT(*) FROM jobs WHERE run_id = ? AND state <> 'ended'", (doomed,))[0][0] == 0
