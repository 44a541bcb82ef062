"""runs/jobs.py and runs/worker.py: queued runs scored by workers, stopped from anywhere, shut down,
killed and taken up by another worker, on a real SQLite history (PostgreSQL in test_worker_postgres.py)."""
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.model import EvalSample
from evaluator.runs.jobs import HANDOFF, PROCESS_TOKEN, stop_run, submit_new, submit_rescore, submit_resume
from evaluator.runs.run import RunConfig
from evaluator.runs.worker import Worker
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue, Limits
from fakes import ScriptedJudge
from openai_server import ChatServer, reply
from waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
SECRET = "sk-worker-canary-51ab9e"


def samples(n):
    return [EvalSample(f"What does clause {i} say?", f"Clause {i} says delivery takes {i + 2} days.",
                       [f"Clause {i}: delivery takes {i + 2} working days."], sample_id=f"q{i}") for i in range(n)]


def slow_judge(delay=0.05):
    def answer(prompt):
        time.sleep(delay)
        return '{"score": 0.7, "reasoning": "ok"}'
    return ScriptedJudge(answer)


def stored_indices(store, run_id):
    return [idx for (idx,) in store.query("SELECT idx FROM results WHERE run_id = ? ORDER BY idx", (run_id,))]


def test_a_queued_run_is_scored_by_a_worker_with_its_progress_record(store):
    run_id = submit_new(store, RunConfig(), samples(30), dataset_name="contract.csv", owner="alice")
    assert store.get_run(run_id).status == "queued" and run_id not in HANDOFF  # offline: nothing to hand off
    worker = Worker(store, slots=1, worker_id="w1").start()
    try:
        assert wait_for(lambda: store.get_run(run_id).status == "finished")
    finally:
        assert worker.shutdown(5)
    assert stored_indices(store, run_id) == list(range(30))
    job = JobQueue(store).get(run_id)
    assert job.state == "ended" and job.worker == "w1"
    assert job.progress.done == 30 and job.progress.total == 30 and 0 < job.progress.means["faithfulness"] <= 1
    assert store.get_run(run_id).verdict.ok


def test_stop_from_another_store_ends_the_run_within_a_second_keeping_its_rows(store, tmp_path):
    run_id = submit_new(store, RunConfig(max_workers=2), samples(200), dataset_name="d.csv", judge=slow_judge())
    assert JobQueue(store).get(run_id).pinned == PROCESS_TOKEN  # a judge object lives only here
    worker = Worker(store, slots=1).start()
    try:
        assert wait_for(lambda: len(stored_indices(store, run_id)) >= 5)
        asked = time.monotonic()
        stop_run(RunStore(tmp_path / "history.sqlite3"), run_id)  # another connection, as another process
        assert wait_for(lambda: store.get_run(run_id).status == "stopped", timeout=5, every=0.02)
        took = time.monotonic() - asked
    finally:
        worker.shutdown(5)
    # ~0.6 s on a quiet machine (a 0.5 s heartbeat, then the rows in flight); room for a loaded 2-core CI
    assert took < 2.5, f"stopped {took:.2f} s after the request"
    info = store.get_run(run_id)
    assert 5 <= info.n_done < 200 and len(stored_indices(store, run_id)) == info.n_done
    assert JobQueue(store).get(run_id).progress.done == info.n_done


def test_shutdown_interrupts_runs_in_flight_with_their_rows_saved_and_another_worker_resumes(store):
    run_id = submit_new(store, RunConfig(max_workers=2), samples(120), dataset_name="d.csv", judge=slow_judge())
    first = Worker(store, slots=1).start()
    assert wait_for(lambda: len(stored_indices(store, run_id)) >= 5)
    began = time.monotonic()
    assert first.shutdown(timeout=8.0)
    assert time.monotonic() - began < 10
    info = store.get_run(run_id)
    assert info.status == "interrupted" and 0 < info.n_done < 120
    assert stored_indices(store, run_id) == sorted(set(stored_indices(store, run_id)))
    second_events = []
    submit_resume(store, run_id)  # offline now: no judge handed off, any worker may take it
    second = Worker(store, slots=1, on_event=second_events.append).start()
    try:
        assert wait_for(lambda: store.get_run(run_id).status == "finished", timeout=60)
    finally:
        second.shutdown(5)
    assert stored_indices(store, run_id) == list(range(120))
    assert any(f"{120 - info.n_done} rows to score" in e for e in second_events), (info.n_done, second_events)


def lose_the_lease(store, run_id, worker, *, after_rows, timeout):
    """Once `after_rows` rows are stored, hand the run's lease to worker w2 behind `worker`'s back; `worker`
    must then stop it without writing its ending (it is w2's run now)."""
    try:
        assert wait_for(lambda: len(stored_indices(store, run_id)) >= after_rows)
        store.write("UPDATE jobs SET worker = 'w2' WHERE run_id = ?", (run_id,))  # w2 took it over
        assert wait_for(lambda: not worker.active(), timeout=timeout)
    finally:
        worker.shutdown(10)
    assert store.get_run(run_id).status == "running"  # w2's run: w1 wrote no ending
    assert JobQueue(store).get(run_id).worker == "w2"


