"""Judges that finish: a completion cap per metric, structured output detected once per server and
remembered, one repair attempt on a constrained reply, thinking stripped and counted apart, and every
bad reply (empty, HTML, oversized, wrong schema, endless <think>) bounded, counted and named."""
import json

import pytest
from openai_server import ChatServer, error, huge, reply

from evaluator import EvalSample, RAGEvaluator
from evaluator.judges.openai import OpenAIJudge
from evaluator.judges.replies import forget_servers, strip_thinking
from evaluator.metrics.registry import get_metric
from evaluator.model import METHOD_BLEND, METHOD_FALLBACK
from evaluator.scoring.costs import usage_line

SAMPLE = EvalSample("How long is the refund window?", "Refunds are accepted for 30 days.",
                    ["Refund policy: 30 days from delivery."], "30 days from delivery.")
RELEVANT = '{"score": 0.9, "reasoning": "direct"}'


@pytest.fixture(autouse=True)
def fresh_servers():
    """Ports are reused: no test inherits another's remembered server."""
    forget_servers()
    yield
    forget_servers()


def evaluate(srv, metrics=("answer_relevancy",), **kw):
    judge = OpenAIJudge("m", base_url=srv.base_url, timeout=5, max_retries=0, **kw)
    result = RAGEvaluator(judge, metrics=list(metrics)).evaluate(SAMPLE)
    return judge, result


# -- caps ---------------------------------------------------------------------------------------
def test_every_call_carries_its_metrics_completion_cap():
    with ChatServer(default=reply(RELEVANT)) as srv:
        evaluate(srv, ("answer_relevancy", "faithfulness"))
        caps = [r.body["max_tokens"] for r in srv.chat_requests]
    assert caps == [get_metric("answer_relevancy").max_tokens, get_metric("faithfulness").max_tokens]
    assert caps[0] < caps[1] <= 600  # a score and a sentence need less room than a claims list


def test_the_judges_own_cap_wins_over_every_metrics():
    with ChatServer(default=reply(RELEVANT)) as srv:
        evaluate(srv, ("answer_relevancy", "faithfulness"), max_tokens=64)
        assert {r.body["max_tokens"] for r in srv.chat_requests} == {64}


# -- structured output ----------------------------------------------------------------------------
def test_a_llama_cpp_server_gets_the_metrics_schema_as_a_grammar_found_once_per_server():
    with ChatServer(default=reply(RELEVANT), owned_by="llamacpp") as srv:
        evaluate(srv)
        evaluate(srv)  # a second judge for the same server: no second look at /models
        looks = [r for r in srv.requests if r.path.endswith("/models")]
        formats = [r.body["response_format"] for r in srv.chat_requests]
    assert len(looks) == 1
    assert all(f["type"] == "json_object" and f["schema"]["required"] == ["score", "reasoning"] for f in formats)


def test_a_vllm_server_gets_json_schema_and_an_unknown_one_json_object():
    with ChatServer(default=reply(RELEVANT), owned_by="vllm") as vllm, ChatServer(default=reply(RELEVANT)) as other:
        evaluate(vllm)
        evaluate(other)
        assert vllm.chat_requests[0].response_format == "json_schema"
        assert vllm.chat_requests[0].body["response_format"]["json_schema"]["schema"]["required"] == ["score", "reasoning"]
        assert other.chat_requests[0].response_format == "json_object"


def test_a_rejected_grammar_steps_down_and_the_next_judge_starts_there():
    def refuse(req):
        fmt = req.body.get("response_format") or {}
        return error(400, "response_format schema is not supported") if "schema" in fmt else None

    with ChatServer(default=reply(RELEVANT), owned_by="llamacpp", responder=refuse) as srv:
        _, first = evaluate(srv)
        evaluate(srv)
        sent = [("schema" in (r.body.get("response_format") or {})) for r in srv.chat_requests]
    assert first.scores["answer_relevancy"].method == METHOD_BLEND
    assert sent == [True, False, False]  # one refusal, remembered for the second judge


# -- repair ---------------------------------------------------------------------------------------
def test_a_constrained_reply_with_no_score_gets_one_repair_attempt():
    with ChatServer(owned_by="llamacpp") as srv:
        srv.queue(reply('{"score": '), reply(RELEVANT))  # cut off by the cap, then repaired
        judge, result = evaluate(srv)
        prompts = [r.prompt for r in srv.chat_requests]
    ms = result.scores["answer_relevancy"]
    assert ms.method == METHOD_BLEND and ms.llm_score == 0.9
    assert len(prompts) == 2 and "could not be read" in prompts[1] and prompts[1].startswith(prompts[0])
    usage = judge.usage()
    assert (usage["repairs"], usage["repaired"], usage["bad:truncated"]) == (1, 1, 1)


def test_a_failed_repair_falls_back_to_the_heuristic_after_exactly_two_calls():
    with ChatServer(default=reply("I think it is fine."), owned_by="llamacpp") as srv:
        judge, result = evaluate(srv)
        assert len(srv.chat_requests) == 2
    assert result.scores["answer_relevancy"].method == METHOD_FALLBACK
    assert judge.usage()["repaired"] == 0 and judge.usage()["bad:not json"] == 2


