"""Monitor page in real Chromium: a seeded history's live runs drawn as charts (bands, points, deploy
marks), the alerts table, a point's click opening its run's report, and a clean console.

The dashboard runs on a history of its own (not the session's shared one): live runs of other tests'
projects must not appear in the History lists they count."""
from __future__ import annotations

import os
import re

import pytest

from evaluator.collect.alerts import AlertMonitor, parse_rule
from evaluator.store.history import RunStore
from live_runs import write_live_runs

from teamfiles import serve_dashboard
from .test_console_clean import LOAD_FAILED, UPSTREAM_PROBES
from .test_dashboard import RUN_TIMEOUT, main, wait_idle

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

pytestmark = pytest.mark.browser


def quality(i):
    return {"faithfulness": 0.5 if 80 <= i < 160 else 0.9, "answer_relevancy": 0.8}


@pytest.fixture(scope="module")
def seeded_app(playwright_api, tmp_path_factory):
    """(dashboard URL, shop's run ids): two days of the `shop` project with a deploy, a drop and its
    recovery (both alerts fired), served by a dashboard of its own."""
    folder = tmp_path_factory.mktemp("monitor")
    store = RunStore(folder / "history.sqlite3")
    runs = write_live_runs(store, "shop", 288, scores=quality, version=lambda i: "v1" if i < 80 else "v2")
    assert len(AlertMonitor(store, "shop", [parse_rule("faithfulness < 0.75 over 20")], since="").poll()) == 2
    env = {**os.environ, "RAGMETER_HISTORY": str(folder / "history.sqlite3")}
    env.pop("OPENAI_API_KEY", None)
    with serve_dashboard(env, folder / "server.log") as url:
        yield url, runs


def charts(page: Page):
    return main(page).locator('[data-testid="stVegaLiteChart"]')


def test_monitor_draws_each_metric_with_bands_deploys_and_alerts(page: Page, seeded_app, shot):
    url, runs = seeded_app
    failed, errors = [], []
    page.on("response", lambda r: failed.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.goto(f"{url}/monitor")
    expect(page.get_by_role("heading", name=re.compile("Monitor"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    expect(charts(page)).to_have_count(2, timeout=RUN_TIMEOUT)
    for i, metric in enumerate(("faithfulness", "answer_relevancy")):
        svg = charts(page).nth(i).locator("svg.marks")
        expect(svg).to_be_visible(timeout=RUN_TIMEOUT)
        expect(svg).to_contain_text(metric)
        box = svg.bounding_box()
        assert box is not None and box["width"] > 300 and box["height"] > 150, box
        marks = "g.role-mark"  # the data's marks, not the axes' ticks and grid
        expect(svg.locator(f"{marks}.mark-area path")).to_have_count(1)  # the band
        expect(svg.locator(f"{marks}.mark-line path")).to_have_count(1)  # the means
        # a point per hour over two days, and on faithfulness's chart the breach and the recovery
        expect(svg.locator(f"{marks}.mark-symbol path")).to_have_count(48 + (2 if metric == "faithfulness" else 0))
        expect(svg.locator(f"{marks}.mark-rule line")).to_have_count(1)  # the v1 -> v2 deploy
    alerts = main(page).locator('[data-testid="stDataFrame"]').nth(1)
    expect(alerts).to_be_visible()
    expect(page.get_by_role("heading", name="Alerts")).to_be_visible()
    shot("monitor")
    page.wait_for_timeout(1000)  # late requests (icons, fonts) come after the script run
    probes = [f"404 {url}/monitor/{probe}" for probe in UPSTREAM_PROBES]
    unexpected = [f for f in failed if f not in probes]
    assert not unexpected and not [e for e in errors if e != LOAD_FAILED], unexpected + errors


def test_clicking_a_point_opens_its_runs_report(page: Page, seeded_app):
    url, runs = seeded_app
    page.goto(f"{url}/monitor")
    expect(charts(page)).to_have_count(2, timeout=RUN_TIMEOUT)
    wait_idle(page)
    point = charts(page).first.locator("svg.marks g.mark-symbol path").first
    expect(point).to_be_visible()
    point.click(force=True)
    expect(page).to_have_url(re.compile(rf"/report\?run={runs[0]}$"), timeout=RUN_TIMEOUT)
    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    expect(main(page).get_by_text(runs[0], exact=True).first).to_be_visible()  # the run's id in the header
