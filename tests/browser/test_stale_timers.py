"""A page switch on a busy server: History's live list of runs is a fragment its browser timer reruns
every second; a tick that leaves while "Open in report" is on its way names History. The Report must stay
drawn (it went blank in CI: pages/_stale_timers.py).

The busy server is made certain, not hoped for: the test holds the server's messages to the browser for
2.5 s after the click (Playwright's WebSocket routing), so the browser still shows History, and its timer
fires at least twice, before it hears of the Report; then every held message is delivered, in order."""
from __future__ import annotations

import re

import pytest

from evaluator import EvalSample, RunConfig

from .test_dashboard import RUN_TIMEOUT, go_to, main, open_app, wait_idle
from .test_report_first_screen import finished_run

try:  # after test_dashboard, which skips (or, under CI=true, fails) this module without Playwright
    from playwright.sync_api import Page, expect
except ImportError:
    pass

pytestmark = pytest.mark.browser
HOLD_MS = 2500  # more than two ticks of History's timer (pages/_runs.py LIST_POLL)


class HeldServer:
    """Routes the dashboard's WebSocket through the test: the server's messages reach the page at once,
    or, while held, only when released; the page's messages reach the server at once, and are counted."""

    def __init__(self, page: Page) -> None:
        self.holding, self.held, self.sent = False, [], 0
        page.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        server.on_message(lambda message: self.held.append((ws, message)) if self.holding else ws.send(message))
        ws.on_message(lambda message: (setattr(self, "sent", self.sent + 1), server.send(message)))

    def release(self) -> None:
        while self.held:  # a message arriving while these are sent joins the end of the line
            ws, message = self.held.pop(0)
            ws.send(message)
        self.holding = False


def stored_run(history) -> str:
    rows = [EvalSample(f"What does policy {i} say?", f"Policy {i} says yes.", [f"Policy {i}: it says yes."],
                       sample_id=f"q-{i}") for i in range(3)]
    return finished_run(history, rows, RunConfig(metrics=["faithfulness"]), "timers.jsonl")


def test_a_timer_of_the_page_left_behind_does_not_blank_the_report(page: Page, app_url, history_path):
    stored_run(history_path)
    route = HeldServer(page)
    open_app(page, app_url)
    go_to(page, "History")
    expect(page.get_by_role("combobox", name="Run")).to_be_visible()
    wait_idle(page)

    route.holding = True
    before = route.sent
    page.get_by_role("button", name="Open in report").click()
    page.wait_for_timeout(HOLD_MS)
    assert route.sent - before >= 2, "History's timer ticked while the switch was held"  # the click, and a tick
    route.release()

    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    page.wait_for_timeout(1500)  # the server runs the held ticks after the Report's run: they have arrived now
    wait_idle(page)
    expect(main(page).get_by_role("heading", name=re.compile("Report"))).to_be_visible()
    expect(main(page).get_by_role("heading", name="Samples")).to_be_visible()
