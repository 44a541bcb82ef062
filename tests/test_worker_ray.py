"""runs/ray_run.py: a worker with engine "ray" scores the runs it claims on a real local Ray cluster (one
for the module), with the same rows, progress, stop, shutdown and failure as a local worker, on a real
SQLite history and a real loopback OpenAI-compatible judge."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from openai_server import ChatServer, reply
from raycluster import KEY_ENV, WORKER_KEY, import_ray, ray_cluster  # noqa: F401  (the module's cluster fixture)
from test_worker import lose_the_lease, stored_indices
from waiting import wait_for

from evaluator.cli.command import main
from evaluator.errors import ConfigError
from evaluator.io.datasets import load_dataset
from evaluator.io.records import result_to_record
from evaluator.runs.jobs import stop_run, submit_new, submit_resume
from evaluator.runs.run import RunConfig
from evaluator.runs.worker import Worker
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "sample.jsonl"
CHATS = ROOT / "sample_data" / "conversations.jsonl"
TYPED_KEY = "sk-typed-in-this-process-7c1f"


def resumed_to_the_end(store, run_id, engine="local"):
    """Queue the rest of run `run_id` and let a new worker (`engine`) finish it; the worker's event lines."""
    submit_resume(store, run_id)
    events = []
    worker = Worker(store, slots=1, engine=engine, on_event=events.append).start()
    try:
        assert wait_for(lambda: store.get_run(run_id).status == "finished", timeout=120)
    finally:
        worker.shutdown(10)
    return events


def records(pairs):
    out = []
    for i, r in pairs:
        rec = result_to_record(r, i)
        rec.pop("elapsed_sec")
        for turn in rec.get("turns", []):
            turn.pop("elapsed_sec")
        out.append(rec)
    return out


def graded(delay=0.0):
    """A deterministic judge: the score depends on the prompt, so a row scored against another's would show;
    `delay` s a call makes a run long enough to stop midway."""
    def answer(request):
        score = (sum(request.prompt.encode()) % 97) / 96
        return reply(json.dumps({"score": round(score, 4), "reasoning": "graded"}), usage=(100, 10), delay=delay)
    return answer


def judge_config(srv, **kw):
    """A judge the Ray workers build themselves: the key's variable is named, the key is in their environment."""
    return RunConfig(judge="openai", model="test-model", base_url=srv.base_url, api_key_env=KEY_ENV, **kw)


def score_with(store, engine, config, samples, events=None):
    """Queue a run, let a worker of `engine` score it to the end; its id."""
    run_id = submit_new(store, config, samples, dataset_name="d.jsonl")
    worker = Worker(store, slots=1, engine=engine, on_event=(events if events is not None else []).append).start()
    try:
        assert wait_for(lambda: store.get_run(run_id).status not in ("queued", "running"), timeout=120)
    finally:
        assert worker.shutdown(10)
    return run_id


@pytest.mark.parametrize("data", [SAMPLE, CHATS], ids=["single-turn", "conversations"])
def test_a_ray_worker_scores_a_queued_offline_run_as_a_local_worker_does(ray_cluster, store, data):
    samples, events = load_dataset(data), []
    on_ray = score_with(store, "ray", RunConfig(), samples, events)
    local = score_with(store, "local", RunConfig(), samples)
    assert any(f"claimed run {on_ray}" in e and "scored on a local Ray cluster by 2 Ray workers" in e
               for e in events), events
    assert store.get_run(on_ray).status == "finished" and store.get_run(on_ray).verdict.ok
    assert store.get_run(on_ray).settings["engine"] == "ray" and "engine" not in store.get_run(local).settings
    assert records(store.indexed_results(on_ray)) == records(store.indexed_results(local))
    ray_job, local_job = JobQueue(store).get(on_ray), JobQueue(store).get(local)
    assert ray_job.progress.done == ray_job.progress.total == len(samples)
    assert ray_job.progress.means == local_job.progress.means and ray_job.progress.means
    assert store.load_report(on_ray).turn_mean_scores() == store.load_report(local).turn_mean_scores()


