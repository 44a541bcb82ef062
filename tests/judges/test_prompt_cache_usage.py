"""Prompt-cache accounting: cached prompt tokens read from replies, counted in usage and shown."""
from openai_server import ChatServer, reply

from evaluator import EvalSample, RAGEvaluator
from evaluator.scoring.costs import usage_line
from evaluator.judges.openai import OpenAIJudge

SAMPLE = EvalSample("How long is the refund window?", "30 days.", ["Refund policy: 30 days."], "30 days.")


def test_cached_tokens_are_read_from_each_reply_and_counted_in_the_run():
    with ChatServer(owned_by="vllm") as srv:  # a server that reuses the prefix: five calls, four of them cached
        srv.queue(reply('{"score": 0.9}', usage=(1200, 10, 0)),
                  *[reply('{"score": 0.9}', usage=(1210, 10, 1152)) for _ in range(5)])
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        report = RAGEvaluator(judge).evaluate_dataset([SAMPLE])
        judge.generate("One more question.")  # a run scores on its pool's threads; this call is this thread's
        assert judge.call_info()["cached_tokens"] == 1152
    assert report.usage["cached_prompt_tokens"] == 4 * 1152
    assert report.usage["prompt_tokens"] == 1200 + 4 * 1210
    assert "prompt (4608 cached) + 50 completion tokens" in usage_line(report.usage, None, None)


def test_a_server_that_reports_no_cache_counts_none_and_the_line_says_nothing():
    with ChatServer(default=reply('{"score": 0.9}', usage=(100, 5))) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        judge.generate("a prompt")
        usage = judge.usage()
        body = srv.chat_requests[0].body
    assert usage["cached_prompt_tokens"] == 0 and "cached" not in usage_line(usage, None, None)
    assert "cache_prompt" not in body and "id_slot" not in body  # not llama.cpp: no unknown fields sent


def test_llama_cpp_is_recognised_by_its_timings_and_asked_to_cache_prompts():
    llama = reply('{"score": 0.9}', usage=(300, 5), timings={"cache_n": 240, "prompt_n": 60})
    with ChatServer(default=llama) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        judge.generate("first")
        judge.generate("second")
        first, second = (r.body for r in srv.chat_requests)
        assert judge.usage()["cached_prompt_tokens"] == 480  # timings.cache_n when usage has no details
    assert "cache_prompt" not in first and second["cache_prompt"] is True


def test_configured_extra_body_fields_go_with_every_request():
    with ChatServer() as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url, extra_body={"cache_prompt": True, "id_slot": 0})
        judge.generate("one")
        body = srv.chat_requests[0].body
    assert (body["cache_prompt"], body["id_slot"]) == (True, 0)
    assert "cache_prompt" not in judge.request_body("one")  # a Batch API line carries OpenAI's fields only
