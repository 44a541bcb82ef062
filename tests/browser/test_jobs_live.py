"""Runs are jobs, seen from several browsers (real Chromium, the real team-mode dashboard behind the
sign-in proxy of tests/signin_proxy.py, one browser context per user):

- an evaluator starts a long offline run; a viewer and an admin, in their own browsers, see it live
  under "Runs in progress" (History, Report) while it is scored;
- the viewer gets no Stop; the admin stops it from History, and the evaluator's page, which polls the
  job, says it stopped with every finished row kept;
- the run in the history says the same (stopped, rows kept, the rest pending).
"""
from __future__ import annotations

import re
from typing import Iterator

import pytest

from evaluator.store.history import RunStore
from evaluator.store.jobs import JobQueue
from teamfiles import team_dashboard, team_judge, write_team

from .test_dashboard import _big_rows, _count, _write_csv, expect, main, upload, wait_idle

pytestmark = pytest.mark.browser

VIEWER, EVALUATOR, ADMIN = "vera@example.com", "eve@example.com", "alice@example.com"
ROWS = 300  # scored by a judge that answers after 0.2 s: minutes of run, while pages stay quick
LONG = 180_000  # ms: a page drawn while the worker scores shares its CPU on this 2-core machine


def team_options(history, judge_url: str) -> dict:
    """The team file of these tests (teamfiles.write_team's options): an evaluator, an admin, the team judge."""
    return dict(history=history, max_upload_mb=50, evaluators=[EVALUATOR, ADMIN], admins=[ADMIN],
                judges=[team_judge(judge_url, max_workers=2)])


@pytest.fixture(scope="module")
def team(browser, tmp_path_factory) -> Iterator[dict]:
    expect.set_options(timeout=180_000)  # pages drawn while the worker scores share its CPU
    folder = tmp_path_factory.mktemp("jobs_team")
    history = folder / "team.sqlite3"
    from openai_server import ChatServer

    # ~1 s of judge time a sample (3 calls: the server is not known to reuse a prompt prefix, so the context
    # metrics share a call): the run must outlast three browsers drawing their pages on 2 cores.
    with ChatServer(latency=0.35) as judge:
        config = write_team(folder, **team_options(history, judge.base_url))
        with team_dashboard(config, folder / "server.log", RAGMETER_JUDGE_CACHE=str(folder / "cache.sqlite3"),
                            TEAM_JUDGE_KEY="sk-team-test") as server:
            yield {"url": server.url, "history": history, "folder": folder}
    expect.set_options(timeout=5_000)


@pytest.fixture
def as_user(team, signed_in_page):
    """`as_user(name)`: a new page signed in as `name` through the team's proxy."""
    return lambda name: signed_in_page(team["url"], name)


def in_progress(page, dataset: str):
    """The live progress bar of `dataset`'s entry under "Runs in progress" (the bar's text names no
    dataset: the entry's heading line does, so the page must hold exactly one such entry)."""
    return main(page).locator('[data-testid="stProgress"]').filter(has_text=re.compile(r"samples scored"))


def heading(page, dataset: str):
    return main(page).get_by_text(re.compile(rf"{re.escape(dataset)} · started by"))


def stop_buttons(page):
    return main(page).get_by_role("button", name=re.compile("Stop run"))


def visit(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded", timeout=120_000)


def start_run(page, url: str, data, total: str) -> None:
    """Upload `data` on the Evaluate page, pick the team judge and run; wait for its first rows."""
    visit(page, url + "/")
    expect(page.get_by_role("button", name="Run evaluation")).to_be_visible(timeout=LONG)
    upload(page, data)
    combo = page.get_by_role("combobox", name="Judge", exact=True)
    combo.click()
    page.keyboard.type("team judge")
    page.keyboard.press("Enter")
    expect(combo).to_have_value("team judge")
    wait_idle(page)
    page.get_by_role("button", name="Run evaluation").click()
    expect(page.locator('[data-testid="stProgress"]').first).to_contain_text(
        re.compile(rf"[1-9][\d,]*/{total} samples scored"), timeout=LONG)


@pytest.mark.timeout(900)  # three browsers and a run share 2 cores: pages take minutes to draw
def test_a_run_is_watched_from_other_browsers_and_stopped_by_an_admin(team, as_user, tmp_path):
    data = _write_csv(tmp_path / "watched_run.csv", _big_rows(ROWS))
    total = _count(ROWS)
    eve = as_user(EVALUATOR)
    start_run(eve, team["url"], data, total)

    vera = as_user(VIEWER)  # another person, another browser: the run is live there too, read-only
    visit(vera, team["url"] + "/history")
    # the page puts a word joiner after "@" so Streamlit makes no mailto link of it (pages/_errors.unlinked)
    expect(heading(vera, "watched_run.csv")).to_contain_text(re.compile(r"started by eve@\u2060?example\.com"),
                                                            timeout=LONG)
    bar = in_progress(vera, "watched_run.csv")
    expect(bar).to_contain_text(re.compile(rf"[1-9][\d,]*/{total} samples scored"), timeout=LONG)
    first = _scored(bar)
    expect(bar).not_to_contain_text(re.compile(rf"^{first:,}/"), timeout=LONG)  # it moves, live
    expect(stop_buttons(vera)).to_have_count(0)
    visit(vera, team["url"] + "/report")  # no report open: the Report page shows what is running
    expect(heading(vera, "watched_run.csv")).to_be_visible(timeout=LONG)
    expect(in_progress(vera, "watched_run.csv")).to_contain_text(re.compile(rf"/{total} samples scored"))
    expect(stop_buttons(vera)).to_have_count(0)

    alice = as_user(ADMIN)  # an admin stops it from History
    visit(alice, team["url"] + "/history")
    expect(heading(alice, "watched_run.csv")).to_be_visible(timeout=LONG)
    expect(stop_buttons(alice)).to_have_count(1)
    stop_buttons(alice).click()

    stopped = main(eve).get_by_text(re.compile(rf"Stopped: ([\d,]+) of {total} samples scored, all kept"))
    expect(stopped).to_be_visible(timeout=LONG)  # the starter's page saw the job end
    kept = int(re.search(r"Stopped: ([\d,]+) of", stopped.inner_text()).group(1).replace(",", ""))
    expect(heading(vera, "watched_run.csv")).to_have_count(0, timeout=LONG)  # gone from the viewer's list
    store = RunStore(team["history"])
    (info,) = [r for r in store.list_runs() if r.dataset_name == "watched_run.csv"]
    assert (info.status, info.owner, info.n_done) == ("stopped", EVALUATOR, kept) and 0 < kept < ROWS
    job = JobQueue(store).get(info.run_id)
    assert job is not None and job.state == "ended" and job.stop_requested
    assert len(store.pending_samples(info.run_id)) == ROWS - kept
    wait_idle(eve)


def _scored(bar) -> int:
    text = bar.first.inner_text()
    found = re.search(r"([\d,]+)/", text)
    return int(found.group(1).replace(",", "")) if found else 0
