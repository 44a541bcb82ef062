"""A page switch on a busy server: History's live list of runs is a fragment its browser timer reruns
every second; a tick that leaves while "Open in report" is on its way names History. The Report must be
drawn, and stay drawn (pages/_stale_timers.py): such a tick, run after the Report, blanked it; run as a
fragment of the Report instead, it still blanked it, as its start reached the browser with the Report's end.

The race is made certain, not hoped for, by routing the WebSocket through the test (Playwright):
- after the click, the server's messages to the browser are held for 2.5 s, so the browser still shows
  History and its timer fires at least twice; then they are delivered at once, in order, as a slow
  network delivers them;
- the timer's ticks are held too, and sent to the server the moment it starts drawing the Report (the
  tick the browser sent last before the click, again, when none left since): they arrive while the
  Report's run is in progress, as they do on a loaded server.
Without the guard the Report's main area was blank in 3 tries of 3; with its first form (the tick run as
the Report's fragment), in 1 of 3."""
from __future__ import annotations

import re
from typing import Any, List

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


def parsed(kind: Any, message: Any) -> Any:
    """A WebSocket frame read as Streamlit's protobuf `kind` (BackMsg from the browser, ForwardMsg to it)."""
    msg = kind()
    msg.ParseFromString(message if isinstance(message, bytes) else message.encode())
    return msg


def is_tick(message: Any) -> bool:
    """Whether a browser message is a fragment timer's rerun."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = parsed(BackMsg, message)
    return msg.WhichOneof("type") == "rerun_script" and bool(msg.rerun_script.fragment_id)


def new_page(message: Any) -> str:
    """The page a server message starts a run of ("" when it starts none)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = parsed(ForwardMsg, message)
    return msg.new_session.page_script_hash if msg.WhichOneof("type") == "new_session" else ""


class HeldServer:
    """The dashboard's WebSocket, through the test. While holding: the server's messages wait for
    `release`, and the browser's timer ticks wait until the server starts a run of a page other than
    `left` (the Report), then go to the server at once (the last tick before the hold, when none is held)."""

    def __init__(self, page: Page) -> None:
        self.holding, self.left, self.shown = False, "", ""
        self.held: List[Any] = []
        self.ticks: List[Any] = []
        self.last_tick: Any = None
        self.ticks_sent = 0
        page.route_web_socket(re.compile(r"/_stcore/stream"), self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()

        def from_server(message: Any) -> None:
            self.shown = new_page(message) or self.shown
            if not self.holding:
                ws.send(message)
                return
            self.held.append(message)
            if self.shown != self.left and not self.ticks_sent:
                for tick in self.ticks or [t for t in (self.last_tick,) if t is not None]:
                    server.send(tick)
                    self.ticks_sent += 1

        def from_browser(message: Any) -> None:
            tick = is_tick(message)
            if self.holding and self.shown == self.left and tick:
                self.ticks.append(message)
                return
            self.last_tick = message if tick else self.last_tick
            server.send(message)

        self.ws = ws
        server.on_message(from_server)
        ws.on_message(from_browser)

    def hold(self) -> None:
        self.left, self.holding = self.shown, True

    def release(self) -> None:
        while self.held:  # a message arriving while these are sent joins the end of the line
            self.ws.send(self.held.pop(0))
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

    route.hold()
    page.get_by_role("button", name="Open in report").click()
    page.wait_for_timeout(HOLD_MS)
    assert route.last_tick is not None and route.ticks_sent >= 1, "History's timer ticked into the Report's run"
    route.release()

    expect(page.get_by_role("heading", name=re.compile("Report"))).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    page.wait_for_timeout(1500)  # anything the server did with the ticks has reached the browser now
    wait_idle(page)
    expect(main(page).get_by_role("heading", name=re.compile("Report"))).to_be_visible()
    expect(main(page).get_by_role("heading", name="Samples")).to_be_visible()
