"""Target calls end within their timeout and read at most the reply cap, whatever the target does.

HTTP targets against a real loopback server (target_server.py); Python targets are real functions
that sleep. Wall-clock checks only tell "ended at the timeout" from "ran for the whole trickle"
(a wide margin), they are not speed figures.
"""
import asyncio
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from evaluator.targets import FunctionTarget, HttpTarget, RetryPolicy, ask
from target_server import Huge, TargetServer, Trickle

NO_RETRY = RetryPolicy(retries=0)


def test_a_trickling_http_target_times_out_at_its_timeout():
    with TargetServer(lambda body: Trickle(0.5)) as srv:
        start = time.monotonic()
        got = ask(HttpTarget(srv.url, timeout=2), "Q?", NO_RETRY)
        took = time.monotonic() - start
    assert got.error == "timed out after 2 s" and got.answer == ""
    assert took < 8, f"{took:.1f} s: the trickle (~16 bytes, 0.5 s each) was read to its end"


def test_a_huge_http_reply_is_refused_at_the_cap():
    with TargetServer(lambda body: Huge(40)) as srv:
        got = ask(HttpTarget(srv.url, timeout=30), "Q?", RetryPolicy(retries=2, base_delay=0.01))
        assert len(srv.requests) == 1  # not retried: it would be as large again
    assert got.error.startswith("the reply kept coming, more than the 32 MiB ragmeter reads")


def test_a_retry_after_over_the_cap_fails_the_http_call_at_once():
    with TargetServer(lambda body: (429, {"error": "busy"}, {"Retry-After": "1000"})) as srv:
        got = ask(HttpTarget(srv.url), "Q?", RetryPolicy(retries=3, base_delay=0.01))
        assert len(srv.requests) == 1
    assert "asks to retry after 1000 s, longer than the 30 s ragmeter waits" in got.error


def test_a_slow_python_function_times_out_and_is_abandoned():
    release = threading.Event()
    finished = threading.Event()

    def slow(question):
        release.wait(30)
        finished.set()
        return "late"

    target = FunctionTarget(slow, timeout=0.3)
    got = ask(target, "Q?", NO_RETRY)
    assert got.error.startswith("the target timed out after 0.3 s") and got.answer == ""
    release.set()  # the abandoned call goes on in the background; its answer is dropped
    assert finished.wait(5)
    assert ask(target, "Q?", NO_RETRY).answer == "late"  # the next call runs on a fresh helper thread


def test_an_async_function_that_blocks_its_loop_is_abandoned_when_called_from_a_running_loop():
    release = threading.Event()

    async def blocking(question):  # never awaits: the timeout cannot cancel it
        release.wait(30)
        return "late"

    async def in_a_notebook():  # this thread's loop is running, so the call gets a thread of its own
        return ask(FunctionTarget(blocking, timeout=0.3), "Q?", NO_RETRY)

    # On a thread of its own: the test's thread may already run a loop (Playwright's, on a browser worker).
    answers = []
    start = time.monotonic()
    runner = threading.Thread(target=lambda: answers.append(asyncio.run(in_a_notebook())))
    runner.start()
    runner.join(30)
    took = time.monotonic() - start
    [got] = answers
    release.set()
    assert got.error.startswith("the target timed out after 0.3 s") and got.answer == ""
    assert took < 10, f"{took:.1f} s: the blocked call was waited on"


def test_a_python_function_keeps_its_thread_from_call_to_call():
    threads = []
    target = FunctionTarget(lambda q: threads.append(threading.get_ident()) or "ok", timeout=5)
    for _ in range(3):
        assert ask(target, "Q?", NO_RETRY).answer == "ok"
    assert len(set(threads)) == 1  # thread-local clients in the user's code stay valid


@pytest.mark.slow
def test_one_ctrl_c_stops_a_run_whose_python_target_hangs(tmp_path):
    marker = tmp_path / "hanging"
    (tmp_path / "hang.py").write_text(textwrap.dedent(f"""
        import pathlib, time
        def answer(question):
            if question.startswith("hang"):
                pathlib.Path({str(marker)!r}).touch()
                time.sleep(3600)
            return "fine"
    """))
    (tmp_path / "q.jsonl").write_text('{"question": "first?"}\n{"question": "hang?"}\n{"question": "third?"}\n')
    env = {**os.environ, "RAGMETER_HISTORY": str(tmp_path / "h.sqlite3"), "PYTHONPATH": os.pathsep.join(sys.path)}
    cmd = [sys.executable, "-m", "evaluator", "evaluate", str(tmp_path / "q.jsonl"), "--offline",
           "--target", f"{tmp_path / 'hang.py'}:answer", "--target-workers", "1"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():  # the first answer is in, the second call hangs
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate(timeout=5)
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)  # ONE Ctrl-C: no second press needed
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "resume with: ragmeter evaluate --resume" in err.splitlines()[-1]
    from evaluator.store.history import RunStore

    (info,) = RunStore(tmp_path / "h.sqlite3").list_runs()
    assert info.status == "stopped"
    pending = RunStore(tmp_path / "h.sqlite3").pending_samples(info.run_id)
    assert [s.question for _, s in pending if s.target_error is None][:1] == ["hang?"]  # asked again on resume
