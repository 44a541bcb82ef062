"""The docs' pictures of the dashboard, one per page, taken from the dashboard `ragmeter dashboard` starts.

The command a newcomer runs (README, docs/getting-started.md) is the one started here: `ragmeter dashboard
--port N`, the offline judge, the bundled sample data, a history of its own. The test opens every page of
the navigation in headless Chromium, runs the sample evaluation from the Evaluate page, and saves each page
to artifacts/screenshot-<page>.png; with RAGMETER_UPDATE_SCREENSHOTS=1 it also writes them to docs/images/
(dashboard-<page>.png), the pictures the docs site shows:

    RAGMETER_UPDATE_SCREENSHOTS=1 .venv/bin/python -m pytest -n0 -m browser tests/browser/test_screenshots.py
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

from .pw import Page, expect

from evaluator.collect.alerts import AlertMonitor, parse_rule
from evaluator.store.history import RunStore
from live_runs import write_live_runs
from ports import serve_on_free_port, stop
from teamfiles import SERVER_START_TIMEOUT, healthy

from pages._pages import PAGES
from pages._pages import Page as Registered

from .conftest import ARTIFACTS, ROOT

pytestmark = pytest.mark.browser

DOCS = ROOT / "docs"
RUN_TIMEOUT = 90_000  # ms


@pytest.fixture(scope="module")
def dashboard(tmp_path_factory) -> Iterator[str]:
    """`ragmeter dashboard --port N` as a user types it (the venv's own script), on a fresh history holding two
    days of a production project's live runs (a deploy, a drop, its alert), for the Monitor page's picture."""
    folder = Path(tempfile.mkdtemp(prefix="ragmeter-"))  # short: the sidebar shows it in the pictures
    store = RunStore(folder / "history.sqlite3")
    write_live_runs(store, "shop-bot", 288, version=lambda i: "v1" if i < 150 else "v2",
                    scores=lambda i: {"faithfulness": 0.62 if 150 <= i < 200 else 0.88 - (i % 7) / 100,
                                      "answer_relevancy": 0.8 + (i % 5) / 100})
    AlertMonitor(store, "shop-bot", [parse_rule("faithfulness < 0.75 over 20")], since="").poll()
    store.close()
    env = {**os.environ, "RAGMETER_HISTORY": str(folder / "history.sqlite3")}
    for name in ("OPENAI_API_KEY", "RAGMETER_CONFIG"):
        env.pop(name, None)
    script = Path(sys.executable).with_name("ragmeter")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "evaluator"]
    log = tmp_path_factory.mktemp("dashboard") / "server.log"
    proc, port = serve_on_free_port(lambda port: command + ["dashboard", "--port", str(port)],
                                    lambda port: healthy(f"http://127.0.0.1:{port}"), log, SERVER_START_TIMEOUT,
                                    cwd=tempfile.gettempdir(), env=env)  # from any folder, not the checkout
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(proc)
        shutil.rmtree(folder, ignore_errors=True)


def settle(page: Page) -> None:
    """Until Streamlit has finished drawing: its running indicator gone for a moment."""
    page.wait_for_selector('[data-testid="stSidebar"]')
    quiet_since = None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.5:
            return
        page.wait_for_timeout(200)


def save(page: Page, entry: Registered) -> Path:
    """The page's screenshot in artifacts/, and (RAGMETER_UPDATE_SCREENSHOTS=1) at the picture its registration
    names (pages/_pages.PAGES), which its docs page shows."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / f"screenshot-{entry.slug}.png"
    page.screenshot(path=str(path))
    if os.environ.get("RAGMETER_UPDATE_SCREENSHOTS") == "1":
        (DOCS / entry.picture).parent.mkdir(exist_ok=True)
        shutil.copyfile(path, DOCS / entry.picture)
    return path


def test_every_dashboard_page_from_ragmeter_dashboard(dashboard, page):
    page.goto(dashboard)
    expect(page.get_by_role("button", name="Run evaluation")).to_be_visible(timeout=RUN_TIMEOUT)
    settle(page)
    evaluate, report, *others = PAGES  # the first two are drawn with a finished run; the others as they open
    shots = [save(page, evaluate)]
    page.get_by_role("button", name="Run evaluation").click()
    expect(page.get_by_role("button", name="Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    page.get_by_role("button", name="Open report").click()
    expect(page.get_by_text("faithfulness").first).to_be_visible(timeout=RUN_TIMEOUT)
    # The Report's picture reaches down to the means chart (the README shows it): a taller window, the chart drawn.
    page.set_viewport_size({"width": 1400, "height": 1400})
    chart = page.locator('[data-testid="stVegaLiteChart"]').first.locator("svg.marks")
    expect(chart).to_be_visible(timeout=RUN_TIMEOUT)
    settle(page)
    page.locator('[data-testid="stMain"]').evaluate("el => el.scrollTo(0, 0)")
    page.mouse.move(1390, 600)  # an empty margin: no hover toolbar or tooltip in the picture
    page.wait_for_timeout(500)
    shots.append(save(page, report))
    page.set_viewport_size({"width": 1400, "height": 1000})
    for entry in others:
        page.goto(f"{dashboard}/{entry.url_path}")
        settle(page)
        if entry.slug == "monitor":  # the live runs drawn: one chart per metric
            expect(page.locator('[data-testid="stVegaLiteChart"]')).to_have_count(2, timeout=RUN_TIMEOUT)
            settle(page)
        expect(page.get_by_text("The dashboard cannot start")).to_have_count(0)
        expect(page.locator('[data-testid="stException"]')).to_have_count(0)
        shots.append(save(page, entry))
    assert [p.stat().st_size > 10_000 for p in shots] == [True] * len(PAGES)  # a drawn page, not a blank one
