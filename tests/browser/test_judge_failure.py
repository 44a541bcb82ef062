"""The real dashboard in real Chromium against a judge that rejects the key: the Evaluate page stops
the run and says so in a red box (HTTP 401, the API-key fix), never a green "Done".

The judge is a loopback OpenAI-compatible server (tests/openai_server.py) answering every call
with HTTP 401, as a hosted API does for a wrong key.
"""
from __future__ import annotations

import re

import pytest

from evaluator.store.history import RunStore
from openai_server import ChatServer, error

# test_dashboard imports Playwright: it fails there in CI and skips this module elsewhere when missing.
from .test_dashboard import ROWS, RUN_TIMEOUT, _write_csv, expect, main, open_app, upload, wait_idle

pytestmark = pytest.mark.browser

DATASET = "judge_401_check.csv"


def choose_judge(page, base_url: str) -> None:
    """Pick the OpenAI-compatible judge, point it at `base_url`, and leave the judge cache off."""
    page.locator('[data-testid="stRadioOption"]').filter(has_text="OpenAI-compatible API").click()
    wait_idle(page)
    base = page.get_by_role("textbox", name="Base URL")
    base.fill(base_url)
    base.press("Tab")  # a value left with Tab is used, not only one confirmed with Enter
    wait_idle(page)
    cache = page.get_by_role("checkbox", name="Judge cache")
    if cache.is_checked():
        page.locator('[data-testid="stCheckbox"]').filter(has_text="Judge cache").click()
        wait_idle(page)
    expect(cache).not_to_be_checked()


def test_a_judge_answering_401_shows_the_red_box_and_no_done(page, app_url, tmp_path, history_path, shot):
    data = _write_csv(tmp_path / DATASET, ROWS[:3])
    with ChatServer(default=error(401, "Incorrect API key provided")) as srv:
        open_app(page, app_url)
        upload(page, data)
        choose_judge(page, srv.base_url)
        shot("1-judge-set")
        page.get_by_role("button", name="Run evaluation").click()
        box = main(page).locator('[data-testid="stAlertContentError"]').filter(
            has_text="The run stopped: the judge failed.")
        expect(box).to_be_visible(timeout=RUN_TIMEOUT)
        calls = len(srv.chat_requests)
        wait_idle(page)
    shot("2-red-box")
    # The page puts an invisible word joiner after "http:" so Streamlit cannot turn a URL from the
    # judge's message into a link (pages/_errors.unlinked): a reader sees the URL as it was.
    text = " ".join(box.inner_text().replace("\u2060", "").split())
    assert re.search(r"Judge rejected the request: HTTP 401 Unauthorized from http://127\.0\.0\.1:\d+/v1", text), text
    assert "check the API key (type it under Judge, or set OPENAI_API_KEY)" in text
    assert "resume it from the History page" in text
    expect(main(page).locator('[data-testid="stAlertContentSuccess"]')).to_have_count(0)
    expect(main(page).get_by_text(re.compile(r"^Done"))).to_have_count(0)
    expect(page.get_by_role("button", name="Run evaluation")).to_be_enabled()  # the run has ended
    assert 0 < calls < 3 * 5, f"{calls} judge calls: a 401 must stop the run, not be retried per metric"
    runs = [r for r in RunStore(history_path).list_runs() if r.dataset_name == DATASET]
    assert [r.status for r in runs] == ["stopped"]
