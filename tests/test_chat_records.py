"""Conversation runs in the run history: saved as they finish, read back whole, on SQLite and PostgreSQL."""
from __future__ import annotations

from pathlib import Path

import pytest

from evaluator.store.history import RunStore
from evaluator.io.conversations import load_conversations
from evaluator.model import EvalSample
from evaluator.runs.run import Run, RunConfig
from evaluator.targets import TargetConfig

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "conversations.jsonl"


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request, tmp_path):
    return str(tmp_path / "h.sqlite3") if request.param == "sqlite" else request.getfixturevalue("postgres_url")


def _replayed_run(location: str) -> Run:
    convs = [EvalSample.from_conversation(c) for c in load_conversations(str(SAMPLE)).conversations]
    run = Run.new(RunConfig(), convs, dataset_name="conversations.jsonl", store=RunStore(location),
                              target=TargetConfig("evaluator.demo:chat"))
    run.start().join()
    return run


def test_a_replayed_conversation_run_reads_back_as_it_was_written(location):
    run = _replayed_run(location)
    assert run.status == "finished" and run.report.multi_turn
    store = RunStore(location)  # a fresh connection: what `ragmeter runs` and the dashboard see
    info = store.list_runs()[0]
    assert (info.run_id, info.n_done, info.n_samples, info.status) == (run.run_id, 4, 4, "finished")
    assert "kind" not in info.settings and info.settings["target"]["kind"] == "python"
    assert info.verdict is not None and info.verdict.ok and info.verdict.counts.total == 4
    assert info.overall_mean == pytest.approx(run.report.overall_mean(), abs=1e-4)  # SQL AVG, then rounded

    back = store.load_report(run.run_id)
    assert back.multi_turn
    assert back.to_dict() == run.report.to_dict()  # every turn, its scores, the means over turns
    first = back.results[0]
    assert first.conversation is not None and first.conversation.recorded_by == "evaluator.demo:chat"
    replies = [t.content for t in first.conversation.turns if t.role == "assistant"]
    assert replies[1].startswith("The annual membership costs 79 euros")  # the demo's reply, not the file's
    assert [t.index for t in first.turns] == [1, 3] and "faithfulness" in first.turns[0].result.scores
    assert first.turns[1].result.sample.metadata["conversation_id"] == "c01-prices"
    assert back.results[3].worst_turn().index == run.report.results[3].worst_turn().index


def test_rescore_scores_the_recorded_replies_without_calling_the_target(location):
    run = _replayed_run(location)
    store = RunStore(location)
    again = Run.rescore(store, run.run_id, RunConfig(heuristics="jaccard"))
    assert again.target is None
    again.start().join()
    recorded = [r.conversation for r in store.load_report(run.run_id).results]
    rescored = [r.conversation for r in again.report.results]
    assert [c.to_dict() for c in rescored] == [c.to_dict() for c in recorded]
    info = store.get_run(again.run_id)
    assert info.settings["rescored_from"] == run.run_id
    assert info.settings["heuristics"] == "jaccard" and info.n_done == 4
    assert store.load_report(again.run_id).multi_turn
