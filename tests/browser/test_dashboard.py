"""The real dashboard in real Chromium: upload, offline run, progress, ± std chart, drill-down,
HTML download, page switches, Stop, and a screenshot of the Report page.

Each test gets a fresh browser context, so a fresh Streamlit session; the server and its history
database are shared by the session (runs are told apart by their dataset names).
Screenshots of every key step go to artifacts/ (gitignored). The docs'
pictures (the README's included) are taken by test_screenshots.py.
"""
from __future__ import annotations

import csv
import html
import json
import re
from pathlib import Path
from typing import List

import pytest

from .pw import Page, PlaywrightTimeoutError, expect

from evaluator import OfflineJudge, RAGEvaluator, load_dataset
from evaluator.store.history import RunStore
from evaluator.io.frames import read_results_parquet
from evaluator.model import METRICS

from .conftest import ROOT

pytestmark = pytest.mark.browser

RUN_TIMEOUT = 60_000  # ms: an offline run of a few rows takes a second or two
UPLOAD_NAME = "browser_check.csv"
# Our own little support-desk dataset. Row 3's question holds markup and an ampersand: the
# dashboard must show it as text and the HTML report must carry it escaped.
ROWS = [
    ("b1", "How long does standard delivery take?", "Standard delivery takes three to five working days.",
     ["Delivery: standard parcels arrive in three to five working days.", "Express parcels arrive next day."],
     "Three to five working days.", "delivery"),
    ("b2", "Can I change my delivery address after ordering?",
     "Yes, you can change it from the order page until the parcel is dispatched.",
     ["Orders: the delivery address can be edited on the order page until dispatch."],
     "Yes, until the parcel is dispatched.", "delivery"),
    ("b3", "Which payment cards do you accept?", "We accept Visa, Mastercard and American Express.",
     ["Payments: Visa, Mastercard and American Express are accepted. Cash is not accepted."],
     "Visa, Mastercard and American Express.", "payments"),
    ("b4", 'Does the "Team & Pro" plan include <b>priority</b> support?',
     "Yes, Team & Pro customers get priority support with a four hour response time.",
     ["Plans: the Team & Pro plan adds priority support, answered within four hours."],
     "Yes, with a four hour response time.", "plans"),
    ("b5", "Is there a student discount?", "Our office is open from nine to five.",
     ["Discounts: students get 40 percent off with a valid student card."],
     "Yes, 40 percent with a student card.", "plans"),
    ("b6", "How do I reset my password?", "Click 'Forgot password' on the sign-in page and follow the email link.",
     ["Account help: use the Forgot password link on the sign-in page; a reset email follows."],
     None, "account"),
    ("b7", "Can two people share one account?", "No, each account is for one person; add members instead.",
     ["Terms: accounts are personal. Teams should invite members from the settings page."],
     "No; invite team members.", "account"),
    ("b8", "Do you offer refunds on gift cards?", "Gift cards cannot be refunded.",
     ["Refunds: gift cards are not refundable and cannot be exchanged for cash."],
     "No, gift cards are not refundable.", "payments"),
]
DRILL_INDEX = 3  # the row with markup in its question


def _write_csv(path: Path, rows) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["sample_id", "question", "answer", "contexts", "ground_truth", "category"])
        for sid, question, answer, contexts, truth, category in rows:
            writer.writerow([sid, question, answer, json.dumps(contexts), truth or "", category])
    return path


def _big_rows(n: int):
    """n generated rows of varied text, enough that an offline run lasts long enough to stop."""
    for i in range(n):
        days = 2 + i % 5
        yield (f"g{i}", f"How many days does order {i} take to reach zone {i % 7}?",
               f"Order {i} reaches zone {i % 7} in {days} business days, tracked by email.",
               [f"Shipping table: zone {i % 7} parcels arrive in {days} business days.",
                f"Tracking: every order, including order {i}, gets an email with its tracking link.",
                "Returns are accepted within 30 days of delivery."],
               f"{days} business days", f"zone-{i % 3}")


# --- page helpers -------------------------------------------------------------------------------
def main(page: Page):
    """The page's main area (the sidebar repeats some captions)."""
    return page.get_by_test_id("stMainBlockContainer")


