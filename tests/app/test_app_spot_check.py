"""Spot check page (AppTest): English and Arabic samples score; Arabic shows right-to-left; text is escaped."""
import html
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from evaluator import EvalSample, OfflineJudge, RAGEvaluator

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")
TIMEOUT = 30
ARABIC = re.compile(r"[\u0600-\u06FF]")


@pytest.fixture
def spot(tmp_path, monkeypatch):
    monkeypatch.setenv("RAGMETER_JUDGE_CACHE", str(tmp_path / "judge-cache.sqlite3"))
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "history.sqlite3"))
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("pages/spot_check.py").run()
    assert not at.exception
    return at


def fields(at):
    return {key: at.text_area(key=key).value for key in ("spot_question", "spot_answer", "spot_contexts",
                                                         "spot_ground_truth")}


def expected(example, contexts):
    sample = EvalSample(example["spot_question"], example["spot_answer"], contexts, example["spot_ground_truth"],
                        sample_id="spot-check")
    return RAGEvaluator(OfflineJudge()).evaluate(sample)


def markdown_text(at):
    return "\n".join(m.value for m in at.markdown)


@pytest.mark.parametrize("lang", ["en", "ar"])
def test_example_scores_every_metric_like_the_library(spot, lang):
    spot.button(key=f"btn_spot_example_{lang}").click().run()
    example = fields(spot)
    assert all(example.values()) and (ARABIC.search(example["spot_question"]) is not None) == (lang == "ar")
    spot.button(key="btn_spot_score").click().run()
    assert not spot.exception, [e.value for e in spot.exception]
    result = spot.session_state["spot_result"]
    assert result.sample.contexts == example["spot_contexts"].splitlines()
    want = expected(example, result.sample.contexts)
    assert result.score_values() == want.score_values()
    assert all(not ms.skipped for ms in result.metric_scores().values() if ms.name in want.score_values())
    text = markdown_text(spot)
    for ms in want.metric_scores().values():
        assert f"{ms.score:.3f}" in text
        assert html.escape(ms.reasoning) in text


def test_arabic_text_is_shown_right_to_left(spot):
    spot.button(key="btn_spot_example_ar").click().run()
    spot.button(key="btn_spot_score").click().run()
    question = html.escape(spot.text_area(key="spot_question").value)
    blocks = [m.value for m in spot.markdown if question in m.value]
    assert blocks and all('dir="rtl"' in b and "text-align:right" in b for b in blocks)


def test_user_text_is_escaped_not_rendered(spot):
    spot.text_area(key="spot_question").set_value("<script>alert(1)</script> what?")
    spot.text_area(key="spot_answer").set_value('<img src=x onerror="alert(2)"> yes')
    spot.text_area(key="spot_contexts").set_value("first context\n---\nsecond\ncontext")
    spot.button(key="btn_spot_score").click().run()
    assert not spot.exception
    text = markdown_text(spot)
    assert "<script>" not in text and "<img" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert spot.session_state["spot_result"].sample.contexts == ["first context", "second\ncontext"]


def test_empty_question_asks_for_one(spot):
    spot.button(key="btn_spot_score").click().run()
    assert spot.warning and "Type a question" in spot.warning[0].value
    assert "spot_result" not in spot.session_state


@pytest.mark.parametrize("text, contexts", [
    ("a\nb\n\n c ", ["a", "b", "c"]),
    ("one\nline two\n---\nthree", ["one\nline two", "three"]),
    ("---\nonly\n---\n", ["only"]),
    ("", []),
])
def test_contexts_box_splits_per_line_or_on_dashes(spot, text, contexts):
    spot.text_area(key="spot_question").set_value("Which contexts?")
    spot.text_area(key="spot_contexts").set_value(text)
    spot.button(key="btn_spot_score").click().run()
    assert not spot.exception
    assert spot.session_state["spot_result"].sample.contexts == contexts


def test_missing_reference_skips_the_reference_metrics(spot):
    spot.text_area(key="spot_question").set_value("How long is the warranty?")
    spot.text_area(key="spot_answer").set_value("Two years.")
    spot.text_area(key="spot_contexts").set_value("The warranty lasts two years.")
    spot.button(key="btn_spot_score").click().run()
    result = spot.session_state["spot_result"]
    assert result.context_recall.skipped and result.answer_correctness.skipped
    assert "N/A · skipped" in markdown_text(spot)


def test_openai_compatible_judge_blends_and_shows_the_raw_reply(spot):
    from openai_server import ChatServer, reply

    judge_reply = '{"score": 0.9, "reasoning": "Every claim is in the context."}'
    with ChatServer(default=reply(judge_reply)) as srv:
        spot.button(key="btn_spot_example_en").click().run()
        spot.radio(key="spot_judge").set_value("OpenAI-compatible API").run()
        spot.text_input(key="spot_base_url").set_value(srv.base_url)
        spot.text_input(key="spot_model").set_value("test-model").run()
        spot.button(key="btn_spot_score").click().run()
        assert not spot.exception, [e.value for e in spot.exception]
        # reference given: the three metrics that read the contexts in one call (a server not known to reuse a
        # prompt prefix), answer relevancy and answer correctness alone
        assert len(srv.chat_requests) == 3
    result = spot.session_state["spot_result"]
    assert {ms.method for ms in result.metric_scores().values()} == {"llm_blend"} | (
        {"rule"} if result.extra else set())
    assert result.faithfulness.llm_score == 0.9
    assert judge_reply in [c.value for c in spot.code]
    assert "LLM part: 0.900" in "\n".join(c.value for c in spot.caption)
