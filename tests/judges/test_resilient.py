"""ResilientJudge around a backend that only implements `generate(prompt) -> str`: what it retries,
how long it waits (on a fake clock), what it caches and counts."""
import pytest

from evaluator.errors import JudgeError
from evaluator.judges.resilient import ResilientJudge
from fakes import FakeClock, ScriptedJudge


def wrap(backend, clock, tmp_path=None, **kw):
    cache = tmp_path / "cache.sqlite3" if tmp_path is not None else None
    return ResilientJudge(backend, cache=cache, sleep=clock.sleep, clock=clock, **kw)


class Late(Exception):
    retry_after = 7.0


@pytest.fixture
def clock():
    return FakeClock()


def test_a_failing_call_is_retried_with_exponential_backoff_and_counted(clock):
    backend = ScriptedJudge("ok", queue=[RuntimeError("flake"), RuntimeError("flake")])
    judge = wrap(backend, clock)
    assert judge.generate("p") == "ok"
    first, second = clock.slept
    assert 0.5 <= first <= 0.55 and 1.0 <= second <= 1.1  # 0.5 s then 1 s, plus up to 10% jitter
    usage = judge.usage()
    assert (usage["calls"], usage["requests"], usage["retries"], usage["failures"]) == (1, 3, 2, 0)
    assert judge.call_info()["retries"] == 2 and usage["prompt_tokens"] > 0  # tokens estimated from the text


def test_retries_run_out_into_a_judge_error_naming_the_cause(clock):
    judge = wrap(ScriptedJudge(RuntimeError("still down")), clock, max_retries=2)
    with pytest.raises(JudgeError, match="RuntimeError: still down after 2 retries") as err:
        judge.generate("p")
    assert err.value.kind == "exhausted" and judge.usage()["failures"] == 1


def test_a_rejected_call_is_not_retried(clock):
    backend = ScriptedJudge(JudgeError("HTTP 401 from the gateway", kind="rejected", status=401))
    judge = wrap(backend, clock)
    with pytest.raises(JudgeError) as err:
        judge.generate("p")
    assert (err.value.kind, err.value.status, backend.calls, clock.slept) == ("rejected", 401, 1, [])


def test_nothing_listening_is_retried_on_the_short_schedule(clock):
    judge = wrap(ScriptedJudge(ConnectionRefusedError(111, "refused")), clock)
    with pytest.raises(JudgeError) as err:
        judge.generate("p")
    assert err.value.kind == "unreachable" and "connection refused" in str(err.value)
    assert sum(clock.slept) < 2.0  # 0.25 + 0.5 + 1.0, jittered


def test_a_retry_after_is_honoured_and_slows_every_caller(clock):
    judge = wrap(ScriptedJudge("ok", queue=[Late("busy")]), clock, max_concurrency=8)
    assert judge.generate("p") == "ok"
    assert 7.0 <= sum(clock.slept) <= 7.0 * 1.1 * 2  # the backoff waits it, the limiter's pause may too
    assert judge.limiter.history[:2] == [8, 4]


def test_the_cache_answers_a_second_call_and_keeps_repeats_apart(clock, tmp_path):
    backend = ScriptedJudge(lambda prompt: f"reply to {prompt}")
    judge = wrap(backend, clock, tmp_path)
    assert judge.generate("p") == judge.generate("p") == "reply to p"
    judge.generate("p", repeat=1)
    assert backend.calls == 2 and judge.usage()["cache_hits"] == 1 and judge.call_info()["cached"] is False
    again = wrap(ScriptedJudge("never asked"), clock, tmp_path)
    assert again.generate("p") == "reply to p" and again.call_info()["cached"] is True


def test_options_a_backend_does_not_take_are_not_passed(clock):
    judge = wrap(ScriptedJudge("ok"), clock)
    assert judge.generate("p", top_logprobs=5) == "ok"  # ScriptedJudge.generate takes only the prompt
    assert "logprobs" not in judge.call_info() and not judge.accepts_option("top_logprobs")
    assert judge.accepts_option("repeat")


def test_a_backend_that_returns_no_text_fails_visibly(clock):
    judge = wrap(ScriptedJudge(lambda prompt: None), clock, max_retries=0)
    with pytest.raises(JudgeError, match="must return text"):
        judge.generate("p")
