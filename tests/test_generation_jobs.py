"""runs/generation.py, store/generations.py and the worker: test-set generations as jobs on a real SQLite
history (one test on PostgreSQL): queued, claimed by a worker, stopped from anywhere, interrupted and resumed
from the items they kept, never listed as evaluation runs, keys never stored."""
import time

import pytest

from docfiles import write_corpus
from evaluator.errors import QueueFull
from evaluator.generate.chunking import chunk_documents
from evaluator.generate.documents import load_documents
from evaluator.generate.runner import GenerateSettings
from evaluator.judges.openai import OpenAIJudge
from evaluator.runs.generation import (
    can_resume,
    resume_generation,
    stop_generation,
    stored_items,
    submit_generation,
)
from evaluator.runs.jobs import HANDOFF
from evaluator.runs.run import RunConfig
from evaluator.runs.worker import Worker
from evaluator.store.generations import Generations
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue, Limits
from openai_server import ChatServer
from writer_model import WriterModel
from waiting import wait_for

SECRET = "sk-generation-canary-7f3c1d"
MODEL = RunConfig(judge="openai", model="writer", api_key_env="RAGMETER_GEN_TEST_KEY")


@pytest.fixture
def chunks(tmp_path):
    return chunk_documents(load_documents(write_corpus(tmp_path / "docs")))


def slow_server():
    """The canned writer model, 50 ms a reply: a generation of 12 items lasts a few seconds."""
    return ChatServer(responder=WriterModel(), latency=0.05)


def judge_for(srv):
    return OpenAIJudge("writer", base_url=srv.base_url, api_key=SECRET, max_retries=0)


def run_to_end(store, gen_id, **worker):
    w = Worker(store, slots=1, **worker).start()
    try:
        assert wait_for(lambda: JobQueue(store).get(gen_id).state == "ended")
    finally:
        w.shutdown(5)
    return Generations(store).get(gen_id)


def test_an_offline_generation_is_claimed_by_a_worker_and_its_items_stored(store, chunks):
    gen_id = submit_generation(store, chunks, GenerateSettings(n=4), RunConfig(), name="bikes docs", owner="alice")
    job = JobQueue(store).get(gen_id)
    assert (job.kind, job.state, job.status, job.dataset_name, job.pinned) == \
        ("generate", "queued", "queued", "bikes docs", None)  # offline: nothing to hand off, any worker may run it
    info = run_to_end(store, gen_id)
    items = stored_items(store, gen_id)
    assert (info.status, info.n_items, info.target, len(items)) == ("finished", 4, 4, 4)
    assert {i.kind for i in items} == {"cloze"} and len({i.id for i in items}) == 4
    assert info.outcome["offline"] and "coverage" in info.outcome and info.outcome["shortfall"] is None
    progress = JobQueue(store).get(gen_id).progress
    assert (progress.done, progress.total) == (4, 4) and progress.attempts >= 4
    assert store.list_runs() == []  # History lists evaluation runs only


def test_a_stop_asked_from_elsewhere_ends_it_mid_way_with_its_items_and_it_resumes_to_the_target(store, chunks):
    with slow_server() as srv:
        gen_id = submit_generation(store, chunks, GenerateSettings(n=12, workers=1, mix={"single": 1}), MODEL,
                                   name="docs", owner="alice", judge=judge_for(srv))
        assert JobQueue(store).get(gen_id).pinned  # a judge object stays in this process: pinned to it
        worker = Worker(store, slots=1).start()
        try:
            assert wait_for(lambda: Generations(store).get(gen_id).n_items >= 2)
            stop_generation(store, gen_id)  # the same call `ragmeter runs stop` or another tab makes
            assert wait_for(lambda: JobQueue(store).get(gen_id).state == "ended", timeout=10)
            info = Generations(store).get(gen_id)
            kept = stored_items(store, gen_id)
            assert info.status == "stopped" and 2 <= len(kept) < 12 and can_resume(info)
            assert "stopped by the user" in info.outcome["shortfall"]
            resume_generation(store, gen_id, judge=judge_for(srv))
            assert wait_for(lambda: JobQueue(store).get(gen_id).state == "ended")
        finally:
            worker.shutdown(5)
    info = Generations(store).get(gen_id)
    items = stored_items(store, gen_id)
    assert info.status == "finished" and len(items) == 12
    assert items[:len(kept)] == kept and len({i.id for i in items}) == 12  # carried on, nothing lost or repeated


