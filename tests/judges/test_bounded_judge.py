"""The judge's calls end within their deadline and read at most the reply cap, whatever the server does.

Real loopback server (openai_server.ChatServer); time measured with the wall clock only to tell
"ended at the deadline" from "ran on for the whole trickle" (a 10x margin, not a speed figure).
"""
import resource
import time

import pytest

from evaluator.errors import JudgeError
from evaluator.judges.openai import OpenAIJudge
from openai_server import ChatServer, error, huge, reply, trickle


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def judge(srv, **kw):
    kw.setdefault("max_retries", 0)
    return OpenAIJudge("test-model", srv.base_url, sleep=lambda s: None, **kw)


def test_a_trickling_judge_fails_at_the_total_deadline():
    """One byte every 0.5 s: each read is quick, so only a total deadline ends the call."""
    with ChatServer(default=trickle(0.5)) as srv:
        start = time.monotonic()
        with pytest.raises(JudgeError, match=r"within 1s \(timeout\)"):
            judge(srv, timeout=1.0).generate("p")
        took = time.monotonic() - start
    assert took < 10, f"the call ran {took:.1f} s; a trickle of ~150 bytes at 0.5 s each would take 75 s"


@pytest.mark.parametrize("announce", [True, False], ids=["content-length", "until-close"])
def test_a_huge_reply_is_refused_at_the_cap_without_reading_it_all(announce):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with ChatServer(default=huge(100, announce=announce)) as srv:
        j = judge(srv, timeout=30.0, max_retries=3)
        with pytest.raises(JudgeError, match=r"refused: the reply .*more than the 8 MiB ragmeter reads"):
            j.generate("p")
        assert len(srv.chat_requests) == 1  # the same server would send the same again: not retried
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mb < 3 * 8, f"peak RSS grew {grown_mb:.0f} MB for a 100 MB reply"


def test_a_retry_after_over_the_cap_fails_the_call_at_once():
    with ChatServer(default=error(429, "slow down", retry_after=1000)) as srv:
        with pytest.raises(JudgeError, match=r"retry after 1000 s, longer than the 30 s ragmeter waits"):
            judge(srv, max_retries=3).generate("p")
        assert len(srv.chat_requests) == 1


def test_a_retry_after_under_the_cap_is_waited():
    slept = []
    with ChatServer() as srv:
        srv.queue(error(429, retry_after=5), reply("ok"))
        j = OpenAIJudge("test-model", srv.base_url, sleep=slept.append, max_retries=1)
        assert j.generate("p") == "ok"
    assert 5.0 <= slept[0] <= 5.5


def test_a_reply_with_lone_surrogates_and_nuls_is_made_safe():
    with ChatServer(default=reply('{"score": 0.9, "reasoning": "ok \ud800 and \x00 here"}')) as srv:
        text = judge(srv).generate("p")
    assert "\ud800" not in text and "\x00" not in text and text.count("\ufffd") == 2


def test_a_judge_that_accepts_and_never_answers_ends_the_run_with_a_message(tmp_path):
    """Every call times out: the run ends (the circuit breaker), says why, and is not left "running"."""
    from evaluator.store.history import RunStore
    from evaluator.model import EvalSample
    from evaluator.runs.run import Run, RunConfig
    from openai_server import stall

    samples = [EvalSample(f"Q{i}?", "A.", ["ctx"]) for i in range(8)]
    store = RunStore(tmp_path / "h.sqlite3")
    with ChatServer(default=stall(3600)) as srv:
        j = judge(srv, timeout=0.3)
        config = RunConfig(judge="openai", model="test-model", base_url=srv.base_url, max_workers=4)
        run = Run.new(config, samples, dataset_name="d.jsonl", store=store, judge=j).start()
        assert run.join(120), "the run did not end"
    assert run.status == "stopped" and "judge" in (run.error or "").lower()
    (info,) = store.list_runs()
    assert info.status == "stopped"
