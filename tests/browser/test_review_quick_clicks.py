"""Quick clicks on the Review page, in real Chromium: ten "Agree with all and next" clicks 100 ms
apart store ten reviews, one per sample, in queue order, and the page ends idle (not greyed)."""
from __future__ import annotations

import re

import pytest

from evaluator.store.history import RunStore
from evaluator.model import EvalResult, EvalSample, MetricScore
from evaluator.store.reviews import ReviewStore

from .test_dashboard import RUN_TIMEOUT, main, wait_idle
from .test_review_desk import open_review

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

pytestmark = pytest.mark.browser
N_SAMPLES, CLICKS = 12, 10


def stored_run(history_path) -> str:
    """A finished run of twelve samples whose judged scores rise with their index (worst first = index order)."""
    runs = RunStore(history_path)
    samples = [EvalSample(f"Which tram line is number {i}?", f"Line {i} runs along the harbour.",
                          [f"Tram line {i} follows the harbour road."], sample_id=f"s{i}") for i in range(N_SAMPLES)]
    run_id = runs.create_run(dataset_name="quick-clicks", samples=samples, settings={"judge": "openai", "model": "m"})
    for i, sample in enumerate(samples):
        runs.record_result(run_id, i, EvalResult(sample.sample_id, sample=sample, scores={
            "faithfulness": MetricScore("faithfulness", i / N_SAMPLES, method="llm")}))
    runs.finish_run(run_id)
    return run_id


def test_ten_quick_agree_clicks_store_ten_reviews_in_order(page: Page, app_url, history_path):
    run_id = stored_run(history_path)
    open_review(page, app_url, run_id, "ana")
    expect(main(page).get_by_text(re.compile(r"Sample 1 of 12"))).to_be_visible(timeout=RUN_TIMEOUT)
    # The page's click counter (pages/_clicks.py) loads after the page is drawn: a click before it is a plain
    # Streamlit trigger, and two of those in one rerun are one. A person's first click comes later than this.
    page.wait_for_function("window.__ragmeterClickListener === true", timeout=RUN_TIMEOUT)

    for _ in range(CLICKS):  # a reviewer who trusts the judge, clicking as fast as the page lets them
        main(page).get_by_role("button", name=re.compile("Agree with all and next")).click(timeout=RUN_TIMEOUT)
        page.wait_for_timeout(100)
    wait_idle(page)

    expect(main(page).get_by_text(re.compile(rf"Sample {CLICKS + 1} of 12"))).to_be_visible(timeout=RUN_TIMEOUT)
    reviews = ReviewStore(RunStore(history_path)).reviews(run_id)
    assert [(r.index, r.verdict, r.reviewer) for r in reviews] == [(i, "agree", "ana") for i in range(CLICKS)]
    # nothing left greyed: no element of the page is stale once the runs are over
    expect(page.locator('[data-stale="true"]')).to_have_count(0, timeout=RUN_TIMEOUT)
