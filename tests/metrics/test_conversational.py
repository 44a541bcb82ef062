"""Conversation scoring: turns judged in context, conversation-level metrics, means over turns and conversations."""
from __future__ import annotations

from pathlib import Path

from fakes import ScriptedJudge

from evaluator import RAGEvaluator
from evaluator.conversation import Conversation, Turn
from evaluator.io.conversations import load_conversations
from evaluator.judges.offline import OfflineJudge
from evaluator.model import EvalSample

SAMPLE = Path(__file__).resolve().parents[2] / "sample_data" / "conversations.jsonl"


def evaluate_conversations(evaluator, conversations):
    """Conversations scored as rows, by the one scoring pass every dataset goes through."""
    return evaluator.evaluate_dataset([EvalSample.from_conversation(c) for c in conversations])


def _shipping() -> Conversation:
    return Conversation("ship", [
        Turn("user", "Which kettle has the longest warranty?"),
        Turn("assistant", "The steel kettle, three years.", contexts=["Steel kettle: three-year warranty."]),
        Turn("user", "And shipping to Canada?"),
        Turn("assistant", "It ships to Canada for 12 dollars.", contexts=["Canada shipping: 12 dollars."])],
        scenario="Buy a kettle shipped to Canada", expected_outcome="The user knows the kettle ships to Canada.")


def test_a_follow_up_is_judged_with_the_conversation_so_far():
    judge = ScriptedJudge()
    report = evaluate_conversations(RAGEvaluator(judge, metrics=["answer_relevancy"]), [_shipping()])
    relevancy = [p for p in judge.prompts if "And shipping to Canada?" in p and "ANSWER" in p]
    assert relevancy and "Which kettle has the longest warranty?" in relevancy[0]
    assert "Conversation so far:" in relevancy[0]
    result = report.results[0]
    assert [t.index for t in result.turns] == [1, 3]
    assert result.turns[1].result.scores["answer_relevancy"].method == "llm_blend"


def test_judge_calls_per_turn_and_per_conversation():
    judge = ScriptedJudge()
    evaluate_conversations(RAGEvaluator(judge, metrics=["faithfulness", "answer_relevancy"]), [_shipping()])
    # 2 turns x 2 metrics, then knowledge_retention and goal_completion once each (no tool calls: no task_completion)
    assert judge.calls == 6
    assert sum("keeps what the user told it" in p for p in judge.prompts) == 1
    assert sum("user's GOAL" in p for p in judge.prompts) == 1


def test_conversation_scores_mean_over_turns_and_report_means_over_conversations():
    judge = ScriptedJudge(lambda p: '{"score": 1.0, "reasoning": "ok"}' if "Canada?" in p.split("[ANSWER]")[0]
                          else '{"score": 0.0, "reasoning": "no"}')
    other = Conversation("short", [Turn("user", "Hi there, kettle?"), Turn("assistant", "Kettles are here.")])
    report = evaluate_conversations(RAGEvaluator(judge, metrics=["answer_relevancy"]), [_shipping(), other])
    first = report.results[0].scores["answer_relevancy"]
    assert first.method == "from_turns" and "2/2 assistant turns" in first.reasoning
    turn_values = [t.result.scores["answer_relevancy"].score for r in report.results for t in r.turns]
    assert report.turn_mean_scores()["answer_relevancy"] == round(sum(turn_values) / 3, 4)
    per_conv = [r.scores["answer_relevancy"].score for r in report.results]
    assert report.mean_scores()["answer_relevancy"] == round(sum(per_conv) / 2, 4)
    assert report.to_dict()["turn_scored"]["answer_relevancy"] == "3/3"
    assert report.results[0].scores["conversation_relevancy"].reasoning.startswith("1/2 assistant turns")


def test_offline_knowledge_retention_catches_the_forgetful_assistant():
    convs = load_conversations(SAMPLE).conversations
    report = evaluate_conversations(RAGEvaluator(OfflineJudge()), convs)
    by_id = {r.sample_id: r for r in report.results}
    forgot = by_id["c04-forgets-membership"].scores["knowledge_retention"]
    assert forgot.score < 1.0 and "Do you have an annual membership?" in forgot.reasoning
    assert by_id["c01-prices"].scores["knowledge_retention"].score == 1.0
    assert "cannot see contradictions" in by_id["c01-prices"].scores["knowledge_retention"].reasoning
    goal = by_id["c01-prices"].scores["goal_completion"]
    assert goal.method == "offline" and "not whether the goal was met" in goal.reasoning
    tools = by_id["c03-stolen-tool"].scores
    assert tools["tool_call_recall"].score == 1.0 and "task_completion" in tools
    assert "tool_call_recall" not in by_id["c01-prices"].scores  # agent metrics only where tools are involved


def test_goal_completion_is_skipped_without_a_goal():
    conv = Conversation("x", [Turn("user", "hi"), Turn("assistant", "hello")])
    report = evaluate_conversations(RAGEvaluator(OfflineJudge()), [conv])
    goal = report.results[0].scores["goal_completion"]
    assert goal.skipped and "No scenario or expected_outcome" in goal.reasoning


def test_arabic_conversations_get_arabic_prompts():
    judge = ScriptedJudge()
    conv = load_conversations(SAMPLE).conversations[1]
    evaluate_conversations(RAGEvaluator(judge, metrics=["answer_relevancy"]), [conv])
    assert any("اقرأ المحادثة" in p and "[المحادثة]" in p for p in judge.prompts)
    assert any("المحادثة حتى الآن:" in p for p in judge.prompts)


def test_not_asked_turns_are_skipped_with_the_reason_and_cost_no_call():
    conv = Conversation("k", [Turn("user", "a question"), Turn("assistant", "", error="HTTP 500"),
                              Turn("user", "next", not_asked=True), Turn("assistant", "", not_asked=True)])
    judge = ScriptedJudge()
    report = evaluate_conversations(RAGEvaluator(judge, metrics=["answer_relevancy"]), [conv])
    turns = report.results[0].turns
    assert "HTTP 500" in turns[0].result.scores["answer_relevancy"].reasoning
    assert turns[1].result.scores["answer_relevancy"].reasoning.startswith("Not asked")
    assert not any("next" in p.split("[ANSWER]")[0][-20:] for p in judge.prompts if "[ANSWER]" in p)


def test_rubric_levels_from_toml_score_turns_or_the_whole_conversation():
    from evaluator.metrics.rubric import parse_rubrics

    rubrics = parse_rubrics('[polite]\ncriteria = "Each reply is polite."\n'
                            '[resolved]\ncriteria = "The chat ends with the problem solved."\nlevel = "conversation"\n')
    assert rubrics[1].to_dict()["level"] == "conversation"
    judge = ScriptedJudge()
    report = evaluate_conversations(RAGEvaluator(judge, metrics=rubrics), [_shipping()])
    result = report.results[0]
    assert all("polite" in t.result.scores and "resolved" not in t.result.scores for t in result.turns)
    assert result.scores["resolved"].method == "llm" and result.scores["polite"].method == "from_turns"
    whole = [p for p in judge.prompts if "problem solved" in p]
    assert len(whole) == 1 and "Which kettle has the longest warranty?" in whole[0]
