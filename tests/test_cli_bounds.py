"""The CLI end to end with text that breaks things and report paths that cannot be written."""
import json
import os

import pytest

from evaluator.cli.command import main
from evaluator.store.history import RunStore
from openai_server import ChatServer, reply

ROWS = [
    {"question": "How long is the warranty?", "answer": "Two years \ud800 from purchase.",
     "contexts": ["The warranty lasts two years from the date of purchase."]},
    {"question": "Can I return it?", "answer": "Yes, within 30 days.",
     "contexts": ["Returns are accepted within 30 days.\x00"]},
    {"question": "Is shipping free?", "answer": "Yes, over 50 euros.", "contexts": ["Shipping is free over 50 euros."]},
]


@pytest.fixture
def history(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite3"
    monkeypatch.setenv("RAGMETER_HISTORY", str(path))
    return path


@pytest.fixture
def data(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")  # \ud800 as an escape
    return path


@pytest.mark.parametrize("suffix", [".json", ".csv", ".html"])
def test_a_lone_surrogate_in_a_dataset_cell_keeps_the_row_and_says_so(data, history, tmp_path, suffix):
    out = tmp_path / f"report{suffix}"
    assert main(["evaluate", str(data), "--offline", "-q", "-o", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "Two years \ufffd from purchase." in text or "Two years \\ufffd from purchase." in text
    (run,) = RunStore(history).list_runs()
    assert run.status == "finished" and run.n_done == 3
    report = RunStore(history).load_report(run.run_id)
    repairs = [r.sample.metadata.get("text_repairs") for r in report.results]
    assert repairs == [["answer: 1 lone surrogate replaced with U+FFFD"],
                       ["contexts: 1 NUL character replaced with U+FFFD"], None]


def test_a_judge_reply_with_a_lone_surrogate_is_scored_and_saved(data, history):
    with ChatServer(default=reply('{"score": 0.9, "reasoning": "fine \ud800"}')) as srv:
        code = main(["evaluate", str(data), "-q", "--model", "m", "--base-url", srv.base_url, "--no-cache",
                     "--metrics", "faithfulness"])
    assert code == 0
    (run,) = RunStore(history).list_runs()
    assert run.status == "finished" and run.n_done == 3
    scores = [r.scores["faithfulness"] for r in RunStore(history).load_report(run.run_id).results]
    assert all("\ufffd" in (s.raw_reply or "") for s in scores)


def test_a_target_answer_with_a_lone_surrogate_is_saved_with_a_note(tmp_path, history):
    (tmp_path / "bad_target.py").write_text("def answer(q):\n    return 'it is \\ud800 fine', ['ctx \\x00']\n")
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "a?"}\n{"question": "b?"}\n')
    assert main(["evaluate", str(questions), "--offline", "-q", "--target", f"{tmp_path / 'bad_target.py'}:answer"]) == 0
    (run,) = RunStore(history).list_runs()
    report = RunStore(history).load_report(run.run_id)
    assert [r.sample.answer for r in report.results] == ["it is \ufffd fine"] * 2
    assert report.results[0].sample.metadata["text_repairs"] == [
        "answer: 1 lone surrogate replaced with U+FFFD", "contexts: 1 NUL character replaced with U+FFFD"]


@pytest.mark.parametrize("where, says", [
    ("folder", "is a folder"),
    ("report.ods", "unknown file type '.ods'; ragmeter writes reports as .csv, .json, .parquet, .xlsx, .html, .htm, "
                   ".pdf files"),  # .xlsx is written since issue 39, the one-page .pdf since issue 46
    ("locked/report.json", "no permission to write in"),
    ("a_file/report.json", "is a file, not a folder"),
])
def test_an_unwritable_report_path_stops_before_any_judge_call(data, tmp_path, capsys, where, says):
    (tmp_path / "folder").mkdir()
    (tmp_path / "locked").mkdir()
    (tmp_path / "a_file").write_text("not a folder")
    os.chmod(tmp_path / "locked", 0o500)
    if where.startswith("locked") and os.access(tmp_path / "locked", os.W_OK):
        pytest.skip("running as a user who may write anywhere (root)")
    try:
        with ChatServer() as srv:
            code = main(["evaluate", str(data), "-q", "--model", "m", "--base-url", srv.base_url, "--no-cache",
                         "-o", str(tmp_path / where)])
            assert srv.chat_requests == []
    finally:
        os.chmod(tmp_path / "locked", 0o700)
    assert code == 2
    err = capsys.readouterr().err
    assert str(tmp_path / where) in err and says in err
