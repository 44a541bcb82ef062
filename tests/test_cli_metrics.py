"""The CLI's metric choices: --metrics, --rubrics FILE.toml, --repeats K and --fail-under on any of them."""
import json

import pytest

from evaluator.cli.command import main
from evaluator.store.history import RunStore
from openai_server import ChatServer, reply

ROWS = [
    {"question": f"Question {i}?", "answer": f"Answer {i} about refunds.", "contexts": [f"Context {i} on refunds."],
     "ground_truth": f"Reference {i}.", "sample_id": f"s{i}"} for i in range(3)
]
RUBRICS = '''
[politeness]
criteria = "The answer is polite and professional: no sarcasm, no blame."
fields = ["question", "answer"]
scale = "1-5"
'''


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in ROWS) + "\n", encoding="utf-8")
    (tmp_path / "rubrics.toml").write_text(RUBRICS, encoding="utf-8")
    return path


def judged(request):
    """A 1-5 score of 2 for the rubric (0.25 on 0-1), 0.9 for everything else."""
    return reply('{"reasoning": "curt", "score": 2}' if "CRITERION" in request.prompt else '{"score": 0.9}')


def run(data, *extra, server=None):
    args = ["evaluate", str(data), "-q", "--no-cache", *extra]
    if server is not None:
        args += ["--model", "judge", "--base-url", server.base_url]
    return main(args)


# The loopback server is not known to reuse a prompt prefix, so "auto" asks the three metrics that read the
# contexts in one call; `--judge-mode separate` asks each metric on its own.
@pytest.mark.parametrize("extra, calls_per_sample", [
    ((), 3),
    (("--judge-mode", "separate"), 5),
    (("--metrics", "faithfulness,answer_relevancy"), 2),
    (("--rubrics", "{dir}/rubrics.toml"), 4),
    (("--metrics", "faithfulness,politeness", "--rubrics", "{dir}/rubrics.toml"), 2),
    (("--metrics", "politeness", "--rubrics", "{dir}/rubrics.toml", "--repeats", "3"), 3),
    (("--repeats", "2"), 6),
])
def test_judge_calls_per_sample_follow_metrics_rubrics_and_repeats(data, extra, calls_per_sample):
    extra = [e.format(dir=data.parent) for e in extra]
    with ChatServer(responder=judged) as srv:
        assert run(data, *extra, server=srv) == 0
        assert len(srv.chat_requests) == len(ROWS) * calls_per_sample


def test_a_rubric_reaches_the_report_json_and_fail_under(data, tmp_path, capsys):
    out = tmp_path / "report.json"
    with ChatServer(responder=judged) as srv:
        code = run(data, "--rubrics", str(tmp_path / "rubrics.toml"), "--repeats", "2", "-o", str(out),
                   "--fail-under", "politeness=0.5", server=srv)
    printed = capsys.readouterr()
    assert code == 1 and "FAIL politeness: 0.2500 < 0.5" in printed.err
    assert "politeness" in printed.out and "Judge noise" in printed.out
    report = json.loads(out.read_text())
    assert report["mean_scores"]["politeness"] == 0.25
    assert report["records"][0]["metrics"]["politeness"]["llm_scores"] == [0.25, 0.25]
    assert report["settings"]["rubrics"]["politeness"]["scale"] == "1-5" and report["settings"]["repeats"] == 2


def test_offline_a_rubric_is_skipped_and_its_threshold_says_why(data, tmp_path, capsys):
    code = run(data, "--rubrics", str(tmp_path / "rubrics.toml"), "--fail-under", "politeness=0.5")
    err = capsys.readouterr().err
    assert code == 1 and "politeness: no sample could be scored" in err


@pytest.mark.parametrize("extra, message", [
    (("--metrics", "faithfulness,politness"), "unknown metric 'politness'; known metrics: faithfulness"),
    (("--metrics", ","), "--metrics is empty"),
    (("--repeats", "0"), "--repeats 0"),
    (("--metrics", "faithfulness", "--fail-under", "context_recall=0.5"), "not chosen for this run"),
    (("--rubrics", "{dir}/missing.toml"), "missing.toml does not exist"),
    (("--rubrics", "{dir}/bad.toml"), "bad.toml: not valid TOML"),
])
def test_bad_metric_choices_exit_two_with_one_clear_line(data, extra, message, capsys):
    (data.parent / "bad.toml").write_text('[p]\ncriteria = "x"\nscale = 1-5\n', encoding="utf-8")
    extra = [e.format(dir=data.parent) for e in extra]
    assert run(data, *extra) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_dry_run_counts_the_chosen_calls(data, tmp_path, capsys):
    code = main(["evaluate", str(data), "--dry-run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                 "--metrics", "faithfulness,politeness", "--rubrics", str(tmp_path / "rubrics.toml"),
                 "--repeats", "2"])
    assert code == 0 and json.loads(capsys.readouterr().out)["calls"] == len(ROWS) * 2 * 2


def test_the_history_keeps_the_rubrics_and_a_resume_scores_them(data, tmp_path):
    with ChatServer(responder=judged) as srv:
        assert run(data, "--metrics", "politeness", "--rubrics", str(tmp_path / "rubrics.toml"), server=srv) == 0
    store = RunStore(str(tmp_path / "history.sqlite3"))
    info = store.list_runs()[0]
    assert info.settings["metrics"] == ["politeness"] and "criteria" in info.settings["rubrics"]["politeness"]
    report = store.load_report(info.run_id)
    assert report.metric_names() == ["politeness"] and report.mean_scores()["politeness"] == 0.25


def test_temperature_reaches_the_judge_and_the_stored_settings(data, tmp_path):
    with ChatServer(responder=judged) as srv:
        assert run(data, "--metrics", "answer_relevancy", "--repeats", "2", "--temperature", "0.7", server=srv) == 0
        assert {r.body["temperature"] for r in srv.chat_requests} == {0.7}
    assert RunStore(str(tmp_path / "history.sqlite3")).list_runs()[0].settings["temperature"] == 0.7


def test_retrieval_metrics_from_the_cli_and_a_bare_name_in_fail_under(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    path = tmp_path / "ids.csv"
    path.write_text('sample_id,question,answer,expected_docs,retrieval_ids\n'
                    's1,Q1?,A1.,d1,"d2; d1"\ns2,Q2?,A2.,d5,"d5"\n', encoding="utf-8")
    out = tmp_path / "report.json"
    code = main(["evaluate", str(path), "-q", "--metrics", "mrr,hit@1", "--fail-under", "mrr=0.8", "-o", str(out)])
    assert code == 1  # mrr@5 = (1/2 + 1) / 2 = 0.75, below 0.8
    assert "mrr@5" in capsys.readouterr().err
    rows = json.loads(out.read_text(encoding="utf-8"))["records"]
    assert [r["metrics"]["hit@1"]["score"] for r in rows] == [0.0, 1.0]
    assert main(["evaluate", str(path), "-q", "--metrics", "mrr", "--fail-under", "mrr@5=0.7"]) == 0