def test_a_judged_run_on_ray_equals_the_local_one_and_reads_the_key_on_the_ray_workers(ray_cluster, store):
    samples = load_dataset(SAMPLE)[:12]
    with ChatServer(responder=graded()) as srv:
        on_ray = score_with(store, "ray", judge_config(srv, max_workers=4), samples)
        ray_calls = len(srv.chat_requests)
        local = score_with(store, "local", judge_config(srv, max_workers=4), samples)
        keys = {r.headers["authorization"] for r in srv.chat_requests}
    assert keys == {f"Bearer {WORKER_KEY}"}
    assert records(store.indexed_results(on_ray)) == records(store.indexed_results(local))
    ray_usage, local_usage = store.load_report(on_ray).usage, store.load_report(local).usage
    assert ray_usage["calls"] == local_usage["calls"] == ray_calls > 0
    assert ray_usage["prompt_tokens"] == local_usage["prompt_tokens"]


def test_a_stop_mid_run_ends_it_stopped_and_a_local_worker_finishes_every_row_once(ray_cluster, store, tmp_path):
    n = 120
    samples = [s for _ in range(5) for s in load_dataset(SAMPLE)][:n]
    with ChatServer(responder=graded(0.1)) as srv:
        config = judge_config(srv, max_workers=2, metrics=("faithfulness",))
        run_id = submit_new(store, config, samples, dataset_name="d.jsonl")
        worker = Worker(store, slots=1, engine="ray").start()
        try:
            assert wait_for(lambda: len(stored_indices(store, run_id)) >= 16)
            assert 0 < JobQueue(store).progress(run_id).done < n  # the heartbeat shows it live
            stop_run(RunStore(tmp_path / "history.sqlite3"), run_id)  # another connection, as another process
            assert wait_for(lambda: store.get_run(run_id).status == "stopped", timeout=30)
        finally:
            worker.shutdown(10)
        info = store.get_run(run_id)
        assert 16 <= info.n_done < n and stored_indices(store, run_id) == sorted(set(stored_indices(store, run_id)))
        assert JobQueue(store).get(run_id).progress.done == info.n_done == len(stored_indices(store, run_id))
        events = resumed_to_the_end(store, run_id)
    assert stored_indices(store, run_id) == list(range(n))
    assert any(f"{n - info.n_done} rows to score" in e for e in events), events


def test_shutdown_interrupts_a_ray_run_and_another_ray_worker_resumes_it(ray_cluster, store):
    n = 120
    samples = [s for _ in range(5) for s in load_dataset(SAMPLE)][:n]
    with ChatServer(responder=graded(0.1)) as srv:
        run_id = submit_new(store, judge_config(srv, max_workers=2, metrics=("faithfulness",)), samples,
                            dataset_name="d.jsonl")
        first = Worker(store, slots=1, engine="ray").start()
        assert wait_for(lambda: len(stored_indices(store, run_id)) >= 16)
        assert first.shutdown(10)
        info = store.get_run(run_id)
        assert info.status == "interrupted" and 16 <= info.n_done < n
        events = resumed_to_the_end(store, run_id, engine="ray")
    assert stored_indices(store, run_id) == list(range(n))
    assert any(f"{n - info.n_done} rows to score; scored on" in e for e in events), events


def test_a_ray_worker_that_lost_the_lease_stops_and_writes_nothing_more(ray_cluster, store):
    samples = [s for _ in range(5) for s in load_dataset(SAMPLE)]
    with ChatServer(responder=graded(0.1)) as srv:
        run_id = submit_new(store, judge_config(srv, max_workers=2, metrics=("faithfulness",)), samples,
                            dataset_name="d.jsonl")
        worker = Worker(store, slots=1, engine="ray", worker_id="w1").start()
        lose_the_lease(store, run_id, worker, after_rows=8, timeout=30)


