"""How a sample's judge calls go out: the shared prefix and the first call alone on a server that reuses a
prefix, the contexts sent once on one that does not (grouped), and the one-call mode."""
import json

import pytest
from openai_server import ChatServer, reply

from evaluator import EvalSample, RAGEvaluator
from evaluator.scoring.costs import estimate_run
from evaluator.judges.openai import OpenAIJudge
from evaluator.metrics.combined import COMBINED, GROUPED, SEPARATE
from evaluator.metrics.judging import UNPARSEABLE
from evaluator.metrics.prompts import DATA_CLOSE
from evaluator.metrics.rubric import RubricMetric
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, METHOD_LLM

SAMPLE = EvalSample("How long is the refund window?", "Refunds are accepted for 30 days.",
                    ["Refund policy: 30 days from delivery.", "Shipping takes 5 days."], "30 days from delivery.")
ARABIC = EvalSample("ما مدة الاسترجاع؟", "يمكن الاسترجاع خلال ثلاثين يومًا.",
                    ["سياسة الاسترجاع: ثلاثون يومًا من التسليم."], "ثلاثون يومًا.")

# One reply that every built-in metric's reader can score (each reads its own evidence list).
EVERY_PART = {
    "faithfulness": {"claims": [{"claim": "30 days", "verdict": "supported"}], "reasoning": "supported"},
    "answer_relevancy": {"score": 0.9, "reasoning": "direct"},
    "context_precision": {"contexts": [{"index": 1, "verdict": "useful"}, {"index": 2, "verdict": "not useful"}],
                          "reasoning": "first is useful"},
    "context_recall": {"statements": [{"statement": "30 days", "attributed": True}], "reasoning": "found"},
    "answer_correctness": {"TP": ["30 days"], "FP": [], "FN": ["from delivery"], "reasoning": "partly"},
}


# A server that says it is vLLM (its /models list): it reuses a cached prompt prefix, so "auto" asks per metric.
CACHING = "vllm"


def prefix_of(prompt):
    return prompt[:prompt.index(f"\n{DATA_CLOSE}\n")]


@pytest.mark.parametrize("sample", [SAMPLE, ARABIC], ids=["en", "ar"])
def test_a_samples_calls_reach_the_server_with_one_prefix(sample):
    with ChatServer(owned_by=CACHING) as srv:
        RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url)).evaluate(sample)
        prompts = [r.prompt for r in srv.chat_requests]
    assert len(prompts) == 5
    assert len({prefix_of(p) for p in prompts}) == 1
    assert all(sample.contexts[0] in prefix_of(p) and sample.ground_truth in prefix_of(p) for p in prompts)
    assert len(set(prompts)) == 5  # the instructions differ, after the prefix


def test_the_first_call_is_answered_before_the_others_are_sent():
    with ChatServer(latency=0.3, owned_by=CACHING) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        RAGEvaluator(judge).evaluate(SAMPLE, parallel_calls=True)
        arrivals = sorted(r.received for r in srv.chat_requests)
        peak = srv.peak_in_flight
    assert len(arrivals) == 5
    # The server holds each request 0.3 s: the second can only arrive that late if it waited for the first.
    assert arrivals[1] - arrivals[0] >= 0.3
    assert peak >= 2  # then the other four went together


def test_without_parallel_calls_a_samples_calls_go_one_at_a_time():
    with ChatServer(latency=0.05, owned_by=CACHING) as srv:
        RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url)).evaluate(SAMPLE)
        assert srv.peak_in_flight == 1 and len(srv.chat_requests) == 5


