"""Team mode in real Chromium: the real `streamlit run app.py` with RAGMETER_CONFIG naming a team.toml,
its history on a real PostgreSQL, reached through a real sign-in proxy (tests/signin_proxy.py) that
turns each browser context's session cookie into the identity header, one browser context per user.

- roles: an unknown user sees the sign-in message and nothing else on every page; a viewer opens
  reports and the history but cannot upload, run, rename or delete; an evaluator runs; an admin
  renames and deletes; a share link opened by a second user opens straight to the run;
- secrets: the server's env holds a canary OPENAI_API_KEY (the team judge's key) and a canary
  AWS_SECRET_ACCESS_KEY. An evaluator types a listener's URL (and a path) into every text field of
  every page and presses every action button: the listener receives nothing, the canaries appear in
  no page, no history row, no export and no server log line, and the path creates no file. The team
  judge does get its own key: the canary is live, so the test can fail.
"""
from __future__ import annotations

import csv
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

try:
    from playwright.sync_api import Page, expect
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError
except ImportError:  # test_dashboard (imported below) already skipped or failed
    pass

from evaluator.store.history import RunStore
from teamfiles import HEADER, team_dashboard, team_judge, write_team
from evaluator.model import EvalResult, EvalSample
from evaluator.targets.http import DEFAULT_BODY

from .test_dashboard import RUN_TIMEOUT, choose, main, upload, wait_idle

pytestmark = pytest.mark.browser

VIEWER, EVALUATOR, ADMIN, CI_USER = "vera@example.com", "eve@example.com", "alice@example.com", "ci@example.com"
KEY_CANARY = "sk-canary-judge-key-7f3e91"
VAR_CANARY = "aws-canary-secret-0b52d4"
RAG_TOKEN = "rag-token-for-the-allowed-target"
SIGN_IN = "Sign in through your organisation's single sign-on"
NO_ROLE = re.compile("Your role does not let you")
PAGES = {"Evaluate": "/", "Report": "/report", "Spot check": "/spot_check", "Generate": "/generate",
         "History": "/history", "Review": "/review", "Monitor": "/monitor"}


# --- loopback servers ----------------------------------------------------------------------------
class Listener:
    """An attacker's server on 127.0.0.1: records every request (any method), answers 200 '{}'."""

    def __init__(self) -> None:
        self.requests: List[Tuple[str, str, Dict[str, str], bytes]] = []
        outer = self

        class _H(BaseHTTPRequestHandler):
            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                outer.requests.append((self.command, self.path, dict(self.headers.items()), body))
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = do_PUT = do_HEAD = do_DELETE = do_PATCH = do_OPTIONS = _any  # noqa: N815

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _H)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/collect"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="module")
def team(browser, postgres_server, tmp_path_factory) -> Iterator[Dict[str, Any]]:
    """The team-mode dashboard and everything around it, for this module."""
    from openai_server import ChatServer
    from pgserver import fresh_database
    from target_server import TargetServer

    expect.set_options(timeout=60_000)  # this shared machine can take far more than the default 5 s inside the full suite to draw a page
    folder = tmp_path_factory.mktemp("team")
    history = fresh_database(postgres_server, "team_browser")
    listener = Listener()
    target = TargetServer(lambda body: (200, {"answer": "Day passes cost 9 euros.",
                                              "contexts": ["A day pass costs 9 euros."]}))
    with ChatServer() as judge, target:
        config = write_team(folder, history=history, user_header=HEADER, max_upload_mb=5,
                            evaluators=[EVALUATOR, ADMIN], admins=[ADMIN],
                            judges=[team_judge(judge.base_url, model="team-model", api_key_env="OPENAI_API_KEY",
                                               max_workers=2)],
                            targets={"allow": [target.url], "allow_env": ["RAG_TOKEN"]})
        log = folder / "server.log"
        # users reach the dashboard through the sign-in proxy only, as deployed
        with team_dashboard(config, log, OPENAI_API_KEY=KEY_CANARY, AWS_SECRET_ACCESS_KEY=VAR_CANARY,
                            RAG_TOKEN=RAG_TOKEN) as server:
            yield {"url": server.url, "direct": server.direct, "history": history, "listener": listener,
                   "judge": judge, "target": target, "log": log, "folder": folder}
    listener.close()
    expect.set_options(timeout=5_000)


