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
    assert "judge timed out: 2 of the first 2 calls" in last and "--judge-timeout" in last, last
    # One try per call (the judge never answered), and the run stops when its first wave (2 workers) timed out.
    assert requests <= 2 * 4, requests  # + the calls a sample sends together after its first


def test_a_call_that_times_out_gets_two_tries_not_max_retries_plus_one():
    with ChatServer(default=stall(2.0)) as srv:
        srv.queue(reply("warm"))
        judge = OpenAIJudge("m", srv.base_url, timeout=0.2, max_retries=5)
        judge.generate("warm-up")  # before the judge has answered, a timed-out try is not retried at all
        with pytest.raises(Exception) as failed:
            judge.generate("p")
        requests = len(srv.chat_requests) - 1
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


def test_unusable_replies_are_not_cached_so_a_fixed_judge_succeeds_without_no_cache(tmp_path, capsys):
    rows = [{"sample_id": f"r{i}", "question": f"How long is the warranty of item {i}?",
             "answer": f"Item {i} has a two year warranty.", "contexts": [f"Item {i}: two year warranty."],
             "ground_truth": "Two years."} for i in range(2)]
    data = tmp_path / "small.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    args = ["evaluate", str(data), "--model", "m", "--cache", str(tmp_path / "cache.sqlite3"), "--no-history"]
    with ChatServer(default=reply(PROSE)) as srv:  # one server (the cache is keyed by its URL), fixed midway
        run_cli(args + ["--base-url", srv.base_url], capsys)
        asked_broken = len(srv.chat_requests)
        srv.default = reply('{"score": 0.8, "reasoning": "Supported."}')
        code, last, out = run_cli(args + ["--base-url", srv.base_url], capsys)
        asked_fixed = len(srv.chat_requests) - asked_broken
    assert asked_broken > 0
    assert asked_fixed == asked_broken, (asked_fixed, asked_broken)  # every prompt asked again, no prose replayed
    assert code == 0, last


def test_a_reply_with_no_score_is_not_kept_in_the_cache(tmp_path):
    from evaluator.judges.cache import JudgeCache
    sample = EvalSample(question="How long is the warranty?", answer="Two years.",
                        contexts=["The warranty lasts two years."], ground_truth="Two years.")
    cache = tmp_path / "cache.sqlite3"
    with ChatServer(default=reply(PROSE)) as broken:
        judge = OpenAIJudge("m", broken.base_url, max_retries=0, cache=str(cache))
        result = RAGEvaluator(judge, language="en", metrics=["faithfulness"]).evaluate(sample)
        judge.close()
    assert result.scores["faithfulness"].method == METHOD_FALLBACK
    assert len(JudgeCache(cache)) == 0


def test_an_unusable_reply_in_an_old_cache_is_dropped_the_first_time_it_is_replayed(tmp_path):
    with ChatServer() as fixed:
        judge = OpenAIJudge("m", fixed.base_url, max_retries=0, cache=str(tmp_path / "cache.sqlite3"))
        judge.remember("prompt", PROSE)  # what an older ragmeter kept
        assert judge.generate("prompt") == PROSE and len(fixed.chat_requests) == 0
        judge.reply_unusable("no score")
        assert '"score"' in judge.generate("prompt") and len(fixed.chat_requests) == 1
        judge.close()


def test_resume_writes_the_outputs_the_run_was_started_with_and_its_hint_names_them(data, tmp_path, capsys):
    html, record_free = tmp_path / "out" / "r.html", ["--no-cache", "--model", "m"]
    with ChatServer(default=reply(PROSE)) as broken:
        code, last, _ = run_cli(["evaluate", str(data), *record_free, "--base-url", broken.base_url,
                                 "-o", str(html)], capsys)
    assert code == 3
    run_id = last.split("--resume ")[1].split()[0]
    assert f"ragmeter evaluate --resume {run_id} -o {html}" in last, last
    html.unlink()  # what the stopped run wrote; the resumed run must write it again, whole
    with ChatServer() as fixed:
        code, last, out = run_cli(["evaluate", "--resume", run_id, *record_free, "--base-url", fixed.base_url],
                                  capsys)
    assert code == 0, last
    assert f"wrote {html}" in out
    page = html.read_text(encoding="utf-8")
    assert all(f"r{i}" in page for i in (0, N_SAMPLES - 1))


def test_a_trickling_judge_ends_a_two_sample_run_with_its_first_wave(tmp_path, capsys):
    """Once the calls in flight all time out before any answer, the run stops: no retry of a timed-out try
    (the judge never answered), no probe. Counted in requests here; the wall time against the call deadline
    with default settings is test_trickling_judge_deadline.py's, and bench/trickle.py's."""
    from openai_server import trickle
    rows = [{"sample_id": f"t{i}", "question": f"Is item {i} waterproof?", "answer": "Yes.",
             "contexts": [f"Item {i} is waterproof."], "ground_truth": "Yes."} for i in range(2)]
    data = tmp_path / "two.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    with ChatServer(default=trickle(0.2)) as srv:
        code, last, _ = run_cli(["evaluate", str(data), "--no-cache", "--no-history", "--model", "m",
                                 "--base-url", srv.base_url, "--judge-timeout", "0.5"], capsys)
        requests = len(srv.chat_requests)
    assert code == 3 and "judge timed out: 2 of the first 2 calls" in last, last
    assert requests == 2  # each sample's first call, once
