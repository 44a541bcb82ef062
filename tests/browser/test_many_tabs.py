"""Issue 42, untried: many browser tabs against one dashboard. Real Chromium tabs (each its own session)
against a real `streamlit run app.py`; the server process's RSS, threads and open file handles read from
/proc with one tab, with every tab open, and after they are closed. Each tab must cost a bounded amount,
and closing them must give the threads and file handles back (a leak per session would exhaust a team
server over a working day).

Streamlit keeps a closed tab's session for `server.disconnectedSessionTTL` (120 s by default: a tab that
reconnects finds its state), with its script event loop (an epoll and a socket pair) and its history
connection, in a store of at most 128 that drops expired sessions only when it is next written (a tab
closing); the test sets the TTL to 5 s and closes one more tab after it, so that what must come back
is seen coming back.

Streamlit 1.67 serves its files through Starlette, whose AnyIO worker pool (at most 28 threads) grows
while a tab loads and stops an idle worker only when it next serves a file, after 10 s idle. Those are
a bounded pool, not a cost per tab: the test lets them go idle and asks for a page while it waits, as
the next visitor would (CI once saw 4 of them still parked when it was read with no request coming)."""
from __future__ import annotations

import os
import time
import urllib.request
from pathlib import Path
from typing import Dict

import pytest

from ports import stop
from teamfiles import start_dashboard

from .test_dashboard import RUN_TIMEOUT, expect, wait_idle

TABS = 6


def usage(pid: int) -> Dict[str, float]:
    """The process's resident memory (MB), threads and open file handles, children included."""
    pids = [pid] + [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    rss = threads = fds = 0.0
    for p in pids:
        status = dict(line.split(":", 1) for line in Path(f"/proc/{p}/status").read_text().splitlines() if ":" in line)
        rss += int(status["VmRSS"].split()[0]) / 1024
        threads += int(status["Threads"])
        fds += len(os.listdir(f"/proc/{p}/fd"))
    return {"rss": rss, "threads": threads, "fds": fds}


def open_tab(browser, url):
    context = browser.new_context()
    page = context.new_page()
    page.goto(url)
    expect(page.get_by_role("button", name="Run evaluation")).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)
    return context


POOL_IDLE_S = 10  # AnyIO's WorkerThread.MAX_IDLE_TIME


def settle(pid: int, key: str, at_most: float, url: str, timeout: float = 30.0) -> Dict[str, float]:
    """Usage once `key` is at most `at_most`, asking for the front page each turn (so the file pool
    stops its idle workers), or as it is at `timeout`."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = usage(pid)
        if found[key] <= at_most:
            return found
        with urllib.request.urlopen(url, timeout=10) as reply:
            reply.read()
        time.sleep(0.5)
    return usage(pid)


@pytest.mark.slow
def test_many_tabs_cost_a_bounded_amount_each_and_give_back_threads_and_handles(browser, tmp_path):
    env = {**os.environ, "RAGMETER_HISTORY": str(tmp_path / "history.sqlite3"),
           "STREAMLIT_SERVER_DISCONNECTED_SESSION_TTL": "5"}
    env.pop("OPENAI_API_KEY", None)
    proc, url = start_dashboard(env, tmp_path / "server.log")
    try:
        first = open_tab(browser, url)
        time.sleep(1.0)
        one = usage(proc.pid)
        tabs = [open_tab(browser, url) for _ in range(TABS)]
        time.sleep(1.0)
        many = usage(proc.pid)
        for context in tabs:
            context.close()
        time.sleep(6.0)  # past the TTL: the next tab closing sweeps the stored sessions
        open_tab(browser, url).close()
        after_threads = settle(proc.pid, "threads", one["threads"] + 2, url, timeout=POOL_IDLE_S + 50)
        after = settle(proc.pid, "fds", one["fds"] + 4, url, timeout=60)
        first.close()
        print(f"\none tab: {one}\n{TABS + 1} tabs: {many}\nclosed: threads {after_threads['threads']}, {after}")
        assert (many["rss"] - one["rss"]) / TABS < 40, many  # MB a tab: sessions hold no dataset
        assert many["threads"] - one["threads"] <= 2 * TABS, many  # no thread pool per tab beyond Tornado's
        assert after_threads["threads"] <= one["threads"] + 2, (one, after_threads)
        assert after["fds"] <= one["fds"] + 4, (one, after)  # every tab's socket and files closed
    finally:
        stop(proc)
