"""Conversations in real Chromium: upload a chat file, run it offline, read it back as chat bubbles.

The Arabic conversation must read right to left (computed direction and alignment, not just an
attribute), user text with markup must show as text, and the worst turn is one click away.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the dashboard tests' own module skips or fails for this already
    pytest.skip("playwright is not installed: pip install -e '.[test]'", allow_module_level=True)

from .test_dashboard import RUN_TIMEOUT, go_to, main, open_app, wait_idle

pytestmark = pytest.mark.browser

ARABIC_Q = "كم سعر الغلاية الفولاذية؟"
ARABIC_A = "سعر الغلاية الفولاذية ثلاثون دينارًا، والشحن مجاني."
MARKUP = "Which kettle <b>boils</b> fastest & **quietly**?"
CHATS = [
    {"conversation_id": "arabic-kettle", "messages": [
        {"role": "user", "content": ARABIC_Q},
        {"role": "assistant", "content": ARABIC_A, "contexts": ["سعر الغلاية الفولاذية ثلاثون دينارًا."]},
        {"role": "user", "content": "وهل الشحن مجاني؟"},
        {"role": "assistant", "content": "نعم، الشحن مجاني داخل المدينة.", "contexts": ["الشحن مجاني داخل المدينة."]}]},
    {"conversation_id": "kettle-markup", "messages": [
        {"role": "user", "content": MARKUP},
        {"role": "assistant", "content": "The steel kettle boils a litre in three minutes.",
         "contexts": ["The steel kettle boils one litre in three minutes, quietly."]},
        {"role": "user", "content": "And shipping to Canada?"},
        {"role": "assistant", "content": "Parrots like warm weather.", "contexts": ["Canada: five days."]}]},
]


@pytest.fixture
def chat_file(tmp_path) -> Path:
    path = tmp_path / "browser_chats.jsonl"
    path.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in CHATS), encoding="utf-8")
    return path


def bubbles(page: Page):
    return main(page).locator('[data-testid="stChatMessage"]')


def test_conversation_upload_run_and_chat_bubbles_with_arabic_rtl(page, app_url, chat_file, shot):
    open_app(page, app_url)
    page.locator('[data-testid="stRadioOption"]').filter(has_text="Upload a file").click()
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_not_text="Import rubrics")
    uploader.locator('input[type="file"]').set_input_files(str(chat_file))
    expect(page.get_by_text(re.compile(r"browser_chats\.jsonl · OpenAI messages · 2 conversations · 8 turns"))
           ).to_be_visible()
    wait_idle(page)
    shot("1-conversations-preview")

    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_role("button", name="Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    go_to(page, "Report")
    expect(bubbles(page)).to_have_count(4, timeout=RUN_TIMEOUT)  # the first conversation: the Arabic one

    arabic = main(page).locator('div.chat-text[dir="rtl"]').filter(has_text=ARABIC_A)
    expect(arabic).to_be_visible(timeout=RUN_TIMEOUT)
    looks = arabic.evaluate("e => [getComputedStyle(e).direction, getComputedStyle(e).textAlign]")
    assert looks == ["rtl", "right"], looks
    text_box, bubble_box = arabic.bounding_box(), bubbles(page).nth(1).bounding_box()
    assert text_box and bubble_box
    assert bubble_box["x"] + bubble_box["width"] - (text_box["x"] + text_box["width"]) < 40  # starts at the right
    expect(bubbles(page).nth(1).get_by_text("faithfulness").first).to_be_visible()  # this turn's scores
    shot("2-arabic-chat")

    page.get_by_role("button", name=re.compile(r"^Open the worst turn: kettle-markup, turn 4")).click()
    wait_idle(page)
    expect(page.get_by_role("combobox", name="Conversation")).to_have_value(
        re.compile(r"^#1 · kettle-markup"), timeout=RUN_TIMEOUT)
    first = bubbles(page).nth(0).locator("div.chat-text")
    expect(first).to_have_text(MARKUP, timeout=RUN_TIMEOUT)  # text, not HTML or Markdown
    expect(bubbles(page)).to_have_count(4)
    assert first.locator("b, strong").count() == 0
    worst = bubbles(page).nth(3)
    expect(worst.get_by_text("worst turn of this conversation")).to_be_visible()
    expect(worst.get_by_text("Parrots like warm weather.")).to_be_visible()
    worst.scroll_into_view_if_needed()
    shot("3-worst-turn")
