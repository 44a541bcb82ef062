"""store/jobs.py: the job queue on a real SQLite file and a real PostgreSQL server.

Two claimers never get one job (threads, and separate processes), caps hold, an expired lease makes
the run "interrupted" and queues it again, stop works on queued and running jobs, positions count.
"""
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from evaluator.errors import QueueFull
from evaluator.model import EvalSample
from evaluator.store.history import RUN_STATUSES, RunStore
from evaluator.store.jobs import MAX_ATTEMPTS, JobQueue, Limits, Progress

ROOT = Path(__file__).resolve().parents[1]


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def queued_run(store, owner="alice", name="d.csv"):
    run_id = store.create_run(dataset_name=name, samples=[EvalSample("q?", "a.", ["c."])], settings={},
                              owner=owner, status="queued")
    JobQueue(store).submit(run_id, kind="new", owner=owner)
    return run_id


def test_statuses_know_queued_and_interrupted():
    assert {"queued", "interrupted"} <= set(RUN_STATUSES)


def test_a_submitted_run_is_queued_with_its_place_and_a_claim_runs_it(store):
    first, second = queued_run(store), queued_run(store)
    queue = JobQueue(store)
    assert [(j.run_id, j.position) for j in queue.list()] == [(first, 1), (second, 2)]
    assert store.get_run(first).status == "queued"
    job = queue.claim("w1")
    assert job.run_id == first and job.state == "running" and job.worker == "w1" and job.position is None
    assert store.get_run(first).status == "running"
    assert queue.get(second).position == 1


def test_heartbeat_stores_progress_and_renews_only_its_own_lease(store):
    run_id = queued_run(store)
    queue = JobQueue(store, Limits(lease_s=5))
    queue.claim("w1")
    assert queue.heartbeat(run_id, "w1", Progress(done=3, total=10, means={"faithfulness": 0.5}))
    assert queue.progress(run_id) == Progress(done=3, total=10, means={"faithfulness": 0.5})
    assert not queue.heartbeat(run_id, "w2", Progress(done=4, total=10))
    worker, left = queue.lease_left(run_id)
    assert worker == "w1" and 3 < left <= 5


