"""The review desk in real Chromium: claims marked on an English and an Arabic sample (screenshots),
a review recorded with a keyboard shortcut, and the queue moving on."""
from __future__ import annotations

import re

import pytest

from evaluator.store.history import RunStore
from evaluator.model import EvalResult, MetricScore
from evaluator.store.reviews import ReviewStore
from review_samples import OCTOPUS, OCTOPUS_CLAIMS

from .test_dashboard import RUN_TIMEOUT, main, wait_idle

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

pytestmark = pytest.mark.browser
SAMPLES, CLAIMS = OCTOPUS, OCTOPUS_CLAIMS


def stored_run(history_path) -> str:
    runs = RunStore(history_path)
    run_id = runs.create_run(dataset_name="review-desk", samples=SAMPLES, settings={"judge": "openai", "model": "m"})
    for i, (sample, claims) in enumerate(zip(SAMPLES, CLAIMS)):
        verdicts = [{"claim": c, "verdict": v} for c, v in claims]
        runs.record_result(run_id, i, EvalResult(sample.sample_id, sample=sample, scores={
            "faithfulness": MetricScore("faithfulness", 0.5 + i / 2, method="llm_blend", verdicts=verdicts)}))
    runs.finish_run(run_id)
    return run_id


def open_review(page: Page, app_url: str, run_id: str, reviewer: str) -> None:
    """The Review page of `run_id`, the reviewer's name typed in."""
    page.goto(f"{app_url}/review?run={run_id}")
    expect(page.get_by_role("heading", name=re.compile("Review"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    name = page.get_by_role("textbox", name="Your name")
    name.fill(reviewer)
    name.press("Enter")
    wait_idle(page)


def test_claims_are_marked_and_a_shortcut_records_the_review(page: Page, app_url, history_path, shot):
    run_id = stored_run(history_path)
    open_review(page, app_url, run_id, "ana")
    unsupported = main(page).locator("mark.bad").first
    expect(unsupported).to_have_text("costs 50 dollars")
    expect(main(page).locator("mark.evidence").first).to_contain_text("Launched in September 1997")
    shot("review-claims-english")

    page.get_by_role("heading", name=re.compile("Review")).click()  # focus leaves the name field
    page.keyboard.press("a")  # agree with every metric and move on
    wait_idle(page)
    expect(main(page).get_by_text(re.compile(r"Sample 2 of 2"))).to_be_visible(timeout=RUN_TIMEOUT)
    (review,) = ReviewStore(RunStore(history_path)).reviews(run_id)
    assert (review.index, review.verdict, review.reviewer) == (0, "agree", "ana")

    arabic = main(page).locator('div[dir="rtl"] mark.ok').first
    expect(arabic).to_have_text("أُطلقت بطاقة أوكتوبس عام ١٩٩٧")
    box = arabic.bounding_box()
    block = main(page).locator('div[dir="rtl"]').first.bounding_box()
    # right to left: the first words of the sentence sit at the right edge of their block
    assert box["x"] + box["width"] > block["x"] + block["width"] * 0.6
    shot("review-claims-arabic")
