"""A conversation file runs with the flags a single-turn file runs with: one row type, one run path.

--dry-run, --labels, --mapping, --target-workers, --batch, combined judge mode and the review desk;
the Ray engine is in test_ray_engine.py, resume and rescore in test_chat_runs.py and
test_history_migration.py.
"""
from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path

import pytest

from batch_server import BatchServer, prompt_of
from fakes import ScriptedJudge

from evaluator.cli.command import main
from evaluator.conversation import Conversation, Turn
from evaluator.errors import JudgeError, JudgeFailed
from evaluator.judges.health import HealthPolicy
from evaluator.io.conversations import load_conversations
from evaluator.judges.openai import OpenAIJudge
from evaluator.judges.offline import OfflineJudge
from evaluator.model import EvalSample
from evaluator.review.queue import review_queue
from evaluator.scoring.batching import batch_client, evaluate_batch
from evaluator.scoring.costs import estimate_run
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.store.history import RunStore
from evaluator.store.reviews import Review, ReviewStore
from evaluator.targets import FunctionTarget
from evaluator.targets.pipeline import evaluate_with_target

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data" / "conversations.jsonl"


def _rows():
    return [EvalSample.from_conversation(c) for c in load_conversations(SAMPLE).conversations]


def _shipping() -> EvalSample:
    return EvalSample.from_conversation(Conversation("ship", [
        Turn("user", "Which kettle has the longest warranty?"),
        Turn("assistant", "The steel kettle, three years.", contexts=["Steel kettle: three-year warranty."]),
        Turn("user", "And shipping to Canada?"),
        Turn("assistant", "It ships to Canada for 12 dollars.", contexts=["Canada shipping: 12 dollars."])],
        scenario="Buy a kettle shipped to Canada", expected_outcome="The user knows the kettle ships to Canada."))


def test_the_estimate_counts_the_calls_a_conversation_makes():
    for mode in ("separate", "combined"):
        judge = ScriptedJudge()
        RAGEvaluator(judge, judge_mode=mode).evaluate_dataset([_shipping()])
        est = estimate_run([_shipping()], metrics=None, judge_mode=mode)
        assert est.calls == judge.calls and est.samples == 1, mode


def test_dry_run_on_a_conversation_file_prints_the_estimate(capsys):
    assert main(["evaluate", str(SAMPLE), "--dry-run", "--model", "gpt-4o-mini", "--no-history"]) == 0
    est = json.loads(capsys.readouterr().out)
    assert est["samples"] == 4 and est["calls"] > 4 * 2


def test_combined_mode_asks_one_call_per_turn_for_its_judged_metrics():
    separate, combined = ScriptedJudge(), ScriptedJudge('{"faithfulness": {"score": 0.9, "reasoning": "ok"}, '
                                                        '"answer_relevancy": {"score": 0.7, "reasoning": "ok"}}')
    metrics = ["faithfulness", "answer_relevancy"]
    RAGEvaluator(separate, metrics=metrics).evaluate_dataset([_shipping()])
    report = RAGEvaluator(combined, metrics=metrics, judge_mode="combined").evaluate_dataset([_shipping()])
    assert combined.calls == separate.calls - 2  # one call per turn instead of two
    turn = report.results[0].turns[1].result.scores
    assert (turn["faithfulness"].llm_score, turn["answer_relevancy"].llm_score) == (0.9, 0.7)


