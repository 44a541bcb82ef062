"""In a real browser: a note added in one browser context shows in another (as text), and the History page's
comparison draws its compare chart, and says "Not comparable" (with no red verdict box) for runs scored
differently."""
from __future__ import annotations

import re

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixtures skip (or fail under CI) with the reason
    pass

from evaluator import EvalSample, RunConfig

from .test_report_first_screen import finished_run, wait_idle

RUN_TIMEOUT = 60_000
VIEWPORT = {"width": 1400, "height": 1000}
NOTE = "Checked with support: <b>fine</b> **really** @everyone"


def stored_run(history, **config) -> str:
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes.", [f"Policy {i}: it says yes."],
                       sample_id=f"q-{i}") for i in range(4)]
    return finished_run(history, rows, RunConfig(metrics=["faithfulness", "answer_relevancy"], **config),
                        "notes.jsonl")


@pytest.mark.browser
def test_a_note_added_in_one_browser_shows_in_another(browser, app_url, history_path):
    run_id = stored_run(history_path)
    writer = browser.new_context(viewport=VIEWPORT).new_page()
    reader = browser.new_context(viewport=VIEWPORT).new_page()
    try:
        writer.goto(f"{app_url}/report?run={run_id}")
        wait_idle(writer)
        box = writer.get_by_label("Add a note")
        box.scroll_into_view_if_needed()
        box.fill(NOTE)
        writer.get_by_role("button", name="Save note").click()
        wait_idle(writer)
        main = writer.get_by_test_id("stMainBlockContainer")
        expect(main.get_by_text(NOTE, exact=True)).to_be_visible(timeout=RUN_TIMEOUT)

        reader.goto(f"{app_url}/report?run={run_id}")
        wait_idle(reader)
        shown = reader.get_by_test_id("stMainBlockContainer").get_by_text(NOTE, exact=True)
        shown.scroll_into_view_if_needed()
        expect(shown).to_be_visible(timeout=RUN_TIMEOUT)
        assert shown.locator("b, strong, a").count() == 0  # text, not HTML or Markdown
    finally:
        writer.context.close()
        reader.context.close()


@pytest.mark.browser
def test_the_history_comparison_draws_its_chart_and_warns_of_different_scorers(page, app_url, history_path, shot):
    base, new = stored_run(history_path), stored_run(history_path, heuristics="jaccard")
    page.goto(f"{app_url}/history?compare={base},{new}")
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    warning = main.get_by_text(re.compile(r"Not comparable: scored by different heuristics \(default vs jaccard\)"))
    expect(warning.first).to_be_visible(timeout=RUN_TIMEOUT)
    assert main.get_by_text(re.compile("^Worse:")).count() == 0  # no verdict box between different scorers
    chart = main.locator('[data-testid="stVegaLiteChart"]').filter(has_text="Difference")
    chart.first.scroll_into_view_if_needed()
    svg = chart.first.locator("svg.marks")
    expect(svg).to_be_visible(timeout=RUN_TIMEOUT)
    expect(svg).to_contain_text("candidate − baseline (95% CI)")
    box = svg.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 80, box
    shot("compare-chart")