def open_app(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.get_by_role("button", name="Run evaluation")).to_be_visible(timeout=RUN_TIMEOUT)


def wait_idle(page: Page) -> None:
    """Wait until Streamlit's script run has finished (its "Running..." widget is gone)."""
    page.wait_for_timeout(200)  # let a just-triggered rerun start
    expect(page.locator('[data-testid="stStatusWidget"]')).to_have_count(0, timeout=RUN_TIMEOUT)


def go_to(page: Page, title: str) -> None:
    """Switch page through the sidebar navigation."""
    page.locator('[data-testid="stSidebarNavLink"]').filter(has_text=title).click()
    expect(page.get_by_role("heading", name=re.compile(title))).to_be_visible()
    wait_idle(page)


def upload(page: Page, path: Path) -> None:
    page.locator('[data-testid="stRadioOption"]').filter(has_text="Upload a file").click()
    # The dataset's uploader, not the rubric TOML importer further down the page.
    uploader = page.locator('[data-testid="stFileUploader"]').filter(has_not_text="Import rubrics")
    uploader.locator('input[type="file"]').set_input_files(str(path))
    expect(page.get_by_text(re.compile(rf"{re.escape(path.name)} · CSV · [\d,]+ rows"))).to_be_visible()
    wait_idle(page)


