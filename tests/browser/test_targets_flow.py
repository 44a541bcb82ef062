"""The "call my pipeline" flow in real Chromium: a questions-only upload, the demo pipeline served over
HTTP from this test process, Test target, a run with both progress stages, and the Report's target
section and drill-down."""
from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from .test_dashboard import RUN_TIMEOUT, go_to, main, open_app, upload, wait_idle

try:
    from playwright.sync_api import expect
except ImportError:  # the module above already skipped or failed
    pass

from target_server import demo_pipeline

pytestmark = pytest.mark.browser
QUESTIONS = [
    ("p1", "How much does a day pass cost?", "9 euros", "Day passes"),
    ("p2", "How far can I ride on one battery charge?", "50 kilometres", "Electric bikes"),
    ("p3", "When can I reach support by chat?", "7:00; 22:00", "Contacting support"),
]


@pytest.fixture
def pipeline_url():
    with demo_pipeline() as url:
        yield f"{url}/ask"


@pytest.fixture
def questions_csv(tmp_path) -> Path:
    path = tmp_path / "pipeline_questions.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "expected_answer_keywords", "expected_docs"])
        writer.writerows(QUESTIONS)
    return path


def test_http_target_flow_test_run_report(page, app_url, pipeline_url, questions_csv, shot):
    open_app(page, app_url)
    page.locator('[data-testid="stRadioOption"]').filter(has_text="call my pipeline (HTTP endpoint)").click()
    wait_idle(page)
    upload(page, questions_csv)
    page.get_by_role("textbox", name="Endpoint URL").fill(pipeline_url)
    page.get_by_role("textbox", name="Endpoint URL").press("Enter")
    wait_idle(page)
    page.get_by_role("button", name="Test target").click()
    wait_idle(page)
    expect(main(page).get_by_text(re.compile(r"Answer \(\d+ ms\): A day pass costs 9 euros"))).to_be_visible()
    expect(main(page).get_by_text(re.compile(r"^1\. Day passes"))).to_be_visible()
    shot("test-target")

    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_role("button", name="Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    expect(page.locator('[data-testid="stProgress"]').filter(has_text="3/3 samples scored")).to_be_visible()
    shot("run-done")

    go_to(page, "Report")
    cards = page.locator('[data-testid="stMetric"]')
    expect(cards.filter(has_text="Target calls")).to_contain_text("3")
    expect(cards.filter(has_text="Failed calls")).to_contain_text("0")
    expect(cards.filter(has_text="Latency p95")).to_contain_text("ms")
    expect(page.locator('[class*="st-key-card_"][class*="_expected_doc_recall"]')).to_contain_text("1.000")
    # the drill-down opens on the first sample: its answer came from the pipeline, with its latency
    # the drill-down is drawn after the cards and tables: on a loaded runner it can take longer than 5 s,
    # and a latency over a second is written with a thousands separator (1,234 ms)
    expect(main(page).get_by_text(re.compile(r"Answered by the target in [\d,]+ ms"))).to_be_visible(timeout=RUN_TIMEOUT)
    expect(main(page).get_by_text("A day pass costs 9 euros and gives unlimited rides of up to 45 minutes "
                                  "each for 24 hours.").first).to_be_visible()
    shot("report")