@pytest.fixture
def as_user(team, signed_in_page):
    """`as_user(name)`: a new page signed in as `name` through the team's proxy (None: an unknown user)."""
    return lambda name: signed_in_page(team["url"], name)


def seed_run(history: str, dataset: str, *, owner: str = CI_USER) -> str:
    """A finished three-row run written straight into the history, as a CI job would."""
    store = RunStore(history)
    samples = [EvalSample(f"Which desk handles case {i}?", f"Desk {i}.", [f"Case {i} goes to desk {i}."],
                          ground_truth=f"Desk {i}.", sample_id=f"s{i}") for i in range(3)]
    run_id = store.create_run(dataset_name=dataset, samples=samples, settings={"judge": "offline"}, owner=owner)
    from evaluator import OfflineJudge, RAGEvaluator
    results: List[EvalResult] = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results
    store.record_results(run_id, list(enumerate(results)))
    store.finish_run(run_id)
    return run_id


def open_page(page: Page, url: str, path: str, expected: Any) -> None:
    """Go to `path` and wait until `expected` (a locator) shows and the script run is over."""
    page.goto(url + path)
    expect(expected).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)


def signed_in(page: Page, name: str):
    return page.get_by_test_id("stSidebar").get_by_text(re.compile(rf"Signed in as {re.escape(name)}"))


def pick(page: Page, label: str, option: str) -> None:
    """Choose `option` in the selectbox labelled `label`."""
    choose(page, page.get_by_role("combobox", name=label, exact=True), page.get_by_role("option", name=option))


def selected_run(page: Page):
    """The History page's "Run" selectbox (its value is the run's label, which ends with its id)."""
    return page.get_by_role("combobox", name="Run", exact=True)


def button(page: Page, label: str):
    """A button by its label (its icon, when it has one, comes first in its accessible name)."""
    return page.get_by_role("button", name=re.compile(rf"(^|\s){re.escape(label)}$"))


# --- roles ---------------------------------------------------------------------------------------
def test_an_unknown_user_sees_only_the_sign_in_message_on_every_page(team, as_user):
    run_id = seed_run(team["history"], "unknown-user-must-not-see.csv")
    page = as_user(None)
    for path in [*PAGES.values(), f"/report?run={run_id}", f"/history?compare={run_id},{run_id}"]:
        open_page(page, team["url"], path, page.get_by_text(SIGN_IN))
        body = main(page)
        expect(body.locator("input, textarea, button, [data-testid='stFileUploader']")).to_have_count(0)
        expect(page.get_by_test_id("stSidebar").locator("input, textarea")).to_have_count(0)
        text = page.inner_text("body")
        assert "unknown-user-must-not-see" not in text and run_id not in text, path


def test_a_viewer_opens_reports_and_history_but_cannot_upload_run_rename_or_delete(team, as_user):
    run_id = seed_run(team["history"], "viewer-can-read.csv")
    page = as_user(VIEWER)
    open_page(page, team["url"], "/history", signed_in(page, f"{VIEWER} (viewer)"))
    expect(selected_run(page)).to_have_value(re.compile(run_id))
    for absent in ("Rename", "Delete run", "Resume run"):
        expect(button(page, absent)).to_have_count(0)
    expect(page.get_by_role("textbox", name="Name")).to_have_count(0)
    expect(page.get_by_text("Re-score with another judge")).to_have_count(0)
    button(page, "Open in report").click()
    expect(main(page).get_by_text(run_id).first).to_be_visible(timeout=RUN_TIMEOUT)
    expect(main(page).get_by_text("viewer-can-read.csv").first).to_be_visible()
    open_page(page, team["url"], PAGES["Monitor"], main(page).get_by_text("No production traces yet"))  # may view
    for title in ("Evaluate", "Spot check", "Generate"):  # the role note, and no control at all
        open_page(page, team["url"], PAGES[title], main(page).get_by_text(NO_ROLE))
        expect(main(page).locator("input, textarea, button, [data-testid='stFileUploader']")).to_have_count(0)


