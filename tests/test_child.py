"""runs/child.py: the dashboard's local worker scores unpinned runs in a real child process (`ragmeter
worker --parent PID`) and pinned ones on a thread of this process; a child that died is started again
(the log says so), one that cannot start is a WorkerError saying why, and a parent killed with -9
leaves no worker process behind: its run ends "interrupted" with every finished row kept."""
import logging
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.errors import WorkerError
from evaluator.runs.jobs import submit_new
from evaluator.runs.run import RunConfig
from evaluator.runs.child import local_worker
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue
from openai_server import ChatServer
from test_worker import samples, slow_judge, stored_indices
from waiting import never_within, wait_for

ROOT = Path(__file__).resolve().parents[1]


def pid_of(worker_id):
    """The pid in a worker id (host:pid:random)."""
    return int(worker_id.split(":")[1])


def alive(pid):
    """Whether process `pid` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


def test_an_unpinned_run_is_scored_in_the_child_process_and_a_pinned_one_here(history):
    store = RunStore(history)
    offline = submit_new(store, RunConfig(), samples(40), dataset_name="offline.csv")
    pinned = submit_new(store, RunConfig(), samples(5), dataset_name="pinned.csv", judge=slow_judge(0.01))
    workers = local_worker(str(history))
    queue = JobQueue(store)
    assert wait_for(lambda: all(queue.get(r).state == "ended" for r in (offline, pinned)), timeout=60)
    assert [store.get_run(r).status for r in (offline, pinned)] == ["finished", "finished"]
    assert pid_of(queue.get(offline).worker) == workers.child.pid != os.getpid()
    assert pid_of(queue.get(pinned).worker) == os.getpid()  # its Judge object never left this process


def test_a_worker_process_that_died_is_started_again_at_the_next_use_and_the_log_says_so(history, caplog):
    store = RunStore(history)
    first = local_worker(str(history)).child.pid
    os.kill(first, signal.SIGKILL)
    assert wait_for(lambda: local_worker(str(history)).child.pid != first, timeout=60)
    assert f"worker process (pid {first}) exited with code -9; starting a new one" in caplog.text
    run_id = submit_new(store, RunConfig(), samples(10), dataset_name="after.csv")
    assert wait_for(lambda: store.get_run(run_id).status == "finished", timeout=60)
    assert pid_of(JobQueue(store).get(run_id).worker) == local_worker(str(history)).child.pid


def test_a_worker_process_that_cannot_start_is_an_error_saying_so(history, monkeypatch, caplog):
    monkeypatch.setenv("PYTHONHOME", "/nonexistent-python-home")  # the child's interpreter cannot start
    with caplog.at_level(logging.WARNING, "ragmeter.worker"), pytest.raises(WorkerError) as raised:
        local_worker(str(history))
    assert "the worker process that scores this dashboard's runs could not start: it exited with code 1" \
        in str(raised.value)
    assert "Traceback" not in str(raised.value) and "Fatal Python error" in caplog.text  # the detail: in the log
    with pytest.raises(WorkerError):  # asked again at once: the same answer, not a new process every poll
        local_worker(str(history))


PARENT = """
import sys, time
from evaluator.runs.child import local_worker
print(local_worker(sys.argv[1]).child.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.slow
def test_a_parent_killed_with_9_leaves_no_worker_process_and_its_run_ends_interrupted(history):
    store = RunStore(history)
    with ChatServer(latency=0.05) as judge:
        config = RunConfig(judge="openai", model="m", base_url=judge.base_url, api_key_env="RAGMETER_TEST_KEY",
                           max_workers=2, metrics=("faithfulness",))
        run_id = submit_new(store, config, samples(400), dataset_name="long.csv")
        env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_TEST_KEY="sk-child-test")
        parent = subprocess.Popen([sys.executable, "-c", PARENT, str(history)], env=env, stdout=subprocess.PIPE,
                                  text=True)
        try:
            child = int(parent.stdout.readline())
            assert wait_for(lambda: len(stored_indices(store, run_id)) >= 10, timeout=120)
        finally:
            parent.kill()
            parent.wait(10)
        assert wait_for(lambda: not alive(child), timeout=30), "the worker process outlived its killed parent"
        calls = len(judge.chat_requests)
        assert never_within(lambda: len(judge.chat_requests) > calls, 1.0)  # nobody judges any more
    info, job = store.get_run(run_id), JobQueue(store).get(run_id)
    assert (info.status, job.state) == ("interrupted", "ended")
    kept = stored_indices(store, run_id)
    assert 0 < info.n_done == len(kept) < 400 and len(store.pending_samples(run_id)) == 400 - len(kept)