# -- thinking -------------------------------------------------------------------------------------
def test_thinking_is_stripped_before_parsing_and_counted_apart():
    bait = '<think>The answer quotes {"score": 0.0}; hmm.</think>\n' + RELEVANT
    with ChatServer(default=reply(bait, usage=(50, 40))) as srv:
        judge, result = evaluate(srv)
    assert result.scores["answer_relevancy"].llm_score == 0.9  # not the 0.0 inside the thinking
    assert judge.usage()["reasoning_tokens"] > 0
    assert "thinking tokens" in usage_line(judge.usage(), None, None)


@pytest.mark.parametrize("reply_text, expected", [
    ("<think>no", ("", "no", True)),
    ("<think>a</think>b<think>c</think>d", ("bd", "ac", False)),
    ("plain", ("plain", "", False)),
    ("cut</think>{}", ("{}", "cut", False)),
])
def test_strip_thinking(reply_text, expected):
    seen = strip_thinking(reply_text)
    assert (seen.text, seen.thinking, seen.endless) == expected


# -- bad input: each bounded, counted and named in the run's last lines ----------------------------------
BAD = {
    "empty": reply(""),
    "html": reply("<!DOCTYPE html><html><body>502 Bad Gateway</body></html>"),
    "wrong schema": reply('{"verdict": "fine", "confidence": "high"}'),
    "thinking never ended": reply("<think>" + "and then " * 200),
}


@pytest.mark.parametrize("kind", sorted(BAD))
def test_a_bad_reply_is_counted_by_kind_and_named_in_the_usage_line(kind):
    with ChatServer(default=BAD[kind]) as srv:
        judge, result = evaluate(srv)
    assert result.scores["answer_relevancy"].method == METHOD_FALLBACK
    line = usage_line(judge.usage(), None, None)
    assert f"bad replies: " in line and kind in line, line


def test_a_10_mb_reply_is_refused_at_the_cap_and_counted():
    with ChatServer(default=huge(10)) as srv:
        judge, result = evaluate(srv)
    ms = result.scores["answer_relevancy"]
    assert ms.method == METHOD_FALLBACK and "more than the 8 MiB ragmeter reads" in (ms.error or "")
    assert "too large" in usage_line(judge.usage(), None, None)


def test_the_cli_run_names_bad_replies_in_its_last_lines(tmp_path, capsys, monkeypatch):
    from evaluator.cli.command import main

    monkeypatch.setenv("HOME", str(tmp_path))
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"question": SAMPLE.question, "answer": SAMPLE.answer,
                                "contexts": SAMPLE.contexts}) + "\n", encoding="utf-8")
    with ChatServer(default=BAD["html"]) as srv:
        code = main(["evaluate", str(data), "--model", "m", "--base-url", srv.base_url, "--no-cache",
                     "--metrics", "answer_relevancy", "--history", str(tmp_path / "h.sqlite3"),
                     "-o", str(tmp_path / "out.json")])
    out = capsys.readouterr()
    assert code == 3
    judge_line = next(line for line in out.out.splitlines() if line.startswith("judge: "))
    assert "bad replies: " in judge_line and "html" in judge_line


# -- where the cap comes from ------------------------------------------------------------------------
def test_the_cap_is_resolved_flag_then_environment_then_team_file_then_each_metrics(tmp_path, monkeypatch):
    from teamfiles import write_config

    from evaluator.errors import ConfigError
    from evaluator.team.settings import Flags, judge_max_tokens

    monkeypatch.delenv("RAGMETER_JUDGE_MAX_TOKENS", raising=False)
    monkeypatch.delenv("RAGMETER_CONFIG", raising=False)
    assert (judge_max_tokens().value, judge_max_tokens().layer) == (0, "default")
    write_config(tmp_path, "[judge]\nmax_tokens = 700\n", monkeypatch)
    assert (judge_max_tokens().value, judge_max_tokens().layer) == (700, "file")
    monkeypatch.setenv("RAGMETER_JUDGE_MAX_TOKENS", "400")
    assert (judge_max_tokens().value, judge_max_tokens().layer) == (400, "environment")
    found = judge_max_tokens(Flags(judge_max_tokens=200))
    assert (found.value, found.origin) == (200, "flag --judge-max-tokens")
    monkeypatch.setenv("RAGMETER_JUDGE_MAX_TOKENS", "lots")
    with pytest.raises(ConfigError, match="RAGMETER_JUDGE_MAX_TOKENS"):
        judge_max_tokens()
    monkeypatch.delenv("RAGMETER_JUDGE_MAX_TOKENS")
    write_config(tmp_path, "[judge]\nmax_tokens = -5\n", monkeypatch, name="bad.toml")
    with pytest.raises(ConfigError, match="judge.max_tokens"):
        judge_max_tokens()
