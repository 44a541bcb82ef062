"""Conversations on the dashboard (AppTest): upload → preview as conversations → run → chat drill-down."""
from __future__ import annotations

import json

import pytest

from apptest import no_exception, open_app
from evaluator.store.history import RunStore

TIMEOUT = 30
HOSTILE = "<b>bold?</b> **not markdown** [link](http://x)"
CHATS = [
    {"conversation_id": "kettle", "messages": [
        {"role": "user", "content": "Which kettle boils fastest? " + HOSTILE},
        {"role": "assistant", "content": "The steel kettle boils a litre in three minutes.",
         "contexts": ["The steel kettle boils one litre in three minutes."]},
        {"role": "user", "content": "And does it ship to Canada?"},
        {"role": "assistant", "content": "Parrots enjoy warm weather.", "contexts": ["Shipping: Canada in 5 days."]}]},
    {"conversation_id": "arabic", "messages": [
        {"role": "user", "content": "كم سعر الغلاية الفولاذية؟"},
        {"role": "assistant", "content": "سعر الغلاية الفولاذية ثلاثون دينارًا.",
         "contexts": ["سعر الغلاية الفولاذية ثلاثون دينارًا."]}]},
]
DATA = "".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CHATS).encode("utf-8")


@pytest.fixture
def app(history):
    at = open_app(TIMEOUT)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("chats.jsonl", DATA, "application/json"))
    return at.run()


def _htmls(block):
    return [h.value for h in block.get("html")]


def test_the_preview_shows_conversations_not_rows(app):
    no_exception(app)
    assert any("OpenAI messages · 2 conversations · 6 turns" in c.value for c in app.caption)
    table = app.dataframe[0].value
    assert list(table["conversation_id"]) == ["kettle", "arabic"] and list(table["turns"]) == [4, 2]
    assert not [s for s in app.selectbox if (s.key or "").startswith("map_")]  # no column mapping for chats
    assert any("0 judge calls" in c.value for c in app.caption)


def test_run_then_the_report_shows_the_conversation_as_chat_bubbles(app, history):
    app.button(key="btn_run").click().run()
    no_exception(app)
    assert app.success and app.success[0].value.startswith("Done: 2 conversations of")
    runs = RunStore(history).list_runs()
    assert [(r.n_done, r.n_samples) for r in runs] == [(2, 2)]
    assert RunStore(history).load_report(runs[0].run_id).multi_turn  # its rows say what they are
    app.switch_page("pages/report.py").run()
    no_exception(app)
    table = next(d.value for d in app.dataframe if "turns" in getattr(d.value, "columns", ()))
    assert list(table["sample_id"]) == ["kettle", "arabic"] and list(table["turns"]) == [4, 2]  # a row a chat
    bubbles = app.chat_message
    assert [b.name for b in bubbles] == ["user", "assistant", "user", "assistant"]
    first = _htmls(bubbles[0])[0]
    assert "&lt;b&gt;bold?&lt;/b&gt; **not markdown**" in first and "<b>" not in first  # text, not HTML/Markdown
    for reply in (bubbles[1], bubbles[3]):
        scores = " ".join(m.value for m in reply.markdown)
        assert "faithfulness" in scores and "answer_relevancy" in scores and "overall" in scores
        assert [t.label for t in reply.tabs][0].startswith("Scores (")
    assert "Shipping: Canada in 5 days." in " ".join(m.value for m in bubbles[3].markdown)  # its context
    assert any("worst turn" in m.value for m in bubbles[3].markdown)  # the off-topic reply


def test_the_worst_turn_is_one_click_away_and_arabic_reads_right_to_left(app):
    app.button(key="btn_run").click().run()
    app.switch_page("pages/report.py").run()
    app.selectbox(key="rep_sample").set_value(1).run()
    rtl = [h for b in app.chat_message for h in _htmls(b)]
    assert rtl and all('dir="rtl"' in h for h in rtl)
    worst = app.button(key="btn_worst_turn")
    assert worst.label.startswith("Open the worst turn: kettle, turn 4")
    worst.click().run()
    no_exception(app)
    assert app.selectbox(key="rep_sample").value == 0
    assert any("worst turn" in m.value for m in app.chat_message[3].markdown)


def test_a_tools_reply_shows_as_tool_output_among_the_turns_contexts(history):
    from pathlib import Path

    sharegpt = Path(__file__).resolve().parents[1] / "fixtures" / "sharegpt.jsonl"
    at = open_app(TIMEOUT)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("sharegpt.jsonl", sharegpt.read_bytes(), "application/json"))
    at.run()
    assert any("1 tool output used as context of the reply after it" in c.value for c in at.caption)  # the note
    at.button(key="btn_run").click().run()
    no_exception(at)
    at.switch_page("pages/report.py").run()
    no_exception(at)
    reply = at.chat_message[3]  # weather-1: user, the call, the tool's reply, then the assistant's answer
    shown = " ".join(m.value for m in reply.markdown) + " ".join(_htmls(reply))
    assert "Context 1 · tool output" in shown and "Paris: 18 °C, cloudy" in shown


def test_the_tool_evidence_toggle_turns_it_off(history):
    from pathlib import Path

    sharegpt = Path(__file__).resolve().parents[1] / "fixtures" / "sharegpt.jsonl"
    at = open_app(TIMEOUT)
    at.radio(key="eval_source").set_value("Upload a file").run()
    at.file_uploader(key="upload_file").set_value(("sharegpt.jsonl", sharegpt.read_bytes(), "application/json"))
    at.run().toggle(key="eval_tool_evidence").set_value(False).run()
    no_exception(at)
    assert not any("used as context" in c.value for c in at.caption)
    at.button(key="btn_run").click().run()
    no_exception(at)
    stored = RunStore(history)  # the run's rows live in the history, not in the session
    weather = stored.load_report(stored.list_runs()[0].run_id).results[0].sample.conversation
    assert weather.conversation_id == "weather-1" and weather.turns[3].contexts == []
