"""OpenAIJudge against a real chat-completions server on 127.0.0.1 (tests/openai_server.py).

Backoff waits go through an injected fake clock, so retries cost no real time; only the
timeout tests wait (a fraction of a second) for the real client timeout."""
import json
import threading

import httpx2
import pytest

from evaluator.errors import JudgeConfigError, JudgeError
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, EvalSample
from evaluator.judges.openai import KEY_PLACEHOLDER, OpenAIJudge
from openai_server import ChatServer, drop, error, malformed, reply, stall

CANARY = "sk-canary-5f2b9e7d0c1a4b3e8d6f"


class FakeClock:
    """Time that only moves when the code under test sleeps."""

    def __init__(self):
        self.now, self.slept = 0.0, []
        self._lock = threading.Lock()

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        with self._lock:
            self.slept.append(seconds)
            self.now += seconds


@pytest.fixture
def server():
    with ChatServer() as srv:
        yield srv


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture(autouse=True)
def no_env_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def make(srv, clock, **kw):
    kw.setdefault("timeout", 5.0)
    return OpenAIJudge("test-model", srv.base_url, sleep=clock.sleep, clock=clock, **kw)


# -- success, tokens, request shape -------------------------------------------------------------
def test_success_returns_text_and_counts_tokens_from_usage(server, clock):
    server.queue(reply('{"score": 0.9}', usage=(120, 8)))
    judge = make(server, clock, api_key=CANARY)
    assert judge.generate("judge this") == '{"score": 0.9}'
    assert judge.call_info() == {"retries": 0, "cached": False, "prompt_tokens": 120,
                                 "completion_tokens": 8, "json_mode": "object"}
    usage = judge.usage()
    assert (usage["calls"], usage["prompt_tokens"], usage["completion_tokens"]) == (1, 120, 8)
    sent = server.chat_requests[0]
    assert sent.headers["authorization"] == f"Bearer {CANARY}"
    assert sent.body["model"] == "test-model" and sent.body["temperature"] == 0.0
    assert sent.body["messages"] == [{"role": "user", "content": "judge this"}]
    assert sent.response_format == "json_object"  # JSON output without paying for a schema's tokens


def test_tokens_are_estimated_when_the_server_omits_usage(server, clock):
    server.queue(reply("x" * 40, usage=None))
    judge = make(server, clock)
    judge.generate("p" * 400)
    info = judge.call_info()
    assert (info["prompt_tokens"], info["completion_tokens"]) == (100, 10)


def test_max_tokens_is_sent_only_when_set(server, clock):
    make(server, clock).generate("a")
    make(server, clock, max_tokens=64).generate("b")
    assert "max_tokens" not in server.chat_requests[0].body
    assert server.chat_requests[1].body["max_tokens"] == 64


def test_an_empty_reply_is_returned_but_not_cached(server, clock, tmp_path):
    server.queue(reply(""))
    judge = make(server, clock, cache=tmp_path / "c.sqlite")
    assert judge.generate("p") == ""
    assert judge.generate("p") == '{"score": 0.8, "reasoning": "The answer is supported by the context."}'
    assert len(server.chat_requests) == 2


# -- retries ----------------------------------------------------------------------------------------
def test_429_with_retry_after_waits_that_long_then_succeeds(server, clock):
    server.queue(error(429, "slow down", retry_after=2), reply("ok"))
    judge = make(server, clock)
    assert judge.generate("p") == "ok"
    assert 2.0 <= clock.slept[0] <= 2.2  # Retry-After plus at most 10% jitter
    assert judge.call_info()["retries"] == 1
    usage = judge.usage()
    assert (usage["retries"], usage["rate_limited"], usage["calls"], usage["requests"]) == (1, 1, 1, 2)
    assert judge.limiter.history == [16, 8]  # the 429 also halved the concurrency limit


def test_retry_after_ms_is_honoured(server, clock):
    server.queue(error(429, retry_after_ms=1500), reply("ok"))
    make(server, clock).generate("p")
    assert 1.5 <= clock.slept[0] <= 1.65


def test_persistent_5xx_fails_after_max_retries_plus_one_requests(server, clock):
    server.default = error(503, "overloaded")
    judge = make(server, clock, max_retries=3)
    with pytest.raises(JudgeError, match=r"HTTP 503 from http://127\.0\.0\.1:\d+/v1/chat/completions: "
                                         r"overloaded after 3 retries"):
        judge.generate("p")
    assert len(server.chat_requests) == 4
    # exponential backoff 0.5, 1, 2 s, each with up to 10% jitter
    assert len(clock.slept) == 3
    assert all(base <= slept <= base * 1.1 for slept, base in zip(clock.slept, [0.5, 1.0, 2.0]))
    assert judge.usage()["failures"] == 1 and judge.call_info()["retries"] == 3


