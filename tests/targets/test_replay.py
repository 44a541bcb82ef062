"""Replaying conversations against chatting targets: Python `messages`, HTTP {messages}, failure at turn k."""
from __future__ import annotations

import json
from pathlib import Path

from target_server import TargetServer

from evaluator.cli.command import main
from evaluator.conversation import Conversation, Turn
from evaluator.targets import NO_RETRY, FunctionTarget, TargetConfig
from evaluator.targets.replay import chat_target, replay

ROOT = Path(__file__).resolve().parents[2]


def _conv() -> Conversation:
    return Conversation("c", [Turn("user", "Which kettle?"), Turn("assistant", "old reply", reference="The steel one."),
                              Turn("user", "And shipping?"), Turn("assistant", "old"),
                              Turn("user", "Thanks"), Turn("assistant", "old")])


def test_python_target_gets_the_history_and_its_replies_replace_the_files():
    seen = []

    def bot(messages):
        seen.append([dict(m) for m in messages])
        return {"answer": f"reply {len(messages)}", "contexts": ["ctx"], "tool_calls": [{"name": "lookup"}]}

    out = replay(_conv(), FunctionTarget(bot), "tests:bot", NO_RETRY)
    assert [m["content"] for m in seen[1]] == ["Which kettle?", "reply 1", "And shipping?"]
    assert [t.content for t in out.turns if t.role == "assistant"] == ["reply 1", "reply 3", "reply 5"]
    assert out.turns[1].contexts == ["ctx"] and out.turns[1].tool_calls[0]["name"] == "lookup"
    assert out.turns[1].reference == "The steel one." and out.recorded_by == "tests:bot"


def test_http_failure_at_turn_k_keeps_the_conversation_and_marks_the_rest_not_asked():
    def handler(body):
        return (500, {"error": "boom"}) if len(body["messages"]) == 3 else (200, {"answer": "ok", "contexts": ["c"]})

    with TargetServer(handler) as srv:
        target = chat_target(TargetConfig(srv.url, body='{"messages": {messages}, "q": "{question}"}', retries=0))
        out = replay(_conv(), target, srv.url, NO_RETRY)
        assert srv.requests[1][2]["q"] == "And shipping?"
        assert srv.requests[1][2]["messages"][1] == {"role": "assistant", "content": "ok"}
    roles = [(t.role, t.not_asked, bool(t.error)) for t in out.turns]
    assert roles == [("user", False, False), ("assistant", False, False), ("user", False, False),
                     ("assistant", False, True), ("user", True, False), ("assistant", True, False)]
    assert "HTTP 500" in out.turns[3].error and out.turns[4].content == "Thanks"
    with TargetServer(lambda body: (200, {"answer": f"again {len(body['messages'])}"})) as srv2:
        resumed = replay(out, chat_target(TargetConfig(srv2.url)), srv.url, NO_RETRY)  # same spec: resume
        assert len(srv2.requests) == 2  # turns 1 kept; shipping and thanks asked
    assert [t.content for t in resumed.turns if t.role == "assistant"] == ["ok", "again 3", "again 5"]


def test_cli_demo_chat_offline_records_and_rescores(tmp_path):
    out, record = tmp_path / "r.json", tmp_path / "rec.jsonl"
    code = main(["evaluate", str(ROOT / "sample_data" / "conversations.jsonl"), "--target", "evaluator.demo:chat",
                 "--offline", "-q", "--no-history", "--record", str(record), "-o", str(out)])
    assert code == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["target"]["calls"] == 7 and data["num_conversations"] == 4
    first = data["conversations"][0]["turns"]
    assert first[3]["content"].startswith("The annual membership costs 79 euros")
    recorded = [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]
    assert recorded[0]["recorded_by"] == "evaluator.demo:chat"
    assert main(["evaluate", str(record), "--offline", "-q", "--no-history", "-o", str(tmp_path / "again.json")]) == 0
