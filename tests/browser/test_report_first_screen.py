"""The Report's first screen tells the story (issue 40): on a 1400×900 window the headline, the chart, the share
link and the HTML/PDF/chart downloads are all visible without scrolling (the rows' files right under the chart); the samples table counts from 1 and has no empty
padding rows; the PDF summary downloads with the run's provenance and overall score in its text."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the fixtures skip (or fail under CI) with the reason
    pass

from evaluator import EvalSample, Run, RunConfig, RunStore

RUN_TIMEOUT = 60_000
SCREEN = {"width": 1400, "height": 900}


def finished_run(history: Path, rows: list, config: RunConfig, dataset: str) -> str:
    """`rows` scored offline into the history (project: the dataset's stem); the run's id."""
    run = Run.new(config, rows, dataset_name=dataset, store=RunStore(history), project=Path(dataset).stem)
    run.start().join()
    assert run.status == "finished", run.error
    return run.run_id


def stored_run(history: Path) -> str:
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes, within {i + 2} days.",
                       [f"Policy {i}: it says yes, within {i + 2} days."], sample_id=f"q-{i}") for i in range(3)]
    config = RunConfig(metrics=["faithfulness", "answer_relevancy", "context_precision", "context_recall"])
    return finished_run(history, rows, config, "first-screen.jsonl")


def wait_idle(page: "Page") -> None:
    page.wait_for_timeout(200)
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT)


def on_first_screen(locator) -> None:
    expect(locator).to_be_visible(timeout=RUN_TIMEOUT)
    box = locator.bounding_box()
    assert box is not None and 0 <= box["y"] and box["y"] + box["height"] <= SCREEN["height"], box


@pytest.mark.browser
def test_headline_chart_share_and_downloads_fit_the_first_900_pixels(page, app_url, history_path, shot):
    run_id = stored_run(history_path)
    page.set_viewport_size(SCREEN)
    page.goto(f"{app_url}/report?run={run_id}")
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    on_first_screen(main.locator('[class*="st-key-card_0_overall"]'))
    on_first_screen(page.get_by_role("button", name="Copy link"))
    on_first_screen(page.get_by_role("button", name="Download HTML report"))
    on_first_screen(page.get_by_role("button", name="Download PDF summary"))
    # The rows' files (CSV, Excel, JSON, Parquet) sit right under the chart, one short scroll away.
    chart = main.locator('[data-testid="stVegaLiteChart"]').first.bounding_box()
    csv = page.get_by_role("button", name="Download CSV").bounding_box()
    assert chart is not None and csv is not None and 0 < csv["y"] - (chart["y"] + chart["height"]) < 120, (chart, csv)
    on_first_screen(main.locator('[data-testid="stVegaLiteChart"]').first.locator("svg.marks"))
    shot("first-screen")
    # No reviewer's jargon on the headline cards (it lives in the review section).
    expect(main.locator('[data-testid="stMetric"]').first).not_to_contain_text("reviewers agree")

    with page.expect_download() as download:
        page.get_by_role("button", name="Download PDF summary").click()
    assert download.value.suggested_filename == f"ragmeter-first-screen-{run_id}-summary.pdf"
    from pypdf import PdfReader

    text = " ".join(p.extract_text() for p in PdfReader(download.value.path()).pages)
    assert run_id in text and "first-screen.jsonl" in text and "3/3 rows scored" in text
    assert PdfReader(download.value.path()).pages[0].mediabox[2:] == [595, 842]  # A4 whatever the content
    assert re.search(r"Overall score \d\.\d{3}", text), text


@pytest.mark.browser
def test_the_samples_table_counts_from_1_without_padding_rows(page, app_url, history_path):
    run_id = stored_run(history_path)
    page.set_viewport_size(SCREEN)
    page.goto(f"{app_url}/report?run={run_id}")
    wait_idle(page)
    grid = page.get_by_test_id("stMainBlockContainer").locator('[data-testid="stDataFrame"]').filter(
        has_text="sample_id")
    grid.scroll_into_view_if_needed()
    expect(grid).to_be_visible(timeout=RUN_TIMEOUT)
    box = grid.bounding_box()
    assert box is not None and box["height"] <= 38 + 35 * 3 + 2 + 2, box  # three rows, no empty ones below
    combo = page.get_by_role("combobox", name="Sample")
    combo.scroll_into_view_if_needed()
    expect(combo).to_have_value(re.compile(r"^#1 · q-0"))
