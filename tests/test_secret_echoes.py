"""Secrets echoed back by the other side never reach disk: a target's 401 body repeating its
Authorization header, a judge reply repeating the key, a base URL carrying `?key=…`.

Real loopback servers, the real CLI, and a grep of every file the run wrote.
"""
import json
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.io import redact
from openai_server import ChatServer, reply
from target_server import TargetServer

JUDGE_KEY = "sk-canary-judge-7c41e9d0"
TARGET_TOKEN = "tok-canary-target-52af8e13"
URL_KEY = "AIzaCanaryQuery-0b93d6c2"
CANARIES = (JUDGE_KEY, TARGET_TOKEN, URL_KEY)
FORMATS = ("json", "csv", "html", "parquet")


def questions(path: Path, answers: bool = False) -> Path:
    rows = [{"question": f"Which plan includes feature {i}?", "ground_truth": "The Pro plan."} for i in range(4)]
    for row in rows if answers else []:
        row.update(answer="The Pro plan includes it.", contexts=["Pricing: the Pro plan includes it."])
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def echoing_target(srv_box):
    """Answers, except that question 0 gets a 401 whose body repeats the request's headers."""
    def handle(body):
        headers = srv_box[0].requests[-1][1]
        if body["question"].endswith("feature 0?"):
            return 401, {"error": "invalid token", "you_sent": {"Authorization": headers.get("authorization")}}
        return 200, {"answer": "The Pro plan includes it.", "contexts": ["Pricing: the Pro plan includes it."]}
    return handle


def echoing_judge(request):
    """A judge that quotes the key it was called with back in its reasoning."""
    key = request.headers.get("authorization", "")
    return reply(json.dumps({"score": 0.8, "reasoning": f"Checked with credentials {key} and key {JUDGE_KEY}."}))


def assert_nothing_leaked(paths):
    assert paths
    for path in paths:
        data = path.read_bytes()
        for canary in CANARIES:
            assert canary.encode() not in data, f"{canary} leaked into {path.name}"


@pytest.fixture
def run_env(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    monkeypatch.setenv("CANARY_JUDGE_KEY", JUDGE_KEY)
    monkeypatch.setenv("CANARY_RAG_TOKEN", TARGET_TOKEN)
    return tmp_path


@pytest.mark.slow
def test_echoed_secrets_reach_no_history_cache_or_export(run_env, capsys):
    box = []
    with ChatServer(responder=echoing_judge) as judge, TargetServer(echoing_target(box)) as target:
        box.append(target)
        for ext in FORMATS:
            main(["evaluate", str(questions(run_env / "q.jsonl")), "--model", "judge", "--base-url", judge.base_url,
                  "--api-key-env", "CANARY_JUDGE_KEY", "--cache", str(run_env / "cache.sqlite3"),
                  "--target", target.url, "--target-header", "Authorization: Bearer ${CANARY_RAG_TOKEN}",
                  "-q", "-o", str(run_env / f"report.{ext}")])
        # The secrets really went over the wire and really came back.
        assert target.requests[0][1]["authorization"] == f"Bearer {TARGET_TOKEN}"
        assert judge.chat_requests[0].headers["authorization"] == f"Bearer {JUDGE_KEY}"
    written = [p for p in run_env.rglob("*") if p.is_file() and p.name != "q.jsonl"]
    assert {p.name for p in written} >= {"history.sqlite3", "cache.sqlite3", *(f"report.{e}" for e in FORMATS)}
    assert_nothing_leaked(written)
    data = json.loads((run_env / "report.json").read_text())
    failed = [r for r in data["records"] if r["target_error"]]
    assert failed and failed[0]["target_error"].startswith("HTTP 401") and "***" in failed[0]["target_error"]
    out = capsys.readouterr()
    assert not any(c in out.out + out.err for c in CANARIES)


def test_a_base_url_query_key_is_stored_nowhere(run_env, capsys):
    with ChatServer() as judge:
        url = f"{judge.base_url}?key={URL_KEY}"
        for ext in FORMATS:
            main(["evaluate", str(questions(run_env / "q.jsonl", answers=True)), "--model", "judge", "--base-url", url,
                  "--api-key-env", "CANARY_JUDGE_KEY", "--cache", str(run_env / "cache.sqlite3"),
                  "-q", "-o", str(run_env / f"report.{ext}")])
    written = [p for p in run_env.rglob("*") if p.is_file() and p.name != "q.jsonl"]
    assert {p.name for p in written} >= {"history.sqlite3", *(f"report.{e}" for e in FORMATS)}
    assert_nothing_leaked(written)
    settings = json.loads((run_env / "report.json").read_text())["settings"]
    assert "key=***" in json.dumps(settings)  # the URL is kept, its secret is not
    out = capsys.readouterr()
    assert URL_KEY not in out.out + out.err


@pytest.mark.parametrize("text, kept", [
    ("GET https://api.example.invalid/v1?key=abc123def456&alt=json", "?key=***&alt=json"),
    ("url: https://h.invalid/x?api_key=s3cr3t-value", "?api_key=***"),
    ("https://h.invalid/x?access_token=ya29.a0AfH6SM", "?access_token=***"),
    ("https://h.invalid/x?page=2&sort=asc", "?page=2&sort=asc"),
    ("Authorization: Bearer sk-live-0123456789abcdef", "Bearer ***"),
    ("Bearer tokens expire after an hour.", "Bearer tokens expire after an hour."),
    ("https://user:hunter2-pass@db.invalid/x", "https://db.invalid/x"),
    ("Basic information about your plan.", "Basic information about your plan."),
])
def test_secret_shaped_text_is_masked_and_ordinary_text_is_not(text, kept):
    assert kept in redact.redact_text(text)


def test_remembered_values_are_masked_in_every_spelling():
    secret = 'pa"ss<word>-1234'
    redact.remember(secret)
    value = {"a": [f"x {secret} y"], "b": json.dumps({"k": secret}), "c": f"<p>{__import__('html').escape(secret)}</p>"}
    assert secret not in json.dumps(redact.redact_value(value), ensure_ascii=False)
    assert "***" in redact.redact_value(value)["a"][0]
    assert redact.redact_text("short abc stays") == "short abc stays"