def run_to_completion(page: Page, n: int) -> None:
    expect(page.get_by_role("radio", name="Offline (no API key)")).to_be_checked()
    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_role("button", name="Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    progress = page.locator('[data-testid="stProgress"]').filter(has_text=f"{n}/{n} samples scored")
    expect(progress).to_be_visible()
    expect(progress.get_by_role("progressbar")).to_have_attribute("aria-valuenow", "100")


def metric_cards(page: Page) -> List[str]:
    """The Report page's metric cards as "<metric name> <value>" (the card's key names its metric; it shows the
    plain title, e.g. "Answer relevancy", with the technical name small)."""
    cards = page.locator('[class*="st-key-card_"]')
    expect(cards.first).to_be_visible()
    found = []
    for card in cards.all():
        name = re.search(r"st-key-card_\d+_(\S+)", card.get_attribute("class") or "")
        value = card.locator('[data-testid="stMetricValue"]').inner_text()
        found.append(f"{name.group(1) if name else '?'} {' '.join(value.split())}")
    return found


def means_chart_svg(page: Page):
    """The first Report chart (means ± 1 std) once Vega has drawn it (as SVG: few data points)."""
    svg = page.locator('[data-testid="stVegaLiteChart"]').first.locator("svg.marks")
    expect(svg).to_be_visible(timeout=RUN_TIMEOUT)
    return svg


def assert_means_chart_drawn(page: Page, n_metrics: int) -> None:
    """Bars and ±1 std whiskers are drawn, one per metric, with real size."""
    svg = means_chart_svg(page)
    box = svg.bounding_box()
    assert box is not None and box["width"] > 200 and box["height"] > 100, box
    expect(svg).to_contain_text("Mean score per metric (±1 std)")
    bars = svg.locator('g.mark-rect.role-mark[aria-roledescription="rect mark container"] > path')
    expect(bars).to_have_count(n_metrics)
    whiskers = svg.locator('g.mark-rule.role-mark > line')
    expect(whiskers).to_have_count(n_metrics)
    # Bars are horizontal, so a whisker runs along x; a vertical layout would use y2.
    ends = [(whiskers.nth(i).get_attribute("x2"), whiskers.nth(i).get_attribute("y2")) for i in range(n_metrics)]
    lengths = [abs(float(x or 0)) + abs(float(y or 0)) for x, y in ends]
    assert any(abs(length) > 1 for length in lengths), f"no visible std whisker: {lengths}"


def text_block(page: Page, text: str):
    """A drill-down text box (question, answer, context, reasoning) showing exactly `text`."""
    return main(page).locator("div[dir]").filter(has_text=text).filter(
        has_text=re.compile(rf"^\s*{re.escape(text)}\s*$"))


def choose(page: Page, combo, option) -> None:
    """Pick `option` (a locator) in the selectbox `combo`.

    The list is opened from the keyboard, and again if it did not open: after a screenshot, or
    while a late rerun redraws the page, Chromium loses the first click on the arrow and a rerun
    can close the list under us.
    """
    for _ in range(4):
        wait_idle(page)
        combo.focus()
        page.keyboard.press("ArrowDown")
        try:
            option.wait_for(state="visible", timeout=3_000)
            break
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")
    option.click()
    wait_idle(page)


def pick_sample(page: Page, index: int) -> None:
    """Choose the sample of row `index` (0-based) in the Report page's drill-down selectbox, labelled #index+1:
    the Report counts rows from 1 (issue 40)."""
    combo = page.get_by_role("combobox", name="Sample")
    choose(page, combo, page.get_by_role("option").filter(has_text=re.compile(rf"^#{index + 1} · ")))
    expect(combo).to_have_value(re.compile(rf"^#{index + 1} · "))


# --- tests --------------------------------------------------------------------------------------
@pytest.fixture
def upload_csv(tmp_path) -> Path:
    return _write_csv(tmp_path / UPLOAD_NAME, ROWS)


def test_upload_run_report_drilldown_download_and_page_switch(page, app_url, upload_csv, shot):
    open_app(page, app_url)
    upload(page, upload_csv)
    preview = page.locator("div.ragmeter-preview table")  # the preview: a plain table, its cells as text
    expect(preview).to_be_visible()
    expect(preview.locator("th")).to_have_text(["sample_id", "question", "answer", "contexts", "ground_truth", "category"])
    expect(preview).to_contain_text('Does the "Team & Pro" plan include <b>priority</b> support?')  # as typed
    assert preview.locator("b, strong, img, script").count() == 0
    shot("1-uploaded")

    run_to_completion(page, len(ROWS))
    expect(page.get_by_text(f"Done: {len(ROWS)} samples of {UPLOAD_NAME}")).to_be_visible()
    shot("2-run-finished")

    page.get_by_role("button", name="Open report").click()
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible()
    wait_idle(page)
    assert_means_chart_drawn(page, len(METRICS))
    cards = metric_cards(page)
    assert [c.split()[0] for c in cards] == ["overall", *METRICS]
    caption = main(page).get_by_text(re.compile(rf"^{UPLOAD_NAME} · {len(ROWS)} samples · .* status: finished"))
    expect(caption).to_be_visible()
    shot("3-report")

    # Drill-down: the row with markup in its question; its text and reasoning are shown as text.
    expected = RAGEvaluator(OfflineJudge()).evaluate(load_dataset(upload_csv)[DRILL_INDEX])
    pick_sample(page, DRILL_INDEX)
    question = ROWS[DRILL_INDEX][1]
    expect(text_block(page, question)).to_be_visible()
    for name in ("faithfulness", "answer_relevancy"):
        reasoning = getattr(expected, name).reasoning
        assert reasoning, f"the offline judge gave {name} no reasoning"
        expect(text_block(page, reasoning)).to_be_visible()
    expect(main(page).get_by_text("offline heuristic").first).to_be_visible()
    text_block(page, question).scroll_into_view_if_needed()
    shot("4-drilldown")

    # The HTML report: dataset text escaped, every metric named, the means chart embedded.
    with page.expect_download() as download:
        page.get_by_role("button", name="Download HTML report").click()
    assert re.fullmatch(r"ragmeter-browser_check-[0-9a-f]+-report\.html", download.value.suggested_filename)
    report_html = Path(download.value.path()).read_text(encoding="utf-8")
    assert html.escape(question, quote=True) in report_html
    assert "<b>priority</b>" not in report_html
    for sid, q, *_ in ROWS:
        assert html.escape(q, quote=True) in report_html, q
    for name in METRICS:
        assert name in report_html
    assert "<svg" in report_html and "Mean score per metric" in report_html
    assert f"{len(ROWS)} samples" in report_html

    # The Parquet download: one row per sample, every score the library gives, in input order.
    with page.expect_download() as download:  # right after the HTML download: downloads cause no rerun
        page.get_by_role("button", name="Download Parquet").click()
    assert re.fullmatch(r"ragmeter-browser_check-[0-9a-f]+-rows\.parquet", download.value.suggested_filename)
    downloaded = read_results_parquet(download.value.path())
    library = RAGEvaluator(OfflineJudge()).evaluate_dataset(load_dataset(upload_csv))
    assert [(i, r.sample_id, r.score_values()) for i, r in downloaded] == [
        (i, r.sample_id, r.score_values()) for i, r in enumerate(library.results)]

    # Leave the report and come back: the same run, the same numbers, the chart drawn again.
    go_to(page, "History")
    expect(page.get_by_role("combobox", name="Run")).to_have_value(re.compile(rf"^{UPLOAD_NAME} · offline heuristics \(default\) · .* · [0-9a-f]+$"))
    shot("5-history")
    go_to(page, "Evaluate")
    go_to(page, "Report")
    expect(caption).to_be_visible()
    assert metric_cards(page) == cards
    assert_means_chart_drawn(page, len(METRICS))
    shot("6-report-again")


def test_bundled_sample_run_shows_all_five_metrics(page, app_url, shot, artifacts_dir):
    open_app(page, app_url)
    n = len(load_dataset(ROOT / "sample_data" / "sample.jsonl"))
    run_to_completion(page, n)
    page.get_by_role("button", name="Open report").click()
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible()
    wait_idle(page)
    for name in METRICS:  # each card waited for: the cards of a long report are drawn one after another
        expect(page.locator(f'[class*="st-key-card_"][class*="_{name}"]')).to_contain_text(re.compile(r"\d\.\d{3}"))
    names = [c.split()[0] for c in metric_cards(page)]
    assert set(METRICS) <= set(names), names
    means_chart_svg(page).scroll_into_view_if_needed()
    page.wait_for_timeout(300)  # let the chart settle before the picture
    shot("report-sample-data")
    _readme_screenshot(page, artifacts_dir)


def _readme_screenshot(page: Page, artifacts_dir: Path) -> None:
    """The top of the Report page (cards, bands and the ± std chart), in artifacts/."""
    page.set_viewport_size({"width": 1400, "height": 1400})  # down to the chart's axis labels
    page.locator('[data-testid="stMain"]').evaluate("el => el.scrollTo(0, 0)")
    page.mouse.move(1390, 600)  # an empty margin: no hover toolbar, tooltip or sidebar button
    page.wait_for_timeout(500)
    path = artifacts_dir / "report.png"
    page.screenshot(path=str(path))


STOP_ROWS = 20_000


def _count(n: int) -> str:
    """A regex for n as the dashboard may print it: 20000 or 20,000."""
    return f"(?:{n}|{n:,})"


def test_stop_keeps_finished_rows(page, app_url, tmp_path, history_path, shot):
    data = _write_csv(tmp_path / "stop_check.csv", _big_rows(STOP_ROWS))
    total = _count(STOP_ROWS)
    open_app(page, app_url)
    upload(page, data)
    page.get_by_role("button", name="Run evaluation").click()
    progress = page.locator('[data-testid="stProgress"]').first
    expect(progress).to_contain_text(re.compile(rf"^[1-9][\d,]*/{total} samples scored"), timeout=RUN_TIMEOUT)
    shot("1-running")
    main(page).get_by_role("button", name=re.compile(r"^Stop( run)?$")).click()
    stopped = main(page).get_by_text(re.compile(rf"Stopped: ([\d,]+) of {total} samples scored, all kept"))
    expect(stopped).to_be_visible(timeout=RUN_TIMEOUT)
    kept = int(re.search(r"Stopped: ([\d,]+) of", stopped.inner_text()).group(1).replace(",", ""))
    assert 0 < kept < STOP_ROWS
    shot("2-stopped")

    page.get_by_role("button", name="Open report").click()
    expect(main(page).get_by_text(
        re.compile(rf"This run was stopped: {_count(kept)} of {total} samples are scored"))).to_be_visible()
    expect(main(page).get_by_text(
        re.compile(rf"^stop_check.csv · {_count(kept)} samples · .* status: stopped"))).to_be_visible()
    shot("3-report")

    go_to(page, "History")
    expect(page.get_by_role("combobox", name="Run")).to_have_value(re.compile(r"^stop_check.csv .* · stopped · "))
    shot("4-history")
    runs = [r for r in RunStore(history_path).list_runs() if r.dataset_name == "stop_check.csv"]
    assert [(r.status, r.n_done, r.n_samples) for r in runs] == [("stopped", kept, STOP_ROWS)]
