"""Conversation files as other tools write them, read through the library and the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaluator.cli.command import main
from evaluator.errors import DatasetError
from evaluator.io.conversations import (CONVERSATIONS, DEEPEVAL, LONG, OPENAI, RAGAS, SAMPLES, dataset_kind,
                                        load_conversations)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ROOT = Path(__file__).resolve().parents[2]


def _write(path: Path, lines: list) -> Path:
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n", encoding="utf-8")
    return path


def test_ragas_multiturn_jsonl_keeps_tool_calls_outputs_and_reference():
    found = load_conversations(FIXTURES / "ragas_multiturn.jsonl")
    assert found.format == RAGAS and len(found.conversations) == 2
    first = found.conversations[0]
    assert [t.role for t in first.turns] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert first.turns[3].tool_calls == [{"name": "shipping_lookup", "arguments": {"country": "CA"},
                                          "output": "Canada: 7 to 10 days, 12 dollars."}]
    assert first.expected_tools == ["shipping_lookup"]
    assert first.reference.startswith("The steel kettle")
    ex = first.exchanges()
    assert [e.reply.content for e in ex] == ["The steel kettle: three years against manufacturing defects.",
                                             "Yes, it ships to Canada in 7 to 10 days for 12 dollars."]
    assert ex[1].tool_calls[0]["name"] == "shipping_lookup"


@pytest.mark.parametrize("name", ["deepeval_conv_goldens.json", "deepeval_conv_goldens.jsonl",
                                  "deepeval_conv_goldens.csv"])
def test_deepeval_conversational_goldens_in_each_file_type(name):
    found = load_conversations(FIXTURES / name)
    assert found.format == DEEPEVAL and len(found.conversations) == 2
    conv = found.conversations[0]
    assert conv.scenario.startswith("A customer wants a kettle")
    assert conv.expected_outcome.startswith("The customer learns")
    assert [t.role for t in conv.turns] == ["user", "assistant", "user", "assistant"]
    assert conv.turns[1].contexts == ["Warranty: the steel kettle is covered for three years."]
    assert conv.turns[3].tool_calls[0]["name"] == "shipping_lookup"
    assert conv.turns[3].tool_calls[0]["output"] == "Canada: 7 to 10 days, 12 dollars."


def test_openai_messages_keep_the_system_prompt_aside(tmp_path):
    path = _write(tmp_path / "chat.jsonl", [{"messages": [
        {"role": "system", "content": "You are the shop's assistant."},
        {"role": "user", "content": "Where is my order?"},
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "order_status", "arguments": "{\"order\": \"4417\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "shipped"},
        {"role": "assistant", "content": "It has shipped."}]}])
    conv = load_conversations(path).conversations[0]
    assert load_conversations(path).format == OPENAI
    assert conv.metadata["system"] == "You are the shop's assistant."
    assert conv.turns[1].tool_calls == [{"name": "order_status", "arguments": {"order": "4417"}, "output": "shipped"}]
    assert conv.conversation_id == "conv-1"


def test_long_table_one_row_per_turn_is_grouped_and_ordered(tmp_path):
    path = tmp_path / "turns.csv"
    path.write_text("conversation_id,turn,role,content,contexts\n"
                    "a,2,assistant,Nine euros.,\"[\"\"Day pass: 9 euros\"\"]\"\n"
                    "b,1,user,Hi,\n"
                    "a,1,user,How much is a day pass?,\n"
                    "b,2,assistant,Hello!,\n", encoding="utf-8")
    found = load_conversations(path)
    assert found.format == LONG and [c.conversation_id for c in found.conversations] == ["a", "b"]
    a = found.conversations[0]
    assert [(t.role, t.content) for t in a.turns] == [("user", "How much is a day pass?"), ("assistant", "Nine euros.")]
    assert a.turns[1].contexts == ["Day pass: 9 euros"]


def test_the_loader_says_which_kind_it_found():
    assert dataset_kind(ROOT / "sample_data" / "conversations.jsonl") == CONVERSATIONS
    assert dataset_kind(ROOT / "sample_data" / "sample.jsonl") == SAMPLES


@pytest.mark.parametrize("turns, message", [
    ([{"content": "hi"}], "turn 1 has no role"),
    ([{"role": "assistant", "content": "Hello, how can I help?"}, {"role": "user", "content": "hi"}],
     "starts with an assistant turn"),
    ([{"role": "user", "content": "hi"}, {"role": "tool", "content": "42"}], "tool output with no tool call"),
    ([{"role": "narrator", "content": "hi"}], "use user, assistant or tool"),
])
def test_bad_conversations_name_file_line_and_fix(tmp_path, turns, message):
    path = _write(tmp_path / "bad.jsonl", [{"turns": [{"role": "user", "content": "fine"}]}, {"turns": turns}])
    with pytest.raises(DatasetError) as err:
        load_conversations(path)
    assert message in str(err.value) and "bad.jsonl" in str(err.value) and "line 2" in str(err.value)


def test_an_empty_conversation_is_skipped_by_name_and_nothing_else_lost(tmp_path):
    path = _write(tmp_path / "c.jsonl", [{"id": "x", "turns": []}, {"id": "y", "turns": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}])
    found = load_conversations(path)
    assert [c.conversation_id for c in found.conversations] == ["y"]
    assert found.skipped == [("x", "empty conversation: it has no turns")]


@pytest.mark.parametrize("name, conversations, turns", [
    ("ragas_multiturn.jsonl", 2, 3), ("deepeval_conv_goldens.json", 2, 3), ("deepeval_conv_goldens.csv", 2, 3)])
def test_cli_scores_each_format(tmp_path, name, conversations, turns):
    out = tmp_path / "r.json"
    assert main(["evaluate", str(FIXTURES / name), "--offline", "-q", "--no-history", "-o", str(out)]) == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert data["kind"] == "conversations" and data["num_conversations"] == conversations
    assert data["num_turns_scored"] == turns
    scored = [t for c in data["conversations"] for t in c["turns"] if "scores" in t]
    assert len(scored) == turns and all(t["role"] == "assistant" for t in scored)
    assert data["conversations"][0]["turns"][0]["content"] == "Which kettle has the longest warranty?"


def test_cli_error_on_a_bad_conversation_is_one_line(tmp_path, capsys):
    path = _write(tmp_path / "bad.jsonl", [{"turns": [{"role": "assistant", "content": "Hi"}]}])
    assert main(["evaluate", str(path), "--offline", "-q", "--no-history"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.jsonl" in err[0] and "starts with an assistant turn" in err[0]