def test_labels_on_a_conversation_file_report_agreement(tmp_path, capsys):
    convs = [dict(json.loads(line), human_goal_completion=label) for line, label in
             zip(SAMPLE.read_text(encoding="utf-8").splitlines(), (1, 1, 0, 0))]
    data = tmp_path / "labelled.jsonl"
    data.write_text("\n".join(json.dumps(c, ensure_ascii=False) for c in convs) + "\n", encoding="utf-8")
    assert main(["evaluate", str(data), "--offline", "--labels", "-q", "--no-history"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("metric "):]
    assert "goal_completion" in table and "binary" in table


def test_mapping_names_a_conversation_file_s_own_columns(tmp_path, capsys):
    table = tmp_path / "chats.csv"
    table.write_text("chat,n,speaker,text\nk,1,user,Which kettle?\nk,2,assistant,The steel one.\n"
                     "k,3,user,Shipping to Canada?\nk,4,assistant,Yes: 12 dollars.\n", encoding="utf-8")
    mapping = ["--mapping", "conversation_id=chat", "--mapping", "turn=n", "--mapping", "role=speaker",
               "--mapping", "content=text"]
    assert main(["evaluate", str(table), "--offline", "-q", "--no-history", "-o", str(tmp_path / "r.json"),
                 *mapping]) == 0
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert data["num_conversations"] == 1 and data["num_turns_scored"] == 2
    # A single-turn field means nothing for a conversation: refused, naming the fields it has.
    assert main(["evaluate", str(SAMPLE), "--offline", "--mapping", "question=prompt", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "'question', which a conversation does not have" in err and "conversation_id, turn, role" in err


def test_target_workers_replay_conversations_at_once_and_the_judge_overlaps():
    both = threading.Barrier(2, timeout=10)  # passes only when two conversations are being replayed at once
    first_turns = {"How much is a day pass?", "كم تكلفة الدراجة الكهربائية؟"}

    met = []

    def bot(messages):
        if len(messages) == 1 and messages[0]["content"] in first_turns:
            both.wait()
            met.append(messages[0]["content"])
        return {"answer": f"reply to {messages[-1]['content']}", "contexts": ["ctx"]}

    rows = _rows()[:2]
    saved = []
    report = evaluate_with_target(RAGEvaluator(OfflineJudge()), rows, FunctionTarget(bot), target_workers=2,
                                  spec="tests:bot", on_answer=lambda i, s: saved.append((i, s.answered)))
    assert sorted(met) == sorted(first_turns) and not any(r.sample.target_error for r in report.results)
    assert sorted(saved) == [(0, True), (1, True)]  # each replay saved before it was scored
    assert [r.conversation.recorded_by for r in report.results] == ["tests:bot", "tests:bot"]
    assert report.target_stats()["calls"] == sum(len(r.turns) for r in report.results)


def test_a_conversation_batch_scores_exactly_like_the_direct_path():
    def script(prompt):
        return json.dumps({"score": (sum(prompt.encode()) % 89) / 88, "reasoning": "scripted"})

    direct_judge = ScriptedJudge(script)
    # The batch asks as on a server that reuses no prompt prefix (grouped): the direct path the same way.
    direct = RAGEvaluator(direct_judge, judge_mode="grouped").evaluate_dataset(_rows())
    with BatchServer(responder=lambda body: script(prompt_of(body)), polls=2) as srv:
        with OpenAIJudge("test-model", base_url=srv.base_url, api_key="sk-test", timeout=5.0) as judge:
            ev = RAGEvaluator(judge)
            report = evaluate_batch(ev, list(enumerate(_rows())), batch_client(ev, poll_interval=0.01))
        sent = len(srv.input_lines())
    assert sent == direct_judge.calls
    assert [r.to_dict()["turns"] for r in report.results] == [r.to_dict()["turns"] for r in direct.results]
    assert report.mean_scores() == direct.mean_scores()


def test_the_review_desk_reviews_a_conversation_and_exports_it_as_one(tmp_path, capsys):
    assert main(["evaluate", str(SAMPLE), "--offline", "-q"]) == 0
    store = ReviewStore(RunStore())
    (info,) = store.runs.list_runs()
    results = store.runs.indexed_results(info.run_id)
    worst = review_queue(results, "knowledge_retention")[0]
    assert results[worst][1].sample_id == "c04-forgets-membership"
    store.record(Review(info.run_id, worst, "knowledge_retention", "disagree", "ana", corrected=0.0,
                        judge_score=results[worst][1].scores["knowledge_retention"].score))
    out = tmp_path / "labels.jsonl"
    assert main(["review", "export", info.run_id, "-o", str(out)]) == 0
    capsys.readouterr()
    (row,) = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert row["conversation_id"] == "c04-forgets-membership" and row["human_knowledge_retention"] == 0.0
    assert main(["review", "import", info.run_id, str(out), "--reviewer", "bo"]) == 0
    (bo,) = store.reviews(info.run_id, reviewer="bo")
    assert (bo.index, bo.metric, bo.human_score) == (worst, "knowledge_retention", 0.0)


def test_one_judge_health_window_spans_every_conversation_of_the_pass():
    rows = [dataclasses.replace(_shipping(), sample_id=f"c{i}") for i in range(8)]
    ok = '{"score": 0.8, "reasoning": "ok"}'
    judge = ScriptedJudge(JudgeError("HTTP 500 after 3 retries", kind="exhausted"), queue=[ok] * 12)
    evaluator = RAGEvaluator(judge, metrics=["answer_relevancy"], judge_health=HealthPolicy(window=10))
    kept = []
    with pytest.raises(JudgeFailed, match="failed 6 of its last 10 calls") as stopped:
        evaluator.evaluate_dataset(rows, on_result=lambda i, r: kept.append(i))
    # 4 calls a conversation: 3 answered, the 4th fell back, the 6th failure (c4's 2nd call) stopped the pass.
    assert kept == [0, 1, 2, 3] and [r.sample_id for r in stopped.value.report.results] == ["c0", "c1", "c2", "c3"]
    assert judge.calls == 18 and stopped.value.report.usage["stopped_on_judge_failure"]