def test_combined_mode_scores_every_metric_from_one_call():
    with ChatServer(default=reply(json.dumps(EVERY_PART))) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        result = RAGEvaluator(judge, judge_mode=COMBINED).evaluate(SAMPLE)
        prompt = srv.chat_requests[0].prompt
        assert len(srv.chat_requests) == 1
    scores = result.scores
    assert all(scores[m].method == METHOD_BLEND for m in EVERY_PART)
    assert scores["faithfulness"].llm_score == 1.0 and scores["faithfulness"].scored_from == "verdicts"
    assert scores["context_precision"].llm_score == 1.0  # the useful context ranked first
    assert scores["answer_correctness"].llm_score == pytest.approx(1 / 1.5, abs=1e-4)
    assert scores["answer_relevancy"].llm_score == 0.9 and scores["answer_relevancy"].scored_from == "json"
    assert scores["context_recall"].verdicts == EVERY_PART["context_recall"]["statements"]
    assert all(f'"{m}"' in prompt for m in EVERY_PART) and prompt.index(f"\n{DATA_CLOSE}\n") < prompt.index("###")


def test_a_combined_reply_missing_one_part_falls_back_for_that_metric_only():
    parts = {k: v for k, v in EVERY_PART.items() if k != "context_recall"}
    parts["answer_relevancy"] = {"reasoning": "forgot the score"}
    with ChatServer(default=reply(json.dumps(parts))) as srv:
        result = RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url), judge_mode=COMBINED).evaluate(SAMPLE)
        assert len(srv.chat_requests) == 1
    recall, relevancy = result.scores["context_recall"], result.scores["answer_relevancy"]
    assert recall.method == METHOD_FALLBACK and recall.error == 'The combined reply has no "context_recall" part.'
    assert recall.reasoning.startswith(UNPARSEABLE)
    assert relevancy.method == METHOD_FALLBACK and "No JSON score" in relevancy.error
    assert all(result.scores[m].method == METHOD_BLEND
               for m in ("faithfulness", "context_precision", "answer_correctness"))


def test_combined_mode_reads_a_rubric_and_arabic_samples_too():
    polite = RubricMetric("politeness", "The answer is polite.", scale="1-5")
    body = {"faithfulness": EVERY_PART["faithfulness"], "politeness": {"reasoning": "polite", "score": 5}}
    with ChatServer(default=reply(json.dumps(body))) as srv:
        judge = OpenAIJudge("test-model", base_url=srv.base_url)
        result = RAGEvaluator(judge, metrics=["faithfulness", polite], judge_mode=COMBINED).evaluate(ARABIC)
        prompt = srv.chat_requests[0].prompt
    assert result.scores["politeness"].method == METHOD_LLM and result.scores["politeness"].score == 1.0
    assert result.scores["faithfulness"].method == METHOD_BLEND
    assert "[السؤال]" in prompt and "قيّم البيانات أعلاه" in prompt


def test_the_estimate_follows_the_judge_mode():
    separate = estimate_run([SAMPLE] * 3, "en", judge_mode=SEPARATE)
    grouped = estimate_run([SAMPLE] * 3, "en", judge_mode=GROUPED)
    combined = estimate_run([SAMPLE] * 3, "en", judge_mode=COMBINED)
    assert estimate_run([SAMPLE] * 3, "en") == grouped  # auto, with no server asked: one that bills every token
    assert (separate.calls, grouped.calls, combined.calls) == (15, 9, 3)
    assert combined.prompt_tokens < grouped.prompt_tokens < separate.prompt_tokens
    assert separate.cached_prompt_tokens == 0  # short prompts: below OpenAI's 1,024-token cache minimum
    long = EvalSample(SAMPLE.question, SAMPLE.answer, [" ".join(["refund policy words"] * 600)], SAMPLE.ground_truth)
    cached = estimate_run([long], "en", judge_mode=SEPARATE).cached_prompt_tokens
    assert cached > 0 and cached % 128 == 0  # four later calls read the prefix the first one sent


def test_the_offline_path_is_unchanged_by_the_judge_mode():
    from evaluator import OfflineJudge

    a = RAGEvaluator(OfflineJudge()).evaluate(SAMPLE).scores
    b = RAGEvaluator(OfflineJudge(), judge_mode=COMBINED).evaluate(SAMPLE).scores
    assert {k: v.score for k, v in a.items()} == {k: v.score for k, v in b.items()}


