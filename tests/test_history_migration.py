"""A history written by ragmeter 2f405f4 (before every row was a conversation) still opens, lists, reports,
resumes and re-scores, single-turn and conversation runs alike.

tests/fixtures/history_2f405f4.sqlite3 was written by that commit's CLI: `evaluate faq.jsonl --offline`
(5 rows) and `evaluate sample_data/conversations.jsonl --target evaluator.demo:chat --offline` (4
conversations), then each run's last result deleted and the run marked stopped, as a killed run leaves it.
"""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.runs.run import Run, RunConfig
from evaluator.store.history import RunStore

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "history_2f405f4.sqlite3"


@pytest.fixture
def store(tmp_path):
    copy = tmp_path / "old.sqlite3"
    shutil.copyfile(FIXTURE, copy)
    return RunStore(copy)


def _runs(store):
    runs = {info.dataset_name: info for info in store.list_runs()}
    return runs["faq.jsonl"], runs["conversations.jsonl"]


def test_an_old_history_opens_migrated_and_lists_both_runs(store, capsys, monkeypatch):
    faq, chats = _runs(store)
    assert (faq.status, faq.n_done, faq.n_samples) == ("stopped", 4, 5)
    assert (chats.status, chats.n_done, chats.n_samples) == ("stopped", 3, 4)
    assert "kind" not in chats.settings and chats.settings["target"]["function"] == "evaluator.demo:chat"
    applied = {name for (name,) in store.query("SELECT name FROM _migrations")}
    assert "m007_one_row_type" in applied
    monkeypatch.setenv("RAGMETER_HISTORY", str(store.path))
    assert main(["runs"]) == 0
    listed = capsys.readouterr().out
    assert "4/5" in listed and "3/4" in listed and "conversations.jsonl" in listed


def test_old_reports_read_back_with_their_turns(store):
    faq, chats = _runs(store)
    single = store.load_report(faq.run_id)
    assert not single.multi_turn and len(single.results) == 4
    assert single.turn_mean_scores() == single.mean_scores()  # a single-turn row is its own one turn
    report = store.load_report(chats.run_id)
    assert report.multi_turn and [r.sample_id for r in report.results] == ["c01-prices", "c02-ebike-ar",
                                                                           "c03-stolen-tool"]
    first = report.results[0]
    assert first.conversation.recorded_by == "evaluator.demo:chat" and [t.index for t in first.turns] == [1, 3]
    assert "faithfulness" in first.turns[0].result.scores and "knowledge_retention" in first.scores
    assert "Conversation report: 3 conversations" in report.format_report()


def test_old_runs_resume_without_asking_the_target_again(store):
    faq, chats = _runs(store)
    before = store.load_report(chats.run_id).results[0].to_dict()
    for info in (faq, chats):
        run = Run.resume(store, info.run_id)
        assert run.target is None  # the conversations were all recorded: nothing to ask
        run.start().join()
        assert run.status == "finished" and run.done == info.n_samples
    report = store.load_report(chats.run_id)
    assert len(report.results) == 4 and report.results[3].sample_id == "c04-forgets-membership"
    assert report.results[3].turns and report.results[0].to_dict() == before
    assert store.get_run(chats.run_id).verdict.ok


def test_old_runs_rescore_with_another_setting(store):
    faq, chats = _runs(store)
    for info, rows in ((faq, 5), (chats, 4)):  # every answered row: the last one was saved, not scored
        run = Run.rescore(store, info.run_id, RunConfig(heuristics="jaccard", language="en")).start()
        run.join()
        assert run.status == "finished" and len(run.report.results) == rows
        assert store.get_run(run.run_id).settings["rescored_from"] == info.run_id
    # The Arabic conversation's follow-up is judged in the run's language (en), not detected from its text.
    follow_up = run.report.results[1].turns[1].result.sample.question
    assert follow_up.startswith("Conversation so far:")
    assert store.load_report(run.run_id).results[1].turns[1].result.sample.question == follow_up  # read back so