def test_ray_workers_without_the_key_fail_the_run_naming_the_variable(ray_cluster, store, monkeypatch):
    # Set here after the cluster started: the worker process has it, the Ray workers do not.
    monkeypatch.setenv("RAGMETER_ONLY_ON_THE_DRIVER", "sk-driver")
    with ChatServer() as srv:
        config = RunConfig(judge="openai", model="m", base_url=srv.base_url, api_key_env="RAGMETER_ONLY_ON_THE_DRIVER")
        run_id = score_with(store, "ray", config, load_dataset(SAMPLE)[:4])
        assert not srv.chat_requests
    assert store.get_run(run_id).status == "failed"
    error = JobQueue(store).progress(run_id).error
    assert "RAGMETER_ONLY_ON_THE_DRIVER" in error and "Ray nodes" in error and "Traceback" not in error


def test_a_run_with_a_typed_key_is_scored_in_the_worker_and_the_worker_says_why(ray_cluster, store):
    events = []
    with ChatServer() as srv:
        config = RunConfig(judge="openai", model="m", base_url=srv.base_url, api_key_env="RAGMETER_UNSET_KEY")
        run_id = submit_new(store, config, load_dataset(SAMPLE)[:3], dataset_name="d.jsonl", api_key=TYPED_KEY)
        worker = Worker(store, slots=1, engine="ray", on_event=events.append).start()
        try:
            assert wait_for(lambda: store.get_run(run_id).status == "finished", timeout=60)
        finally:
            worker.shutdown(10)
        assert {r.headers["authorization"] for r in srv.chat_requests} == {f"Bearer {TYPED_KEY}"}
    claimed = next(e for e in events if e.startswith(f"claimed run {run_id}"))
    assert "scored in this worker, not on Ray" in claimed and "keys never travel" in claimed
    assert store.get_run(run_id).settings["engine"] == "local"  # the settings say where it was scored


def rows_file(tmp_path, n):
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(json.dumps({"question": f"What is box {i}?", "answer": f"Box {i} is blue.",
                                          "contexts": [f"Box {i}: blue."]}) for i in range(n)) + "\n")
    return path


def ragmeter(*args, history):
    env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_HISTORY=str(history))
    proc = subprocess.run([sys.executable, "-m", "evaluator", *args], env=env, capture_output=True, text=True,
                          timeout=240)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.ray
def test_cli_worker_engine_ray_once_starts_a_local_cluster_scores_the_queue_and_exits_0(tmp_path):
    import_ray()  # skip off CI when Ray is missing
    history = tmp_path / "h.sqlite3"
    code, run_id, err = ragmeter("evaluate", str(rows_file(tmp_path, 20)), "--offline", "--submit", history=history)
    assert code == 0, err
    run_id = run_id.strip()
    code, out, err = ragmeter("worker", "--engine", "ray", "--ray-workers", "1", "--once", history=history)
    assert code == 0, err
    assert "on a local Ray cluster, 1 Ray worker a run" in out.splitlines()[0]
    assert f"claimed run {run_id} (rows.jsonl, 20 rows to score; scored on a local Ray cluster by 1 Ray worker)" in out
    assert f"run {run_id} ended: finished (20/20 rows)" in out
    assert stored_indices(RunStore(history), run_id) == list(range(20))


@pytest.mark.parametrize("argv, message", [
    (["worker", "--ray-address", "auto", "--once"], "--ray-address needs --engine ray"),
    (["worker", "--ray-workers", "3", "--once"], "--ray-workers needs --engine ray"),
    (["worker", "--engine", "ray", "--ray-workers", "0", "--once"], "--ray-workers 0: give 1 or more"),
])
def test_cli_worker_refuses_ray_flags_it_would_ignore(tmp_path, capsys, argv, message):
    assert main([*argv, "--history", str(tmp_path / "h.sqlite3")]) == 2
    assert message in capsys.readouterr().err


def test_a_local_worker_given_a_ray_address_refuses_rather_than_ignoring_it(store):
    with pytest.raises(ConfigError, match=r"engine = \"ray\""):
        Worker(store, engine="local", ray_address="auto")
