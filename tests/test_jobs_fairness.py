"""Issue 42, fair queues: one user's queued and running jobs are capped (`[runs] max_queued_per_user`),
admins exempt, the refusal naming whose limit it is and how many are queued. On a real SQLite file and a
real PostgreSQL server, and through `ragmeter evaluate --submit` processes with a team file."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import QueueFull
from evaluator.model import EvalSample
from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue, Limits
from teamfiles import config_toml

ROOT = Path(__file__).resolve().parents[1]


STORE_BACKENDS = ("sqlite", "postgresql")  # each test using `store` runs on both (tests/conftest.py)


def new_run(store, owner):
    return store.create_run(dataset_name="d.csv", samples=[EvalSample("q?", "a.", ["c."])], settings={},
                            owner=owner, status="queued")


def test_one_user_cannot_fill_the_queue_and_the_refusal_says_whose_limit(store):
    queue = JobQueue(store, Limits(max_queued_per_user=3, exempt=("root@example.com",)))
    mine = [new_run(store, "alice@example.com") for _ in range(3)]
    for run_id in mine:
        queue.submit(run_id, kind="new", owner="alice@example.com")
    queue.claim("w1")  # a running job counts too
    with pytest.raises(QueueFull) as refused:
        queue.submit(new_run(store, "alice@example.com"), kind="new", owner="alice@example.com")
    message = str(refused.value)
    assert "alice@example.com already has 2 runs queued and 1 running" in message
    assert "limit is 3" in message and "max_queued_per_user" in message and "ragmeter runs stop" in message
    queue.submit(new_run(store, "bob@example.com"), kind="new", owner="bob@example.com")  # others still queue
    for _ in range(5):  # an admin is not capped
        queue.submit(new_run(store, "root@example.com"), kind="new", owner="root@example.com")
    queue.request_stop(mine[2])  # one of hers ends: she has room again
    queue.submit(new_run(store, "alice@example.com"), kind="new", owner="alice@example.com")


def test_resubmitting_a_queued_run_does_not_count_it_twice(store):
    queue = JobQueue(store, Limits(max_queued_per_user=1))
    run_id = new_run(store, "alice")
    queue.submit(run_id, kind="new", owner="alice")
    queue.submit(run_id, kind="resume", owner="alice")  # the same job, queued again
    assert [j.run_id for j in queue.list()] == [run_id]


def rows_file(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"question": "What is box 1?", "answer": "Blue.", "contexts": ["Box 1: blue."]}) + "\n")
    return path


def test_evaluate_submit_past_the_team_files_cap_exits_with_the_reason(tmp_path, monkeypatch, capsys):
    config = tmp_path / "team.toml"
    history = tmp_path / "h.sqlite3"
    config.write_text(config_toml(server={"history": str(history)},
                                  roles={"evaluators": ["alice", "bob"], "admins": ["root"]},
                                  runs={"max_queued_per_user": 2, "workers": "external"}), encoding="utf-8")
    monkeypatch.setenv("RAGMETER_CONFIG", str(config))
    monkeypatch.delenv("RAGMETER_HISTORY", raising=False)
    assert main(["config", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["runs.max_queued_per_user"]
    assert shown["value"] == 2 and shown["origin"] == f"{config} [runs] max_queued_per_user"

    def submit(user):
        env = dict(os.environ, PYTHONPATH=str(ROOT), RAGMETER_USER=user)
        return subprocess.run([sys.executable, "-m", "evaluator", "evaluate", str(rows_file(tmp_path)), "--offline",
                               "--submit"], env=env, capture_output=True, text=True, timeout=120)
    assert [submit("alice").returncode for _ in range(2)] == [0, 0]
    third = submit("alice")
    assert third.returncode != 0
    assert "alice already has 2 runs queued and 0 running: alice's limit is 2" in third.stderr
    assert "Traceback" not in third.stderr
    assert submit("bob").returncode == 0 and submit("root").returncode == 0
    assert len(JobQueue(RunStore(str(history))).list()) == 4  # the refused run was not kept


def test_a_team_file_caps_each_user_by_default_a_laptop_does_not_and_a_negative_is_refused(tmp_path):
    from evaluator.config import ConfigError, from_dict

    team = {"server": {"shared": True, "auth": "proxy"}, "roles": {"admins": ["root"]}}
    assert from_dict(team).runs.limits.max_queued_per_user == 20 and from_dict(team).runs.limits.exempt == ("root",)
    assert from_dict({}).runs.limits.max_queued_per_user == 0  # one person's laptop: nobody else to keep out
    with pytest.raises(ConfigError, match="runs.max_queued_per_user must be 0"):
        from_dict({"runs": {"max_queued_per_user": -1}})
