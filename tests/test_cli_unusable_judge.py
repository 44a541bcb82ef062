"""A judge that answers but says nothing usable, or never answers, stops the run early (issue 18 A.3, B).

Real parts: a loopback OpenAI-compatible server (tests/openai_server.py) that answers prose,
cut-off JSON, or holds every request past the client timeout; the CLI end to end; a real
history database. Each case asserts the run stopped long before asking every sample × metric.
"""
import json

import pytest

from evaluator.analysis.judging import judge_status
from evaluator.cli.command import main
from evaluator.scoring.evaluation import RAGEvaluator
from evaluator.judges.openai import OpenAIJudge
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK, EvalReport, EvalSample
from openai_server import ChatServer, reply, stall

N_SAMPLES, N_METRICS = 60, 5  # the five default metrics
PROSE = "Sure! I think the answer looks pretty good"


@pytest.fixture
def data(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    rows = [{"sample_id": f"r{i}", "question": f"How long is the warranty of item {i}?",
             "answer": f"Item {i} has a two year warranty.", "contexts": [f"Item {i}: two year warranty."],
             "ground_truth": "Two years."} for i in range(N_SAMPLES)]
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.err.strip().splitlines()[-1], captured.out


def test_a_judge_answering_prose_stops_the_run_early_with_exit_3(data, capsys):
    with ChatServer(default=reply(PROSE)) as srv:
        code, last, out = run_cli(["evaluate", str(data), "--no-cache", "--model", "m", "--base-url", srv.base_url],
                                  capsys)
        requests = len(srv.chat_requests)
    assert code == 3
    assert "judge replies are not JSON: 20 of the first 20" in last
    assert requests < N_SAMPLES * N_METRICS / 4, requests  # stopped, not every call made
    assert f"{requests}/{requests} calls answered, 0/{requests} replies usable" in out


@pytest.mark.slow
def test_a_judge_that_never_answers_stops_with_exit_3_naming_the_timeout(data, capsys):
    with ChatServer(default=stall(3.0)) as srv:
        code, last, _ = run_cli(["evaluate", str(data), "--no-cache", "--model", "m", "--base-url", srv.base_url,
                                 "--judge-timeout", "0.3", "--max-workers", "2"], capsys)
        requests = len(srv.chat_requests)
    assert code == 3
    assert "judge timed out: 3 of the first 3 calls" in last, last
    # Each call gets at most two tries within its deadline; the run stops after its first timed-out calls.
    assert requests <= 2 * 2 * 3 + 2 * 4, requests  # + the calls a sample sends together after its first


def test_a_call_that_times_out_gets_two_tries_not_max_retries_plus_one():
    with ChatServer(default=stall(2.0)) as srv:
        judge = OpenAIJudge("m", srv.base_url, timeout=0.2, max_retries=5)
        with pytest.raises(Exception) as failed:
            judge.generate("p")
        requests = len(srv.chat_requests)
    assert getattr(failed.value, "kind", None) == "timeout"
    assert requests == 2 and "total deadline" in str(failed.value)


TRUNCATED = '{"score": 0.8, "claims": [{"text": "a", "verdict": "sup'


def test_a_truncated_json_reply_is_a_fallback_with_its_reason_not_llm_blend():
    sample = EvalSample(question="How long is the warranty?", answer="Two years.",
                        contexts=["The warranty lasts two years."], ground_truth="Two years.")
    with ChatServer(default=reply(TRUNCATED, finish_reason="length")) as srv:
        judge = OpenAIJudge("m", srv.base_url, max_retries=0)
        result = RAGEvaluator(judge, language="en", metrics=["faithfulness"]).evaluate(sample)
    ms = result.scores["faithfulness"]
    assert ms.method == METHOD_FALLBACK and ms.method != METHOD_BLEND
    assert ms.llm_score is None and "truncated" in ms.error and ms.raw_reply == TRUNCATED


def test_the_header_counts_answered_and_usable_replies_apart():
    report = EvalReport(usage={"calls": 124, "failures": 0, "unusable_replies": 124})
    line = judge_status(report, {"model": "m"})
    assert "124/124 calls answered, 0/124 replies usable" in line