def test_a_reply_slower_than_the_timeout_is_retried_then_fails(server, clock):
    server.queue(reply("warm"))
    judge = make(server, clock, timeout=0.2, max_retries=1)
    assert judge.generate("warm-up") == "warm"  # the judge has answered: a timeout may be bad luck
    server.default = stall(5)
    with pytest.raises(JudgeError, match=r"within 0\.2s \(timeout\) after 1 retries"):
        judge.generate("p")
    assert len(server.chat_requests) == 3
    assert judge.limiter.history == [16, 8, 4]  # timeouts are throttle signals


def test_a_slow_reply_then_a_fast_one_succeeds_once_the_judge_has_answered(server, clock):
    server.queue(reply("warm"), stall(5), reply("fast"))
    judge = make(server, clock, timeout=0.2)
    judge.generate("warm-up")
    assert judge.generate("p") == "fast" and judge.call_info()["retries"] == 1


def test_a_judge_that_never_answered_in_time_gets_one_try_per_call(server, clock):
    """A second wait would only double what a dead or trickling judge costs the run (issue 49)."""
    server.queue(stall(5), reply("fast"))
    judge = make(server, clock, timeout=0.2, max_retries=3)
    with pytest.raises(JudgeError, match=r"within 0\.2s \(timeout\) after 0 retries") as failed:
        judge.generate("p")
    assert failed.value.kind == "timeout" and len(server.chat_requests) == 1
    assert judge.generate("q") == "fast"  # the next call is asked as usual


@pytest.mark.parametrize("bad", [
    malformed(),                                        # truncated JSON
    malformed(b"<html>502 Bad Gateway</html>", content_type="text/html"),
    malformed(b'{"object": "chat.completion"}'),        # JSON, but no choices
    drop(),                                             # connection closed, no answer
], ids=["truncated-json", "html", "no-choices", "dropped"])
def test_malformed_bodies_and_dropped_connections_are_retried(server, clock, bad):
    server.queue(bad, reply("ok"))
    judge = make(server, clock)
    assert judge.generate("p") == "ok" and judge.call_info()["retries"] == 1


def test_persistent_malformed_bodies_end_in_judge_error(server, clock):
    server.default = malformed()
    with pytest.raises(JudgeError, match="malformed reply .* after 2 retries"):
        make(server, clock, max_retries=2).generate("p")


@pytest.mark.parametrize("status, hint", [(401, "OPENAI_API_KEY"), (404, "model name"), (403, "not allowed")])
def test_client_errors_fail_at_once_with_a_hint(server, clock, status, hint):
    server.queue(error(status, "nope"))
    judge = make(server, clock, json_mode="none")
    with pytest.raises(JudgeError, match=hint):
        judge.generate("p")
    assert len(server.chat_requests) == 1 and clock.slept == []


# -- JSON mode ladder --------------------------------------------------------------------------------
LLAMA_500 = ("1 validation error: {'loc': ('body', 'response_format', 'type'), "
             "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema'}")


def test_json_object_rejected_downgrades_to_no_format_once(server, clock):
    server.responder = lambda req: (error(400, "response_format json_object is not supported")
                                    if req.response_format == "json_object" else None)
    judge = make(server, clock)
    assert judge.generate("first") == server.default.text
    assert judge.call_info() == {"retries": 0, "cached": False, "json_mode": "none",
                                 "prompt_tokens": 1, "completion_tokens": 10}
    judge.generate("second")
    assert [r.response_format for r in server.chat_requests] == ["json_object", None, None]
    assert judge.usage()["retries"] == 0 and judge.usage()["failures"] == 0
    assert clock.slept == []  # a downgrade is not a retry


def test_a_llama_style_500_on_the_format_downgrades_too(server, clock):
    server.queue(error(500, "response_format: 'json_object' is not supported by this grammar"))
    judge = make(server, clock)
    assert judge.generate("p") == server.default.text
    assert [r.response_format for r in server.chat_requests] == ["json_object", None]


def test_a_500_that_does_not_mention_the_format_is_retried_not_downgraded(server, clock):
    server.queue(error(500, "CUDA out of memory"), reply("ok"))
    judge = make(server, clock)
    assert judge.generate("p") == "ok"
    assert [r.response_format for r in server.chat_requests] == ["json_object", "json_object"]


@pytest.mark.parametrize("mode, sent", [("schema", "json_schema"), ("object", "json_object"), ("none", None)])
def test_a_forced_json_mode_is_sent_as_is(server, clock, mode, sent):
    make(server, clock, json_mode=mode).generate("p")
    assert server.chat_requests[0].response_format == sent


