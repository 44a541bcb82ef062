"""`ragmeter evaluate --target …`: the demo end to end, an HTTP endpoint with a secret header,
resume without asking the target again, re-score with another judge, and the usage errors."""
import csv
import io
import json
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.store.history import RunStore
from evaluator.model import EvalSample
from openai_server import ChatServer
from target_server import TargetServer

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = ROOT / "sample_data" / "demo_questions.jsonl"
CONTRACT = ("answer", "contexts", "tool_calls", "target_latency_ms", "target_error")


@pytest.fixture
def history(tmp_path, monkeypatch):
    path = tmp_path / "history.sqlite3"
    monkeypatch.setenv("RAGMETER_HISTORY", str(path))
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", str(tmp_path / "cache.sqlite3"))
    return path


def test_the_demo_pipeline_offline_in_one_command(history, tmp_path, capsys):
    out = tmp_path / "demo.json"
    code = main(["evaluate", str(QUESTIONS), "--target", "evaluator.demo:rag_answer", "--offline", "-q", "-o", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "expected_doc_recall" in printed and "target: 10 calls, 0 failed, p50" in printed
    data = json.loads(out.read_text())
    assert data["target"]["calls"] == 10 and data["settings"]["target"]["function"] == "evaluator.demo:rag_answer"
    record = data["records"][0]
    assert all(key in record for key in CONTRACT) and record["target_error"] is None
    assert record["answer"].startswith("A day pass costs 9 euros") and record["contexts"][0].startswith("Day passes\n")
    [run] = RunStore(history).list_runs()
    assert run.settings["target"]["kind"] == "python" and run.n_done == 10


def answer_service(req):
    if req["query"] == "How old do riders have to be?":
        return 503, {"error": "index rebuilding"}
    return 200, {"data": {"reply": {"text": f"Reply to {req['query']}"}, "hits": [{"passage": "p1"}]}}


def http_args(srv):
    return ["--target", srv.url, "--target-body", '{"query": "{question}", "top_k": 3}',
            "--target-header", "Authorization: Bearer ${RAG_TOKEN}", "--target-field", "answer=data.reply.text",
            "--target-field", "contexts=data.hits[].passage", "--target-timeout", "5"]


@pytest.mark.slow
def test_http_target_keeps_failed_rows_and_never_writes_the_header_value(history, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "tok-SECRET-42")
    outputs = [tmp_path / f"r.{ext}" for ext in ("json", "csv", "html")]
    with TargetServer(answer_service) as srv:
        for out in outputs:
            assert main(["evaluate", str(QUESTIONS), *http_args(srv), "-q", "-o", str(out)]) == 4  # a row unscored
    assert {h["authorization"] for _, h, _ in srv.requests} == {"Bearer tok-SECRET-42"}
    printed = capsys.readouterr().out
    assert "warning: 1/10 target calls failed" in printed and "HTTP 503" in printed
    data = json.loads(outputs[0].read_text())
    failed = [r for r in data["records"] if r["target_error"]]
    assert len(data["records"]) == 10 and [r["question"] for r in failed] == ["How old do riders have to be?"]
    assert failed[0]["target_error"].startswith("HTTP 503 Service Unavailable")
    assert all(m["skipped"] for m in failed[0]["metrics"].values())
    assert data["settings"]["target"]["header_names"] == ["Authorization"]
    assert data["settings"]["target"]["fields"] == {"answer": "data.reply.text", "contexts": "data.hits[].passage"}
    header = next(csv.reader(io.StringIO(outputs[1].read_text())))
    assert all(column in header for column in CONTRACT)
    for path in [*outputs, history]:
        assert b"tok-SECRET-42" not in path.read_bytes(), path


def test_resume_asks_the_target_only_for_unanswered_rows(history, monkeypatch):
    monkeypatch.setenv("RAG_TOKEN", "t")
    with TargetServer(answer_service) as srv:
        from evaluator.targets import TargetConfig

        store = RunStore(history)
        config = TargetConfig.from_options(srv.url, body='{"query": "{question}"}',
                                           headers=["Authorization: Bearer ${RAG_TOKEN}"],
                                           fields=["answer=data.reply.text"])
        samples = [EvalSample(q, "", [], sample_id=f"s{i}") for i, q in enumerate(["one", "two", "three"])]
        run_id = store.create_run(dataset_name="q.jsonl", samples=samples,
                                  settings={"judge": "offline", "target": config.settings()})
        answered = EvalSample("one", "saved answer", ["saved"], sample_id="s0", target_latency_ms=5.0)
        store.record_answer(run_id, 0, answered)  # the first session got this far, then died
        assert main(["evaluate", "--resume", run_id, "-q"]) == 2  # header values are never stored
        assert main(["evaluate", "--resume", run_id, "-q", "--target-header", "Authorization: Bearer ${RAG_TOKEN}"]) == 0
    assert sorted(body["query"] for _, _, body in srv.requests) == ["three", "two"]
    report = store.load_report(run_id)
    assert [r.sample.answer for r in report.results] == ["saved answer", "Reply to two", "Reply to three"]


def test_rescore_scores_saved_answers_with_another_judge_without_calling_the_target(history, capsys):
    assert main(["evaluate", str(QUESTIONS), "--target", "evaluator.demo:rag_answer", "-q"]) == 0
    first = RunStore(history).list_runs()[0]
    with ChatServer() as judge:
        code = main(["evaluate", "--rescore", first.run_id, "--model", "m", "--base-url", judge.base_url,
                     "--no-cache", "-q"])
        calls = len(judge.chat_requests)
    # three judged metrics a row (no references in this file); faithfulness and context precision in one call
    assert code == 0 and calls >= 10 * 2
    newest = RunStore(history).list_runs()[0]
    assert newest.run_id != first.run_id and newest.settings["rescored_from"] == first.run_id
    before, after = RunStore(history).load_report(first.run_id), RunStore(history).load_report(newest.run_id)
    assert [r.sample.answer for r in after.results] == [r.sample.answer for r in before.results]
    assert after.results[0].faithfulness.method == "llm_blend"


@pytest.mark.parametrize("argv, message", [
    (["evaluate", str(QUESTIONS), "-q"], "no answer column"),
    (["evaluate", str(QUESTIONS), "--target-body", '{"q": "{question}"}'], "need --target"),
    (["evaluate", str(QUESTIONS), "--target", "nope_module_x:f"], "cannot import 'nope_module_x'"),
    (["evaluate", str(QUESTIONS), "--target", "http://127.0.0.1:9/", "--target-header", "X: ${UNSET_VAR_Q}"],
     "UNSET_VAR_Q"),
    (["evaluate", "--rescore", "abc", str(QUESTIONS)], "give no DATA file"),
    (["evaluate", str(QUESTIONS), "--target", "evaluator.demo:rag_answer", "--model", "m", "--base-url",
      "http://127.0.0.1:9/v1", "--api-key-env", "PATH", "--batch", "--no-history"], "--rescore RUN_ID --batch"),
])
def test_usage_errors_are_one_line_and_exit_2(history, capsys, argv, message):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_a_failing_judge_stops_a_target_run_and_keeps_the_answers_for_resume(history, capsys):
    from openai_server import error

    with ChatServer(default=error(401, "invalid api key")) as judge:
        code = main(["evaluate", str(QUESTIONS), "--target", "evaluator.demo:rag_answer", "--model", "m",
                     "--base-url", judge.base_url, "--no-cache", "--target-workers", "1", "-q"])
    assert code != 0
    [run] = RunStore(history).list_runs()
    assert run.status == "stopped" and run.n_done < 10
    answered = [s for _, s in RunStore(history).pending_samples(run.run_id) if s.target_latency_ms is not None]
    assert answered  # answers that arrived are saved: a resume will not ask the pipeline for them again
    assert "Traceback" not in capsys.readouterr().err
