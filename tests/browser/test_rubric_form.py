"""The rubric form in real Chromium: define a metric in plain words, run offline, see it reported
as "needs a judge" in the cards and the drill-down (never a made-up number)."""
from __future__ import annotations

import re

import pytest

from evaluator import load_dataset

from .conftest import ROOT
from .test_dashboard import RUN_TIMEOUT, go_to, main, metric_cards, open_app, run_to_completion, wait_idle

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

pytestmark = pytest.mark.browser
N_SAMPLE = len(load_dataset(ROOT / "sample_data" / "sample.jsonl"))


def test_a_rubric_from_the_form_is_reported_as_needing_a_judge_offline(page: Page, app_url, shot):
    open_app(page, app_url)
    main(page).get_by_text(re.compile(r"^Rubric metrics \(0\)$")).click()
    form = page.locator('[data-testid="stForm"]')
    form.get_by_label("Name", exact=True).fill("politeness")
    form.get_by_label("Criteria", exact=True).fill("The answer is polite and professional: no sarcasm, no blame.")
    form.get_by_role("button", name="Add rubric").click()
    wait_idle(page)
    expect(main(page).get_by_text(re.compile(r"^Rubric metrics \(1\)$"))).to_be_visible()
    expect(main(page).get_by_text("need a judge, so they will be skipped")).to_be_visible()
    shot("rubric-form-added")
    run_to_completion(page, N_SAMPLE)
    go_to(page, "Report")
    cards = metric_cards(page)
    assert any(c.startswith("politeness N/A") for c in cards), cards
    expect(main(page).get_by_text("Needs a judge: this metric has no offline heuristic.").first).to_be_visible(
        timeout=RUN_TIMEOUT)
    shot("rubric-report")