def test_a_worker_that_lost_the_lease_stops_the_run_and_writes_nothing_more(store):
    run_id = submit_new(store, RunConfig(max_workers=2), samples(200), dataset_name="d.csv", judge=slow_judge())
    worker = Worker(store, slots=1, worker_id="w1").start()
    lose_the_lease(store, run_id, worker, after_rows=3, timeout=5)


def test_a_worker_without_the_judge_key_fails_the_run_naming_the_variable(store, monkeypatch):
    monkeypatch.delenv("RAGMETER_TEST_KEY", raising=False)
    config = RunConfig(judge="openai", model="m", base_url="http://127.0.0.1:9/v1", api_key_env="RAGMETER_TEST_KEY")
    run_id = submit_new(store, config, samples(3), dataset_name="d.csv")
    worker = Worker(store, slots=1).start()
    try:
        assert wait_for(lambda: store.get_run(run_id).status == "failed")
    finally:
        worker.shutdown(5)
    assert "RAGMETER_TEST_KEY" in JobQueue(store).progress(run_id).error


def test_the_api_key_never_reaches_the_database(store, tmp_path):
    with ChatServer() as srv:
        config = RunConfig(judge="openai", model="m", base_url=srv.base_url, api_key_env="RAGMETER_TEST_KEY")
        run_id = submit_new(store, config, samples(4), dataset_name="d.csv", api_key=SECRET)
        assert JobQueue(store).get(run_id).pinned == PROCESS_TOKEN and HANDOFF[run_id].api_key == SECRET
        worker = Worker(store, slots=1).start()
        try:
            assert wait_for(lambda: store.get_run(run_id).status == "finished")
        finally:
            worker.shutdown(5)
        assert srv.chat_requests and srv.chat_requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert run_id not in HANDOFF  # dropped once the run ended
    store.close()
    with sqlite3.connect(tmp_path / "history.sqlite3") as db:
        dump = "\n".join(db.iterdump())
    assert SECRET not in dump and "jobs" in dump


def test_a_rescore_is_queued_as_a_new_run_over_the_saved_answers(store):
    first = submit_new(store, RunConfig(), samples(5), dataset_name="d.csv")
    worker = Worker(store, slots=2).start()
    try:
        assert wait_for(lambda: store.get_run(first).status == "finished")
        again = submit_rescore(store, first, RunConfig(metrics=("faithfulness",)))
        assert wait_for(lambda: store.get_run(again).status == "finished")
    finally:
        worker.shutdown(5)
    info = store.get_run(again)
    assert info.settings["rescored_from"] == first and info.n_done == 5
    assert JobQueue(store).get(again).kind == "rescore"


WORKER = """
import sys
from evaluator.runs.worker import Worker
from evaluator.store.jobs import Limits
w = Worker(sys.argv[1], slots=1, limits=Limits(lease_s=2), on_event=lambda line: print(line, flush=True))
w.run_forever()
"""


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_replaced_by_another_with_no_row_scored_twice(store, tmp_path):
    n = 60
    judged = []

    def judge(request):
        judged.append(request.prompt)
        return reply(json.dumps({"score": 0.6, "reasoning": "test"}), delay=0.02)

    with ChatServer(responder=judge) as srv:
        config = RunConfig(judge="openai", model="m", base_url=srv.base_url, api_key_env="RAGMETER_TEST_KEY",
                           max_workers=2, metrics=("faithfulness",))
        run_id = submit_new(store, config, samples(n), dataset_name="d.csv")
        env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_TEST_KEY=SECRET)
        proc = subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path / "history.sqlite3")], env=env,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert wait_for(lambda: len(stored_indices(store, run_id)) >= 10, timeout=60)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
        done_first = len(stored_indices(store, run_id))
        assert done_first < n and store.get_run(run_id).status == "running"  # a dead worker's run, for now
        events = []
        os.environ["RAGMETER_TEST_KEY"] = SECRET
        try:
            second = Worker(store, slots=1, limits=Limits(lease_s=2), on_event=events.append).start()
            assert wait_for(lambda: store.get_run(run_id).status == "finished", timeout=90)
            second.shutdown(5)
        finally:
            del os.environ["RAGMETER_TEST_KEY"]
    assert stored_indices(store, run_id) == list(range(n))
    assert JobQueue(store).get(run_id).attempts == 1
    claimed = next(e for e in events if e.startswith(f"claimed run {run_id}"))
    left = int(claimed.split(", ")[1].split()[0])
    assert left == n - done_first  # only rows with no stored result were scored again
