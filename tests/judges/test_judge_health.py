"""A failing judge stops the run early with one message naming the cause; finished rows are kept.

Rules in isolation use a scripted judge; the causes a user meets (401, 404 model not found,
nothing listening) use a real loopback server or a closed port, with real time measured.
"""
import time

import pytest

from evaluator.errors import JudgeError, JudgeFailed
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.judges.health import HealthPolicy, JudgeHealth
from evaluator.judges.openai import OpenAIJudge
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METRICS, EvalSample
from fakes import ScriptedJudge
from openai_server import ChatServer, error

OK = '{"score": 0.8, "reasoning": "ok"}'


def samples(n):
    return [EvalSample(f"Question {i}?", f"Answer {i} from the shipping policy.", ["Shipping policy: 5 days."],
                       "It takes 5 days.", sample_id=f"s{i}") for i in range(n)]


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


# -- the rules ------------------------------------------------------------------------------------
def test_three_rejected_calls_before_any_success_trip_the_early_stop():
    health = JudgeHealth(HealthPolicy(early_failures=3))
    for _ in range(2):
        health.record_failure(JudgeError("HTTP 401", kind="rejected", status=401))
    assert not health.tripped
    health.record_failure(JudgeError("HTTP 401 check the key", kind="rejected", status=401))
    with pytest.raises(JudgeFailed, match="check the key") as stopped:
        health.check()
    assert (stopped.value.kind, stopped.value.status, stopped.value.failures) == ("rejected", 401, 3)


def test_rejections_after_a_success_are_left_to_the_breaker():
    health = JudgeHealth(HealthPolicy(early_failures=1, window=4))
    health.record_success()
    health.record_failure(JudgeError("400 too long", kind="rejected", status=400))
    assert not health.tripped


def test_exhausted_retries_never_trip_the_early_stop_only_the_breaker():
    health = JudgeHealth(HealthPolicy(early_failures=1, window=4, max_failure_rate=0.5))
    for _ in range(3):
        health.record_failure(JudgeError("HTTP 503 after 3 retries", kind="exhausted"))
    assert not health.tripped  # the window is not full yet
    health.record_failure(JudgeError("HTTP 503 after 3 retries", kind="exhausted"))
    with pytest.raises(JudgeFailed, match=r"failed 4 of its last 4 calls.*HTTP 503") as stopped:
        health.check()
    assert stopped.value.kind == "breaker"


def test_a_failure_rate_at_the_bound_does_not_trip():
    health = JudgeHealth(HealthPolicy(window=4, max_failure_rate=0.5))
    for ok in (True, False, True, False, True, False):
        health.record_success() if ok else health.record_failure(RuntimeError("flaky"))
    assert not health.tripped


# -- through the evaluator ------------------------------------------------------------------------------
def test_a_judge_going_bad_midway_stops_the_run_and_keeps_the_finished_rows():
    judge = ScriptedJudge(JudgeError("HTTP 500 after 3 retries", kind="exhausted"), queue=[OK] * 20)
    kept = []
    evaluator = RAGEvaluator(judge, judge_health=HealthPolicy(window=10, max_failure_rate=0.5))
    with pytest.raises(JudgeFailed, match="failed 6 of its last 10 calls") as stopped:
        evaluator.evaluate_dataset(samples(50), on_result=lambda i, r: kept.append(i))
    report = stopped.value.report
    assert [r.sample_id for r in report.results] == ["s0", "s1", "s2", "s3", "s4"] and kept == [0, 1, 2, 3, 4]
    assert all(getattr(r, m).method == METHOD_BLEND for r in report.results[:4] for m in METRICS)
    assert {getattr(report.results[4], m).method for m in METRICS} == {METHOD_FALLBACK}
    # 20 answered, then 6 failed: the 6th (s5's first metric) tripped the breaker, and s5 was
    # dropped rather than saved as heuristic fallbacks; nothing after it was asked.
    assert judge.calls == 26


def test_without_a_policy_every_row_is_scored_on_heuristics():
    judge = ScriptedJudge(JudgeError("down", kind="unreachable"))
    report = RAGEvaluator(judge, judge_health=None).evaluate_dataset(samples(6))
    assert len(report.results) == 6


def test_concurrent_workers_stop_together():
    judge = ScriptedJudge(JudgeError("HTTP 401", kind="rejected", status=401))
    with pytest.raises(JudgeFailed) as stopped:
        RAGEvaluator(judge).evaluate_dataset(samples(200), max_workers=8)
    assert stopped.value.report.results == [] and judge.calls <= 8 * 2


# -- real causes, real time ------------------------------------------------------------------------------
def run_until_stopped(judge, n=500, workers=4):
    start = time.perf_counter()
    with judge, pytest.raises(JudgeFailed) as stopped:
        RAGEvaluator(judge).evaluate_dataset(samples(n), max_workers=workers)
    return stopped.value, time.perf_counter() - start


@pytest.mark.parametrize("workers", [1, 4])
def test_401_stops_at_once_naming_the_key(workers):
    with ChatServer(default=error(401, "Incorrect API key provided")) as srv:
        url = srv.base_url
        failed, seconds = run_until_stopped(OpenAIJudge("gpt-4o-mini", url), workers=workers)
        # No retries: at most the calls already in flight. A sample sends its first call alone and its
        # other judged metrics together (the shared prompt prefix), so a worker has up to 4 in flight.
        assert len(srv.chat_requests) <= 3 + 4 * workers
    assert str(failed).startswith(f"Judge rejected the request: HTTP 401 Unauthorized from {url}")
    assert "check the API key" in str(failed) and failed.status == 401 and seconds < 5


def test_404_model_not_found_names_the_model():
    with ChatServer(default=error(404, "The model `gpt-9` does not exist")) as srv:
        failed, seconds = run_until_stopped(OpenAIJudge("gpt-9", srv.base_url))
    assert "HTTP 404 Not Found" in str(failed) and "gpt-9" in str(failed) and "check the model name" in str(failed)
    assert seconds < 5


@pytest.mark.parametrize("workers", [1, 4])
def test_nothing_listening_fails_within_seconds(workers, closed_port):
    url = f"http://127.0.0.1:{closed_port}/v1"
    failed, seconds = run_until_stopped(OpenAIJudge("m", url), workers=workers)
    assert str(failed).startswith(f"Could not reach the judge at {url} (connection refused)")
    assert failed.kind == "unreachable" and seconds < 10