def test_a_worker_shut_down_mid_way_leaves_it_interrupted_and_any_worker_resumes_it(store, chunks, monkeypatch):
    monkeypatch.setenv("RAGMETER_GEN_TEST_KEY", SECRET)  # unpinned: the worker reads the key it names
    with slow_server() as srv:
        config = RunConfig(judge="openai", model="writer", base_url=srv.base_url, api_key_env="RAGMETER_GEN_TEST_KEY")
        gen_id = submit_generation(store, chunks, GenerateSettings(n=10, workers=1, mix={"single": 1}), config,
                                   name="docs", owner="alice")
        assert JobQueue(store).get(gen_id).pinned is None and gen_id not in HANDOFF
        first = Worker(store, slots=1).start()
        assert wait_for(lambda: Generations(store).get(gen_id).n_items >= 2)
        assert first.shutdown(8)
        info = Generations(store).get(gen_id)
        assert info.status == "interrupted" and can_resume(info)
        kept = stored_items(store, gen_id)
        resume_generation(store, gen_id)
        info = run_to_end(store, gen_id)
    assert info.status == "finished" and stored_items(store, gen_id)[:len(kept)] == kept
    dumped = str(store.query("SELECT * FROM generations")) + str(store.query("SELECT * FROM jobs"))
    assert SECRET not in dumped and "RAGMETER_GEN_TEST_KEY" in dumped  # the variable's name, never its value


def test_an_expired_lease_queues_it_again_and_the_next_worker_starts_from_the_saved_items(store, chunks):
    gen_id = submit_generation(store, chunks, GenerateSettings(n=5), RunConfig(), name="docs", owner="alice")
    queue = JobQueue(store, Limits(lease_s=0.2))
    assert queue.claim("dead-worker").run_id == gen_id
    assert stored_items(store, gen_id) == []
    saved = [{"id": "gen-0001", "question": "What did the dead worker keep?", "ground_truth": "This.",
              "kind": "cloze", "chunk_ids": [chunks[0].chunk_id]}]
    assert Generations(store).save_items(gen_id, saved, worker="dead-worker")
    assert not Generations(store).save_items(gen_id, [], worker="someone-else")  # only the holder writes
    time.sleep(0.4)
    assert queue.expire() == [gen_id] and Generations(store).get(gen_id).status == "queued"
    info = run_to_end(store, gen_id)
    items = stored_items(store, gen_id)
    assert info.status == "finished" and len(items) == 5 and items[0].question == "What did the dead worker keep?"
    assert JobQueue(store).get(gen_id).attempts == 1
    assert not Generations(store).save_items(gen_id, [], worker="dead-worker")  # it lost the job for good


def test_a_worker_without_the_key_fails_it_naming_the_variable(store, chunks, monkeypatch):
    monkeypatch.delenv("RAGMETER_GEN_TEST_KEY", raising=False)
    gen_id = submit_generation(store, chunks, GenerateSettings(n=3), MODEL, name="docs", owner="alice")
    info = run_to_end(store, gen_id)
    assert info.status == "failed"
    assert "RAGMETER_GEN_TEST_KEY" in JobQueue(store).get(gen_id).progress.error


def test_a_typed_key_pins_the_job_to_this_process_and_never_reaches_the_database(store, chunks):
    gen_id = submit_generation(store, chunks, GenerateSettings(n=3), MODEL, name="docs", owner="alice",
                               api_key=SECRET)
    assert JobQueue(store).get(gen_id).pinned and HANDOFF[gen_id].api_key == SECRET
    assert JobQueue(store).claim("a-worker-elsewhere", pinned="another-process") is None
    dumped = str(store.query("SELECT * FROM generations")) + str(store.query("SELECT * FROM jobs"))
    assert SECRET not in dumped
    stop_generation(store, gen_id)
    assert Generations(store).get(gen_id).status == "stopped"