def test_an_evaluator_runs_and_a_second_user_opens_the_share_link(team, as_user):
    page = as_user(EVALUATOR)
    open_page(page, team["url"], "/", button(page, "Run evaluation"))
    expect(signed_in(page, f"{EVALUATOR} (evaluator)")).to_be_visible()
    page.get_by_role("textbox", name="Project").fill("team-browser-project")
    page.get_by_role("textbox", name="Project").press("Enter")
    wait_idle(page)
    button(page, "Run evaluation").click()
    expect(button(page, "Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    runs = RunStore(team["history"]).list_runs(owner=EVALUATOR, project="team-browser-project")
    assert len(runs) == 1 and runs[0].status == "finished" and runs[0].n_done == runs[0].n_samples > 0
    run_id = runs[0].run_id

    button(page, "Open report").click()
    expect(main(page).get_by_text(run_id).first).to_be_visible(timeout=RUN_TIMEOUT)
    button(page, "Copy link").click()
    link = page.locator('[data-testid="stCode"]').filter(has_text="/report?run=").first.inner_text().strip()
    assert link == f"{team['url']}/report?run={run_id}"

    other = as_user(VIEWER)  # another person, in another browser, opens the link straight away
    open_page(other, "", link, main(other).get_by_text(run_id).first)
    expect(signed_in(other, VIEWER)).to_be_visible()
    expect(main(other).get_by_text(runs[0].dataset_name).first).to_be_visible()
    expect(other.locator('[data-testid="stMetric"]').first).to_be_visible()

    # the History page filters by owner and by project
    open_page(other, team["url"], "/history", selected_run(other))
    pick(other, "Owner", EVALUATOR)
    pick(other, "Project", "team-browser-project")
    expect(selected_run(other)).to_have_value(re.compile(run_id))
    open_list(other, selected_run(other))
    expect(other.get_by_role("option")).to_have_count(1)  # that owner's runs of that project: this one
    other.keyboard.press("Escape")


def open_list(page: Page, combo) -> None:
    """Open the selectbox `combo`'s list, again if a late rerun (the History page's trend chart) closed it."""
    for _ in range(4):
        wait_idle(page)
        combo.focus()
        page.keyboard.press("ArrowDown")
        try:
            page.get_by_role("option").first.wait_for(state="visible", timeout=3_000)
            return
        except PlaywrightTimeoutError:
            page.keyboard.press("Escape")


def test_an_admin_renames_and_deletes_a_run(team, as_user):
    run_id = seed_run(team["history"], "admin-manages.csv")  # the newest run: the one History selects
    page = as_user(ADMIN)
    open_page(page, team["url"], "/history", signed_in(page, f"{ADMIN} (admin)"))
    expect(selected_run(page)).to_have_value(re.compile(run_id))
    commit(page.get_by_role("textbox", name="Name", exact=True), "renamed by the admin")
    button(page, "Rename").click()
    wait_idle(page)
    expect(selected_run(page)).to_be_visible()
    for _ in range(60):  # the rename's rerun may still be on its way on a loaded runner
        if RunStore(team["history"]).get_run(run_id).name == "renamed by the admin":
            break
        page.wait_for_timeout(500)
    assert RunStore(team["history"]).get_run(run_id).name == "renamed by the admin"
    # A fresh visit lists it under its new name. (The open page's "Run" box keeps showing the old label
    # after the rename's rerun: a stale-label quirk noted for the History page, not asserted here.)
    open_page(page, team["url"], "/history", selected_run(page))
    expect(selected_run(page)).to_have_value(re.compile("^renamed by the admin"))
    button(page, "Delete run").click()
    button(page, "Yes, delete").click()
    expect(page.get_by_role("button", name="Yes, delete")).to_have_count(0)  # the delete's rerun is over
    wait_idle(page)
    assert run_id not in {r.run_id for r in RunStore(team["history"]).list_runs()}


def test_an_evaluator_cannot_rename_or_delete(team, as_user):
    run_id = seed_run(team["history"], "evaluator-cannot-delete.csv")
    page = as_user(EVALUATOR)
    open_page(page, team["url"], "/history", selected_run(page))
    expect(selected_run(page)).to_have_value(re.compile(run_id))
    # Resume and re-score belong to a run's owner and admins (evaluator/team/access.py): not CI's run.
    expect(page.get_by_text("Re-score with another judge")).to_have_count(0)
    for absent in ("Rename", "Delete run"):
        expect(button(page, absent)).to_have_count(0)
    expect(page.get_by_role("textbox", name="Name")).to_have_count(0)


# --- secrets and paths -----------------------------------------------------------------------------
# Selectboxes are <input role="combobox">: not text fields.
TEXT_FIELDS = "input[type='text']:not([role='combobox']), input[type='password'], textarea"
FIELDS_AT_LEAST = {"Evaluate": 7, "Report": 1, "Spot check": 4, "Generate": 0, "History": 0}  # what each page offers
ACTIONS = ("Add rubric", "Test target", "Run evaluation", "Score this sample", "Generate", "Compare runs")


def type_everywhere(page: Page, value: str, lines: str) -> int:
    """Type `value` into every text field the page shows (textareas get `lines`), committing each one;
    then press every action button that is enabled. Fields that appear on the way are typed too."""
    done: set = set()  # each field once: a form's fields (the rubric form) clear themselves when submitted
    while True:
        fields = page.locator(f"[data-testid='stMainBlockContainer'] :is({TEXT_FIELDS}), "
                              f"[data-testid='stSidebar'] :is({TEXT_FIELDS})")
        todo = [(f, name) for f in fields.all() if f.is_visible() and f.is_editable()
                for name in [f.get_attribute("aria-label") or f.evaluate("e => e.outerHTML.slice(0, 200)")]
                if name not in done]
        if not todo:
            break
        field, name = todo[0]
        commit(field, lines if field.evaluate("e => e.tagName") == "TEXTAREA" else value)
        done.add(name)
        assert len(done) < 40, "the page keeps offering new fields"
    for name in ACTIONS:
        press(page, button(page, name))
    return len(done)


def press(page: Page, action) -> None:
    """Click `action` if the page shows it enabled. A submitted form can redraw its expander closed (its
    label counts rubrics), even between our look and our click: then open it again and retry."""
    for _ in range(3):
        if not action.count():
            return
        if not action.first.is_visible():
            wait_idle(page)
            open_expanders(page)
        if not action.first.is_enabled():
            return
        try:
            action.first.click(timeout=10_000)
            break
        except PlaywrightTimeoutError:
            wait_idle(page)
    else:
        action.first.click()  # a last try, with the page's own timeout and error
    wait_idle(page)


def commit(field, value: str) -> None:
    """Type `value` into a text field or area and send it to the app."""
    field.fill(value)
    field.press("Control+Enter" if field.evaluate("e => e.tagName") == "TEXTAREA" else "Enter")
    wait_idle(field.page)


def downloaded(page: Page, label: str) -> Path:
    """The file the download button `label` gives. Clicked once the page is idle, and once more if the
    first click met a rerun still replacing the page's deferred files (that download never starts)."""
    for attempt in range(2):
        wait_idle(page)
        try:
            with page.expect_download(timeout=30_000 if attempt == 0 else 60_000) as download:
                button(page, label).click()
            return Path(download.value.path())
        except PlaywrightTimeoutError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def no_canary(text: str, where: str) -> None:
    assert KEY_CANARY not in text and VAR_CANARY not in text, f"a canary reached {where}"


def open_expanders(page: Page) -> None:
    for summary in main(page).locator("[data-testid='stExpander'] summary").all():
        if summary.is_visible() and summary.locator("xpath=..").get_attribute("open") is None:
            summary.click()
            wait_idle(page)


def questions_csv(folder: Path) -> Path:
    path = folder / "team_questions.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["id", "question", "ground_truth"])
        writer.writerow(["q1", "How much does a day pass cost?", "9 euros"])
        writer.writerow(["q2", "What does a day pass cost for a child?", "9 euros"])
    return path


def test_no_page_sends_the_servers_secrets_anywhere_or_writes_a_typed_path(team, as_user):
    listener, judge, target = team["listener"], team["judge"], team["target"]
    evil = team["folder"] / "typed" / "evil.pth"
    leak_lines = f"X-Leak: ${{AWS_SECRET_ACCESS_KEY}}\nX-Key: ${{OPENAI_API_KEY}}\nX-Url: {listener.url}"
    page = as_user(EVALUATOR)
    seen: List[str] = []

    def everything(title: str, value: str) -> None:
        typed = type_everywhere(page, value, leak_lines if value == listener.url else value)
        assert typed >= FIELDS_AT_LEAST[title], f"{title}: only {typed} text fields found"
        for label in ("Base URL", "API key", "History database"):  # team mode has no such field
            expect(page.get_by_role("textbox", name=label), f"{label} on {title}").to_have_count(0)
        seen.append(page.inner_text("body"))
        seen.append(page.content())

    # Evaluate, answers from the user's pipeline: every field, then once more with a path
    open_page(page, team["url"], "/", button(page, "Run evaluation"))
    page.locator('[data-testid="stRadioOption"]').filter(has_text="call my pipeline (HTTP endpoint)").click()
    wait_idle(page)
    upload(page, questions_csv(team["folder"]))
    open_expanders(page)
    for value in (listener.url, str(evil)):
        everything("Evaluate", value)
    # the same page used as intended: the allowed target, the team judge
    for label, value in (("Body template", DEFAULT_BODY), ("Answer path", ""), ("Contexts path", ""),
                         ("Tool calls path", ""), ("Project", ""), ("Endpoint URL", target.url)):
        commit(page.get_by_role("textbox", name=label), value)
    # a refused variable says "not allowed here", the same words whether it is set or not
    refusals = []
    for name in ("AWS_SECRET_ACCESS_KEY", "RAGMETER_TEST_UNSET_VARIABLE"):
        commit(page.get_by_role("textbox", name="Headers"), f"X-Leak: ${{{name}}}")
        refusal = main(page).get_by_text(re.compile("not allowed here")).first
        expect(refusal).to_be_visible()
        said = refusal.inner_text().replace("\u2060", "")
        refusals.append(re.sub(r"\$\{[A-Za-z_][A-Za-z0-9_]*\}", "${VAR}", said))  # only the name may differ
    assert refusals[0] == refusals[1] and "not set" not in refusals[0]
    commit(page.get_by_role("textbox", name="Headers"), "X-Ok: ${RAG_TOKEN}")
    pick(page, "Judge", "team judge")
    button(page, "Run evaluation").click()
    expect(button(page, "Open report")).to_be_visible(timeout=RUN_TIMEOUT)
    seen.append(page.content())
    assert target.requests and all(h.get("x-ok") == RAG_TOKEN for _, h, _ in target.requests)
    assert judge.chat_requests and all(r.headers.get("authorization") == f"Bearer {KEY_CANARY}"
                                       for r in judge.chat_requests)  # the key goes to its own judge only

    # the Report: its search field, and every export
    button(page, "Open report").click()
    expect(button(page, "Download CSV")).to_be_visible(timeout=RUN_TIMEOUT)
    for value in (listener.url, str(evil)):
        everything("Report", value)
    for label in ("Download CSV", "Download JSON", "Download HTML report"):
        no_canary(downloaded(page, label).read_text(encoding="utf-8"), label)

    # every other page
    for title in ("Spot check", "Generate", "History"):
        drawn = {"Spot check": page.get_by_role("textbox", name="Question"),
                 "History": button(page, "Open in report")}.get(title, page.get_by_role("heading", name=re.compile(title)))
        open_page(page, team["url"], PAGES[title], drawn)
        if title == "Generate":
            expect(page.get_by_text("A folder on this computer")).to_have_count(0)  # no server path in team mode
        open_expanders(page)
        for value in (listener.url, str(evil)):
            everything(title, value)

    assert listener.requests == [], f"the listener was called: {listener.requests[:3]}"
    assert not evil.exists() and not evil.parent.exists(), "a typed path created a file"
    for text in seen:
        no_canary(text, "a page")
    for recorded in (*[json.dumps(r.body) + str(r.headers) for r in judge.chat_requests],
                     *[str(h) + json.dumps(b) for _, h, b in target.requests]):
        assert VAR_CANARY not in recorded, "a server variable reached a judge or target"
    no_canary(team["log"].read_text(encoding="utf-8", errors="replace"), "the server log")
    no_canary(history_dump(team["history"]), "the history")


def history_dump(url: str) -> str:
    """Every row of every table of the history database, as text."""
    import psycopg

    with psycopg.connect(url) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")]
        assert "runs" in tables
        return "\n".join(str(row) for t in tables for row in conn.execute(f'SELECT * FROM "{t}"'))
