"""Crash safety: a run killed with SIGKILL resumes where it stopped, and ends equal to an unbroken run."""
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evaluator.store.history import RunStore
from openai_server import ChatServer, reply

N = 40
CANARY = "sk-canary-resume-7c1f0e"


def deterministic(request):
    """The same prompt always gets the same score, as a cached or temperature-0 judge would give."""
    digest = hashlib.sha256(request.prompt.encode()).digest()
    return reply(json.dumps({"score": digest[0] / 255, "reasoning": "deterministic test judge"}), delay=0.03)


@pytest.fixture
def dataset(tmp_path):
    rows = [{"sample_id": f"q{i}", "question": f"What does clause {i} of the contract say?",
             "answer": f"Clause {i} says deliveries arrive within {i + 2} days.",
             "contexts": [f"Contract clause {i}: deliveries arrive within {i + 2} working days."]}
            for i in range(N)]
    path = tmp_path / "contract.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def cli(args, history, **kw):
    env = dict(os.environ, OPENAI_API_KEY=CANARY, RAGMETER_HISTORY=str(history))
    return subprocess.Popen([sys.executable, "-m", "evaluator", "evaluate", *args],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def recorded(history: Path) -> int:
    try:
        with sqlite3.connect(history) as db:
            return db.execute("SELECT count(*) FROM results").fetchone()[0]
    except sqlite3.Error:
        return 0


def stored_calls(history: Path) -> int:
    """The judge calls the run's stored usage counts so far (0 before the first save)."""
    try:
        with sqlite3.connect(history) as db:
            row = db.execute("SELECT usage FROM runs").fetchone()
        return int(json.loads(row[0]).get("calls") or 0) if row and row[0] else 0
    except (sqlite3.Error, ValueError):
        return 0


def killed_run(dataset: Path, judge_args, history: Path, after: int):
    """The CLI's run of `dataset`, killed with SIGKILL once `after` results are recorded: its run in the history."""
    victim = cli([str(dataset), *judge_args], history)
    deadline = time.time() + 120
    while recorded(history) < after and time.time() < deadline and victim.poll() is None:
        time.sleep(0.02)
    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=30)
    [run] = RunStore(history).list_runs()
    return run


@pytest.mark.slow
def test_sigkill_then_resume_equals_uninterrupted_run(tmp_path, dataset):
    judge_args = ["--model", "judge", "--no-cache", "--max-workers", "2", "-q"]
    with ChatServer(responder=deterministic) as srv:
        judge_args += ["--base-url", srv.base_url]
        # 1. An uninterrupted run, for reference.
        full = cli([str(dataset), *judge_args, "-o", str(tmp_path / "full.json")], tmp_path / "h_full.sqlite3")
        assert full.wait(timeout=240) == 0, full.stderr.read()

        # 2. The same run, killed mid-way with SIGKILL.
        history = tmp_path / "h.sqlite3"
        run = killed_run(dataset, judge_args, history, after=8)
        store = RunStore(history)
        done_before = len(store.completed_indices(run.run_id))
        assert run.status == "running" and 8 <= done_before < N

        # 3. Resume: only the unfinished samples are scored, two judge calls each (three judged metrics, the two
        # that read the contexts in one call: the loopback server is not known to reuse a prompt prefix).
        srv.reset()
        resumed = cli(["--resume", run.run_id, *judge_args, "-o", str(tmp_path / "resumed.json")], history)
        assert resumed.wait(timeout=240) == 0, resumed.stderr.read()
        assert len(srv.chat_requests) == 2 * (N - done_before)

    full_report = json.loads((tmp_path / "full.json").read_text())
    resumed_report = json.loads((tmp_path / "resumed.json").read_text())
    assert [s["sample_id"] for s in resumed_report["samples"]] == [f"q{i}" for i in range(N)]
    strip = lambda samples: [{k: v for k, v in s.items() if k != "elapsed_sec"} for s in samples]
    assert strip(resumed_report["samples"]) == strip(full_report["samples"])
    assert resumed_report["mean_scores"] == full_report["mean_scores"]
    assert RunStore(history).get_run(run.run_id).status == "finished"
    # The key was in the environment of every process; it must be in none of the files written.
    for path in tmp_path.iterdir():
        assert CANARY.encode() not in path.read_bytes(), path


@pytest.mark.slow
def test_a_resumed_report_counts_the_judge_calls_of_every_session(tmp_path, dataset):
    """On main the killed session's calls were lost: 83 reported, 131 received."""
    judge_args = ["--model", "judge", "--no-cache", "--max-workers", "1", "-q"]
    with ChatServer(responder=deterministic) as srv:
        judge_args += ["--base-url", srv.base_url]
        history = tmp_path / "h.sqlite3"
        run = killed_run(dataset, judge_args, history, after=6)
        # Each batch of rows is stored with the usage that paid for it, in one transaction (runs/rows.py):
        # wherever the kill fell, the stored rows never count fewer calls than they cost (two writes, rows
        # then usage, once left a batch's 14 calls uncounted in CI).
        assert stored_calls(history) >= 2 * recorded(history), (stored_calls(history), recorded(history))
        first_session = len(srv.chat_requests)
        resumed = cli(["--resume", run.run_id, *judge_args, "-o", str(tmp_path / "resumed.json")], history)
        assert resumed.wait(timeout=240) == 0, resumed.stderr.read()
        received = len(srv.chat_requests)
    usage = json.loads((tmp_path / "resumed.json").read_text())["usage"]
    assert first_session >= 12 and received > first_session  # 6 rows, 2 calls each (3 metrics, 2 in one call)
    # Every call is counted except those of the one row in flight at the kill (2 calls, 1 worker).
    assert received - 2 <= usage["calls"] <= received, f"{usage['calls']} reported, {received} received"
    assert RunStore(history).load_report(run.run_id).usage["calls"] == usage["calls"]
