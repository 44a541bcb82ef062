"""The Report tells its story on a laptop too (issue 46): at 1280×720 and 1400×900 every card's title is whole
(no `context_...`: scrollWidth equals clientWidth), every band pill sits inside its card, the header names the
run, its project and date, the notes open from the first screen, and /report with no run chosen opens the latest
finished run instead of "No report yet"; "Copy link" on a loopback address says the link works only here."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from .pw import Page, expect
from .test_report_first_screen import RUN_TIMEOUT, finished_run, wait_idle

from evaluator import EvalSample, RagmeterError, RunConfig, RunStore
from evaluator.store.notes import add_note

SCREENS = [{"width": 1280, "height": 720}, {"width": 1400, "height": 900}]
METRICS = ["faithfulness", "answer_relevancy", "context_precision", "context_recall", "answer_correctness"]


def five_metric_run(history: Path, dataset: str = "laptop-check.jsonl") -> str:
    rows = [EvalSample(f"What does clause {i} cover?", f"Clause {i} covers returns within {i + 3} days.",
                       [f"Clause {i}: returns within {i + 3} days."], ground_truth=f"Returns within {i + 3} days.",
                       sample_id=f"c-{i}") for i in range(4)]
    return finished_run(history, rows, RunConfig(metrics=METRICS), dataset)


def cards(page: "Page"):
    return page.get_by_test_id("stMainBlockContainer").locator('[class*="st-key-card_"]')


def title_cut(card) -> bool:
    """Whether the card's title text is cut (wider than the box that shows it)."""
    return card.locator('[data-testid="stMarkdownContainer"]').first.evaluate(
        "el => { const p = el.querySelector('p') || el; return p.scrollWidth > p.clientWidth; }")


def inside(inner: dict, outer: dict) -> bool:
    return (inner["x"] >= outer["x"] - 0.5 and inner["y"] >= outer["y"] - 0.5
            and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
            and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5)


@pytest.mark.browser
@pytest.mark.parametrize("screen", SCREENS, ids=lambda s: f"{s['width']}x{s['height']}")
def test_cards_keep_whole_titles_and_their_pills_on_small_screens(page, app_url, history_path, shot, screen):
    run_id = five_metric_run(history_path)
    add_note(RunStore(history_path), run_id, "Clause 2 <b>answers</b> quote the old policy", author="dana")
    page.set_viewport_size(screen)
    page.goto(f"{app_url}/report?run={run_id}")
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    expect(main.get_by_text("laptop-check.jsonl · offline heuristics (default) ·")).to_be_visible(timeout=RUN_TIMEOUT)
    expect(main.get_by_text("project laptop-check")).to_be_visible()
    expect(cards(page)).to_have_count(1 + len(METRICS))
    for title in ("Overall", "Faithfulness", "Answer relevancy", "Context precision", "Context recall",
                  "Answer correctness"):
        card = cards(page).filter(has=page.get_by_text(title, exact=True))
        expect(card).to_have_count(1)
        assert not title_cut(card), title
        pill = card.locator("span[style*='border-radius']").bounding_box()
        box = card.bounding_box()
        assert pill is not None and box is not None and inside(pill, box), (title, pill, box)
    shot(f"cards-{screen['width']}")
    # The notes open from the first screen, shown as text.
    notes = page.get_by_role("button", name=re.compile(r"Notes \(1\)"))
    box = notes.bounding_box()
    assert box is not None and box["y"] + box["height"] <= screen["height"], box
    notes.click()
    expect(page.get_by_test_id("stPopoverBody").get_by_text("Clause 2 <b>answers</b> quote the old policy")).to_be_visible()


@pytest.mark.browser
def test_report_with_no_run_chosen_opens_the_latest_finished_run(page, app_url, history_path):
    five_metric_run(history_path, "older.jsonl")
    newest = five_metric_run(history_path, "newest-run.jsonl")
    page.set_viewport_size(SCREENS[0])
    page.goto(f"{app_url}/report")
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    expect(main.get_by_text(re.compile(r"^newest-run\.jsonl · offline heuristics"))).to_be_visible(timeout=RUN_TIMEOUT)
    expect(main.get_by_text("No report yet")).to_have_count(0)
    expect(page).to_have_url(re.compile(f"run={newest}"))


@pytest.mark.browser
def test_copy_link_on_a_loopback_server_says_it_works_only_here(page, app_url, history_path):
    run_id = five_metric_run(history_path, "share-me.jsonl")
    page.set_viewport_size(SCREENS[1])
    page.goto(f"{app_url}/report?run={run_id}")
    wait_idle(page)
    page.get_by_role("button", name="Copy link").click()
    expect(page.get_by_text("This link works only on this machine")).to_be_visible(timeout=RUN_TIMEOUT)
    link = page.locator('[data-testid="stCode"]').filter(has_text="/report?run=").first.inner_text().strip()
    assert re.fullmatch(rf"http://127\.0\.0\.1:\d+/report\?run={run_id}", link), link


HOSTILE_DATASET = "<img src=x onerror=alert(1)>\u202egpj.exe.jsonl"


@pytest.mark.browser
def test_a_hostile_run_name_is_shown_as_text_and_its_downloads_are_named_plainly(page, app_url, history_path):
    run_id = five_metric_run(history_path, HOSTILE_DATASET)
    name = "Q3 \u202eevil\u202c <b>bold</b> " + "x" * 95  # a long name with markup and a bidi override
    with pytest.raises(RagmeterError, match="a name may have at most 120"):
        RunStore(history_path).rename_run(run_id, name + "x" * 180)  # 300 characters: refused, saying the limit
    RunStore(history_path).rename_run(run_id, name)
    page.set_viewport_size(SCREENS[0])
    page.goto(f"{app_url}/report?run={run_id}")
    wait_idle(page)
    main = page.get_by_test_id("stMainBlockContainer")
    expect(main.get_by_text("<b>bold</b>", exact=False).first).to_be_visible(timeout=RUN_TIMEOUT)  # as typed
    expect(main.locator("img[src=x]")).to_have_count(0)
    expect(main.locator("b", has_text="bold")).to_have_count(0)
    for button in ("Download HTML report", "Download PDF summary"):
        with page.expect_download() as download:
            page.get_by_role("button", name=button).click()
        shown = download.value.suggested_filename
        assert re.fullmatch(rf"ragmeter-img-src-x-onerror-alert-1-gpj-exe-{run_id}-(report\.html|summary\.pdf)", shown), shown