def test_two_threads_claiming_at_once_never_share_a_job(store):
    ids = {queued_run(store) for _ in range(12)}
    queue, got, lock = JobQueue(store), [], threading.Lock()

    def claimer(name):
        while True:
            job = queue.claim(name)
            if job is None:
                return
            with lock:
                got.append(job.run_id)

    threads = [threading.Thread(target=claimer, args=(f"w{i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(got) == sorted(ids)


CLAIM = """
import sys, time
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue
queue = JobQueue(RunStore(sys.argv[1]))
start = float(sys.argv[3])
while time.time() < start:
    pass
while True:
    job = queue.claim(sys.argv[2])
    if job is None:
        break
    print(job.run_id, flush=True)
"""


@pytest.mark.slow
def test_two_processes_claiming_at_once_never_share_a_job(store):
    ids = {queued_run(store) for _ in range(20)}
    location = store.path if isinstance(store.path, str) else str(store.path)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.time() + 2
    procs = [subprocess.Popen([sys.executable, "-c", CLAIM, location, f"p{i}", str(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    claimed = [line for out, _ in outs for line in out.split()]
    assert sorted(claimed) == sorted(ids)  # each once: no job claimed by both


def test_max_running_per_user_holds_back_that_users_next_run_only(store):
    a1, a2, b1 = queued_run(store, "alice"), queued_run(store, "alice"), queued_run(store, "bob")
    queue = JobQueue(store, Limits(max_running_per_user=1))
    assert queue.claim("w").run_id == a1
    assert queue.claim("w").run_id == b1  # alice's second waits; bob's goes ahead
    assert queue.claim("w") is None
    queue.finish(a1, "w", "finished")
    assert queue.claim("w").run_id == a2


def test_max_queued_refuses_with_a_message_that_says_what_to_do(store):
    queued_run(store)
    queued_run(store)
    run_id = store.create_run(dataset_name="d", samples=[], settings={}, status="queued")
    with pytest.raises(QueueFull, match=r"2 runs are waiting.*max_queued.*is 2.*ragmeter runs stop"):
        JobQueue(store, Limits(max_queued=2)).submit(run_id, kind="new", owner="alice")
    assert JobQueue(store).get(run_id) is None


def test_a_pinned_job_is_claimed_only_by_its_process(store):
    run_id = store.create_run(dataset_name="d", samples=[], settings={}, status="queued")
    queue = JobQueue(store)
    queue.submit(run_id, kind="new", owner="alice", pinned="proc-A")
    assert queue.claim("w") is None
    assert queue.claim("w", pinned="proc-B") is None
    assert queue.claim("w", pinned="proc-A").run_id == run_id


def test_claim_by_run_id_takes_that_run_only(store):
    first, second = queued_run(store), queued_run(store)
    queue = JobQueue(store)
    assert queue.claim("cli", run_id=second).run_id == second
    assert queue.get(first).state == "queued"


def test_an_expired_lease_interrupts_the_run_and_queues_it_again(store):
    run_id = queued_run(store)
    queue = JobQueue(store, Limits(lease_s=0.2))
    queue.claim("w1")
    assert queue.expire() == []
    time.sleep(0.4)
    assert queue.expire() == [run_id]
    job = queue.get(run_id)
    assert (job.state, job.attempts, job.worker, job.position) == ("queued", 1, None, 1)
    assert not queue.heartbeat(run_id, "w1", Progress(done=1, total=1))  # the dead worker lost it
    assert queue.claim("w2").run_id == run_id


def test_a_run_whose_lease_expires_too_often_stays_interrupted(store):
    run_id = queued_run(store)
    queue = JobQueue(store, Limits(lease_s=0.05))
    for _ in range(MAX_ATTEMPTS):
        assert queue.claim("w").run_id == run_id
        time.sleep(0.1)
        queue.expire()
    queue.claim("w")
    time.sleep(0.1)
    assert queue.expire() == [run_id]
    assert queue.get(run_id).state == "ended" and store.get_run(run_id).status == "interrupted"


def test_a_pinned_run_whose_process_died_is_interrupted_not_requeued(store):
    run_id = store.create_run(dataset_name="d", samples=[], settings={}, status="queued")
    queue = JobQueue(store, Limits(lease_s=0.05))
    queue.submit(run_id, kind="new", owner="alice", pinned="gone")
    queue.claim("w", pinned="gone")
    time.sleep(0.1)
    queue.expire()
    assert store.get_run(run_id).status == "interrupted" and queue.get(run_id).state == "ended"


def test_stop_ends_a_queued_job_at_once_and_flags_a_running_one(store):
    running, waiting = queued_run(store), queued_run(store)
    queue = JobQueue(store)
    queue.claim("w")
    assert queue.request_stop(waiting).state == "ended"
    assert store.get_run(waiting).status == "stopped"
    assert queue.claim("w") is None  # a stopped job is never claimed
    job = queue.request_stop(running)
    assert job.state == "running" and job.stop_requested and queue.stop_requested(running)
    assert queue.finish(running, "w", "stopped")
    assert store.get_run(running).status == "stopped" and queue.get(running).state == "ended"


def test_finish_by_a_worker_that_lost_the_lease_writes_nothing(store):
    run_id = queued_run(store)
    queue = JobQueue(store)
    queue.claim("w1")
    assert not queue.finish(run_id, "w2", "finished")
    assert store.get_run(run_id).status == "running"


def test_deleting_a_run_deletes_its_job(store):
    run_id = queued_run(store)
    store.delete_run(run_id)
    assert JobQueue(store).get(run_id) is None and JobQueue(store).list() == []


def test_abandon_interrupts_a_running_job_at_once(store):
    run_id = queued_run(store)
    queue = JobQueue(store)
    assert not queue.abandon(run_id)  # queued, not running: nothing to abandon
    queue.claim("w")
    assert queue.abandon(run_id)
    assert queue.get(run_id).state == "ended" and store.get_run(run_id).status == "interrupted"