def test_a_full_queue_refuses_it_and_keeps_no_generation(store, chunks):
    submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="first", owner="alice")
    with pytest.raises(QueueFull, match="queue is full"):
        submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="second", owner="alice",
                          limits=Limits(max_queued=1))
    assert [g.name for g in Generations(store).list()] == ["first"]


def test_documents_over_the_cap_are_refused_before_anything_is_stored(store, chunks):
    with pytest.raises(Exception, match="generate from fewer documents"):
        submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="big", max_chars=100)
    assert Generations(store).list() == [] and JobQueue(store).list() == []


def test_deleting_a_run_or_a_generation_deletes_its_job_only(store, chunks):
    gen_id = submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="docs", owner="alice")
    run_id = store.create_run(dataset_name="d.csv", samples=[], settings={}, status="queued")
    JobQueue(store).submit(run_id, kind="new", owner="alice")
    store.delete_run(run_id)
    assert [j.run_id for j in JobQueue(store).list()] == [gen_id]
    Generations(store).delete(gen_id)
    assert JobQueue(store).list() == []


def test_ragmeter_runs_stop_and_delete_take_a_generation_id(store, chunks, capsys):
    from evaluator.cli.command import main

    gen_id = submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="docs", owner="alice")
    assert main(["runs", "--history", str(store.path)]) == 0
    listed = capsys.readouterr().out
    assert "No runs saved yet." in listed and "Generations (test sets" in listed
    row = next(line for line in listed.splitlines() if line.startswith(gen_id)).split()
    assert row[2:] == ["queued", "#1", "0/3", "alice", "docs"]
    assert main(["runs", "stop", gen_id, "--history", str(store.path)]) == 0
    assert f"generation {gen_id} is" in capsys.readouterr().out
    assert main(["runs", "delete", gen_id, "--history", str(store.path)]) == 0
    assert capsys.readouterr().out.strip().startswith(f"deleted generation {gen_id}")
    assert Generations(store).list() == [] and JobQueue(store).list() == []


def test_a_generation_on_postgresql_runs_as_a_job(postgres_url, chunks):
    store = RunStore(postgres_url)
    gen_id = submit_generation(store, chunks, GenerateSettings(n=3), RunConfig(), name="docs", owner="bob")
    info = run_to_end(store, gen_id)
    assert (info.status, len(stored_items(store, gen_id))) == ("finished", 3)
    assert store.list_runs() == [] and JobQueue(store).get(gen_id).kind == "generate"


def test_a_history_from_before_generations_keeps_its_queued_runs_when_it_migrates(tmp_path, chunks):
    import sqlite3

    from evaluator.store.history import MIGRATIONS

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as db:  # every step before m011, as an older ragmeter left the file
        db.execute("CREATE TABLE _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for step in MIGRATIONS[:-1]:
            step(db)
            db.execute("INSERT INTO _migrations VALUES (?, 'then')", (step.__name__,))
        db.execute("INSERT INTO runs (run_id, dataset_name, created_at, status, n_samples, settings, owner) "
                   "VALUES ('abc123', 'd.csv', 'then', 'queued', 0, '{}', 'alice')")
        db.execute("INSERT INTO jobs (run_id, kind, owner, state, queued_at) VALUES ('abc123', 'new', 'alice', "
                   "'queued', 1.0)")
    store = RunStore(path)
    job = JobQueue(store).get("abc123")
    assert (job.kind, job.state, job.status, job.dataset_name, job.position) == ("new", "queued", "queued", "d.csv", 1)
    gen_id = submit_generation(store, chunks, GenerateSettings(n=2), RunConfig(), name="docs", owner="alice")
    assert [j.run_id for j in JobQueue(store).list()] == ["abc123", gen_id]