def test_a_forced_schema_mode_never_downgrades(server, clock):
    server.default = error(500, LLAMA_500)
    with pytest.raises(JudgeError, match="after 1 retries"):
        make(server, clock, json_mode="schema", max_retries=1).generate("p")
    assert {r.response_format for r in server.chat_requests} == {"json_schema"}


def test_the_schema_sent_is_loose(server, clock):
    make(server, clock, json_mode="schema").generate("p")
    schema = server.chat_requests[0].body["response_format"]["json_schema"]["schema"]
    assert schema["additionalProperties"] is True and "required" not in schema


# -- keys, names, settings ------------------------------------------------------------------------------
def test_no_key_for_real_openai_is_an_actionable_error():
    with pytest.raises(JudgeConfigError, match=r"pass api_key=\.\.\. or set OPENAI_API_KEY"):
        OpenAIJudge("gpt-4o-mini")


def test_a_local_server_needs_no_key(server, clock):
    make(server, clock).generate("p")
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY_PLACEHOLDER}"


def test_the_key_comes_from_the_variable_named_for_the_base_url(server, clock, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    make(server, clock, api_key_env="OPENAI_API_KEY").generate("p")
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {CANARY}"


def test_a_typed_base_url_never_gets_the_servers_openai_key(server, clock, monkeypatch):
    # The dashboard's old leak: a visitor's base URL received the server's OPENAI_API_KEY.
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    make(server, clock).generate("p")
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {KEY_PLACEHOLDER}"


def test_the_operators_base_url_gets_the_environment_key(server, clock, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", CANARY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    OpenAIJudge("test-model", sleep=clock.sleep, clock=clock, timeout=5.0).generate("p")
    assert server.chat_requests[0].headers["authorization"] == f"Bearer {CANARY}"


def test_the_key_is_never_in_name_repr_settings_errors_or_the_cache(server, clock, tmp_path, caplog):
    caplog.set_level("DEBUG")
    cache = tmp_path / "cache.sqlite"
    judge = make(server, clock, api_key=CANARY, cache=cache, max_retries=1)
    server.queue(error(500, f"bad key {CANARY}"), reply("ok"))
    judge.generate("p")
    server.queue(error(401, f"Incorrect API key provided: {CANARY}"))
    with pytest.raises(JudgeError) as failed:
        judge.generate("q")
    judge.close()
    shown = [judge.name, repr(judge), json.dumps(judge.settings()), str(failed.value), caplog.text]
    assert not any(CANARY in text for text in shown)
    assert "***" in str(failed.value)
    written = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert CANARY.encode() not in written and b"ok" in written


def test_name_and_settings_hide_credentials_in_the_url(clock):
    judge = OpenAIJudge("m", "http://user:pw@127.0.0.1:9/v1?key=abc", sleep=clock.sleep)
    assert judge.name == "m @ http://127.0.0.1:9/v1"
    assert "pw" not in repr(judge) and "abc" not in json.dumps(judge.settings())
    assert judge.settings() == {"model": "m", "base_url": "http://127.0.0.1:9/v1", "temperature": 0.0,
                                "timeout": 60.0, "max_retries": 3, "max_concurrency": 16, "max_call_seconds": 121.0,
                                "json_mode": "auto", "max_tokens": None, "cache": False}


@pytest.mark.parametrize("kw", [{"json_mode": "yaml"}, {"max_retries": -1}, {"timeout": 0},
                                {"max_concurrency": 0}])
def test_bad_settings_are_refused(kw):
    with pytest.raises(JudgeConfigError):
        OpenAIJudge("m", "http://127.0.0.1:9/v1", **kw)


# -- cache ------------------------------------------------------------------------------------------------
def test_a_cache_hit_makes_no_http_request(server, clock, tmp_path):
    path = tmp_path / "cache.sqlite"
    first = make(server, clock, cache=path)
    reply_text = first.generate("p")
    first.close()
    rerun = make(server, clock, cache=path)  # a re-run of the same dataset
    assert rerun.generate("p") == reply_text
    assert len(server.chat_requests) == 1
    assert rerun.call_info()["cached"] is True
    usage = rerun.usage()
    assert (usage["cache_hits"], usage["calls"], usage["requests"]) == (1, 0, 0)
    assert rerun.settings()["cache"] is True and str(tmp_path) not in str(rerun.settings())  # whether, not where


def test_the_cache_key_includes_model_and_base_url(clock, tmp_path):
    path = tmp_path / "cache.sqlite"
    with ChatServer() as a, ChatServer() as b:
        OpenAIJudge("m1", a.base_url, cache=path, sleep=clock.sleep).generate("p")
        OpenAIJudge("m2", a.base_url, cache=path, sleep=clock.sleep).generate("p")
        OpenAIJudge("m1", b.base_url, cache=path, sleep=clock.sleep).generate("p")
        OpenAIJudge("m1", a.base_url, cache=path, sleep=clock.sleep).generate("p")  # a hit
        assert (len(a.chat_requests), len(b.chat_requests)) == (2, 1)


def test_the_cache_ignores_json_mode(server, clock, tmp_path):
    path = tmp_path / "cache.sqlite"
    make(server, clock, cache=path, json_mode="schema").generate("p")
    make(server, clock, cache=path, json_mode="none").generate("p")
    assert len(server.chat_requests) == 1


def test_a_failed_call_is_not_cached(server, clock, tmp_path):
    judge = make(server, clock, cache=tmp_path / "c.sqlite", max_retries=0)
    server.queue(error(503))
    with pytest.raises(JudgeError):
        judge.generate("p")
    assert judge.generate("p") == server.default.text
    assert len(server.chat_requests) == 2


# -- threads and concurrency -------------------------------------------------------------------------------
def test_call_info_is_per_thread(server, clock):
    server.responder = lambda req: reply("slow", usage=(7, 7), delay=0.2) if req.prompt == "slow" else None
    judge = make(server, clock)
    seen = {}
    t = threading.Thread(target=lambda: (judge.generate("slow"), seen.update(judge.call_info())))
    t.start()
    server.queue(reply("fast", usage=(3, 3)))
    judge.generate("fast")
    mine = judge.call_info()
    t.join()
    assert (mine["prompt_tokens"], seen["prompt_tokens"]) == (3, 7)


def test_calls_in_flight_never_exceed_max_concurrency(clock):
    with ChatServer(latency=0.05) as srv:
        judge = make(srv, clock, max_concurrency=3)
        threads = [threading.Thread(target=judge.generate, args=(f"p{i}",)) for i in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(srv.chat_requests) == 12 and srv.peak_in_flight == 3


def test_many_threads_hitting_429s_halve_the_limit_and_all_finish(clock):
    answered = {"n": 0}
    lock = threading.Lock()

    def first_eight_throttled(request):
        with lock:
            answered["n"] += 1
            return error(429, retry_after=1) if answered["n"] <= 8 else reply("ok", delay=0.01)

    with ChatServer(responder=first_eight_throttled, latency=0.05) as srv:
        judge = make(srv, clock, max_concurrency=8)
        results = []
        threads = [threading.Thread(target=lambda: results.append(judge.generate("p"))) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert results == ["ok"] * 16
    assert judge.limiter.history[:2] == [8, 4] and judge.limiter.limit < 8
    assert judge.usage()["rate_limited"] == 8 and judge.usage()["failures"] == 0


# -- with the evaluator --------------------------------------------------------------------------------------
SAMPLE = EvalSample("What is the capital of France?", "Paris is the capital of France.",
                    ["France's capital is Paris."], ground_truth="Paris")


def test_a_full_evaluation_makes_three_calls_and_blends(server, clock):
    judge = make(server, clock)  # a server not known to reuse a prompt prefix: the context metrics in one call
    result = RAGEvaluator(judge).evaluate(SAMPLE)
    assert {ms.method for ms in result.metric_scores().values()} == {METHOD_BLEND}
    assert len(server.chat_requests) == 3 and judge.usage()["calls"] == 3


def test_evaluate_dataset_workers_share_the_judges_concurrency_limit(clock):
    with ChatServer(latency=0.02) as srv:
        judge = make(srv, clock, max_concurrency=2)
        report = RAGEvaluator(judge).evaluate_dataset([SAMPLE] * 4, max_workers=4)
        assert len(report.results) == 4 and len(srv.chat_requests) == 12
        assert srv.peak_in_flight == 2 and report.usage["calls"] == 12


def test_a_dead_judge_falls_back_visibly_with_the_http_error(server, clock):
    server.default = error(503, "overloaded")
    judge = make(server, clock, max_retries=1)
    result = RAGEvaluator(judge).evaluate(SAMPLE)
    faith = result.faithfulness
    assert faith.method == METHOD_FALLBACK
    assert "HTTP 503" in faith.error and "after 1 retries" in faith.error
    assert judge.usage()["failures"] == 3  # the grouped call and the two on their own


# -- an injected httpx2 client (no sockets) -------------------------------------------------------------------
def test_an_injected_http_client_is_used_and_left_open():
    seen = []

    def handler(request):
        seen.append(json.loads(request.content))
        body = {"id": "x", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "message": {"role": "assistant", "content": "mocked"},
                             "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 11, "completion_tokens": 2, "total_tokens": 13}}
        return httpx2.Response(200, json=body)

    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    judge = OpenAIJudge("m", "http://judge.invalid/v1", http_client=client)
    assert judge.generate("p") == "mocked"
    assert seen[0]["model"] == "m" and judge.call_info()["prompt_tokens"] == 11
    judge.close()
    assert not client.is_closed  # the caller owns it
    client.close()