def test_an_unknown_judge_mode_is_refused():
    from evaluator import OfflineJudge

    with pytest.raises(ValueError, match="judge_mode must be one of auto, separate, grouped, combined"):
        RAGEvaluator(OfflineJudge(), judge_mode="together")


# The grouped call's reply holds each context metric's part; the two calls on their own get a reply both read.
ALONE = {"score": 0.9, "TP": ["30 days"], "FP": [], "FN": ["from delivery"], "reasoning": "direct, partly complete"}


def grouped_or_alone(request):
    return reply(json.dumps(EVERY_PART if "\n### " in request.prompt else ALONE))


@pytest.mark.parametrize("owned_by", ["test", "openai"], ids=["unknown server", "OpenAI"])
def test_a_server_that_reuses_no_prefix_gets_the_contexts_once(owned_by):
    with ChatServer(responder=grouped_or_alone, owned_by=owned_by) as srv:
        result = RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url)).evaluate(SAMPLE)
        prompts = [r.prompt for r in srv.chat_requests]
    assert len(prompts) == 3
    assert sum(p.count(SAMPLE.contexts[0]) for p in prompts) == 1  # the contexts are billed once a sample
    grouped = prompts[0]
    assert [line[4:] for line in grouped.splitlines() if line.startswith("### ")] == [
        "faithfulness", "context_precision", "context_recall"]
    assert all("[CONTEXTS]" not in p and SAMPLE.answer in p for p in prompts[1:])
    assert "[REFERENCE]" not in prompts[1] and SAMPLE.ground_truth in prompts[2]  # each carries only its fields
    scores = result.scores
    assert all(scores[m].method == METHOD_BLEND for m in EVERY_PART)
    assert scores["context_recall"].verdicts == EVERY_PART["context_recall"]["statements"]
    assert scores["answer_relevancy"].llm_score == 0.9
    assert scores["answer_correctness"].llm_score == pytest.approx(1 / 1.5, abs=1e-4)


def test_separate_mode_still_asks_each_metric_on_such_a_server():
    with ChatServer() as srv:
        RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url), judge_mode=SEPARATE).evaluate(SAMPLE)
        prompts = [r.prompt for r in srv.chat_requests]
    assert len(prompts) == 5
    assert "[REFERENCE]" not in prompts[0]  # no cache to fill: faithfulness's prompt carries only what it reads


def test_grouped_calls_fall_back_one_metric_at_a_time():
    parts = {k: v for k, v in EVERY_PART.items() if k != "context_precision"}
    with ChatServer(responder=lambda r: reply(json.dumps(parts if "\n### " in r.prompt else ALONE))) as srv:
        result = RAGEvaluator(OpenAIJudge("test-model", base_url=srv.base_url), judge_mode=GROUPED).evaluate(SAMPLE)
    precision = result.scores["context_precision"]
    assert precision.method == METHOD_FALLBACK and precision.error == 'The combined reply has no "context_precision" part.'
    assert result.scores["faithfulness"].method == METHOD_BLEND and result.scores["context_recall"].method == METHOD_BLEND


def test_a_judge_that_does_not_say_is_asked_as_before():
    from fakes import ScriptedJudge

    judge = ScriptedJudge()
    RAGEvaluator(judge).evaluate(SAMPLE)
    assert judge.calls == 5


def test_a_plugin_judge_that_bills_every_token_gets_the_contexts_once():
    """A plugin's judge can say its service reuses no prefix; through the retry wrapper every run gets, too."""
    from fakes import ScriptedJudge

    from evaluator.judges.resilient import ResilientJudge

    class Billed(ScriptedJudge):
        def caches_prefix(self, prompt_tokens):
            return False

    backend = Billed()
    result = RAGEvaluator(ResilientJudge(backend, scope=("gateway", "m", 0.0))).evaluate(SAMPLE)
    assert backend.calls == 3 and sum(p.count(SAMPLE.contexts[0]) for p in backend.prompts) == 1
    assert all(result.scores[m].method == METHOD_BLEND for m in EVERY_PART)
