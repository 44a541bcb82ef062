"""Team mode's identity, authorisation and upload guard in real Chromium against the real
`streamlit run app.py` (issue 27 §2–4). Two servers, each with its own team.toml and SQLite history:

- "local": listens on 127.0.0.1 with no trusted_proxies, so every connection comes from its own
  machine (the proxy's); the browser sends the proxy's header itself (`extra_http_headers`);
- "remote": trusted_proxies = 10.9.9.0/24, so a header from 127.0.0.1 (not the proxy) is forged.

Checked: a forged header signs nobody in; "ALICE@Example.COM" is alice's admin account; a Cyrillic
look-alike of her address is refused with a reason; a viewer sees no save on Review and no sample run
on the Report; an evaluator sees no Resume or Re-score on another's run but does on their own; an
upload PUT from a session nobody signed into is refused (400) while an evaluator's is accepted.
"""
from __future__ import annotations

import os
import re
from typing import Any, Dict, Iterator

import pytest

try:
    from playwright.sync_api import Page, expect
except ImportError:  # the conftest's fixtures skip or fail
    pass

from evaluator.model import EvalResult, EvalSample
from evaluator.store.history import RunStore

from .conftest import VIEWPORT, serve_app
from .test_dashboard import RUN_TIMEOUT, main, wait_idle

pytestmark = pytest.mark.browser

HEADER = "X-Forwarded-Email"
ADMIN, EVALUATOR, OTHER, VIEWER = "alice@example.com", "eve@example.com", "ed@example.com", "vera@example.com"
SIGN_IN = "Sign in through your organisation's single sign-on"
TEAM_TOML = """
[server]
shared = true
auth = "proxy"
user_header = "{header}"
history = "{history}"
max_upload_mb = 5
{extra}
[roles]
viewers = ["*"]
evaluators = ["{evaluator}", "{other}", "{admin}"]
admins = ["{admin}"]
"""


def _server(tmp_path_factory: Any, name: str, extra: str) -> Iterator[Dict[str, Any]]:
    folder = tmp_path_factory.mktemp(name)
    history = folder / "history.sqlite3"
    config = folder / "team.toml"
    config.write_text(TEAM_TOML.format(header=HEADER, history=history, extra=extra, evaluator=EVALUATOR,
                                       other=OTHER, admin=ADMIN))
    env = {**os.environ, "RAGMETER_CONFIG": str(config), "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "5"}
    env.pop("RAGMETER_HISTORY", None)
    with serve_app(env, folder / "server.log") as url:
        yield {"url": url, "history": str(history)}


@pytest.fixture(scope="module")
def local(browser, tmp_path_factory) -> Iterator[Dict[str, Any]]:
    expect.set_options(timeout=60_000)
    yield from _server(tmp_path_factory, "local", "")


@pytest.fixture(scope="module")
def remote(browser, tmp_path_factory) -> Iterator[Dict[str, Any]]:
    yield from _server(tmp_path_factory, "remote", 'trusted_proxies = ["10.9.9.0/24"]')


@pytest.fixture
def as_user(browser):
    """`as_user(name)`: a page whose every request carries the proxy header naming `name` (None: no header)."""
    contexts = []

    def open_page(name: str | None) -> Page:
        context = browser.new_context(viewport=VIEWPORT, extra_http_headers={HEADER: name} if name else {})
        context.set_default_timeout(60_000)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def seed_run(history: str, owner: str, *, stopped: bool = False) -> str:
    """A three-row run owned by `owner`, finished (or stopped after one row), written as a CI job would."""
    from evaluator import OfflineJudge, RAGEvaluator

    store = RunStore(history)
    samples = [EvalSample(f"Which desk handles case {i}?", f"Desk {i}.", [f"Case {i} goes to desk {i}."],
                          sample_id=f"s{i}") for i in range(3)]
    run_id = store.create_run(dataset_name=f"{owner}-desks.csv", samples=samples, settings={"judge": "offline"},
                              owner=owner)
    results: list[EvalResult] = RAGEvaluator(OfflineJudge()).evaluate_dataset(samples).results
    store.record_results(run_id, list(enumerate(results[:1] if stopped else results)))
    store.finish_run(run_id, status="stopped" if stopped else "finished")
    return run_id


def open_page(page: Page, url: str, path: str, expected: Any) -> None:
    page.goto(url + path)
    expect(expected).to_be_visible(timeout=RUN_TIMEOUT)
    wait_idle(page)


def signed_in(page: Page, text: str):
    return page.get_by_test_id("stSidebar").get_by_text(f"Signed in as {text}")


def button(page: Page, label: str):
    return page.get_by_role("button", name=re.compile(rf"(^|\s){re.escape(label)}$"))


def pick_run(page: Page, run_id: str) -> None:
    page.get_by_role("combobox", name="Run", exact=True).click()
    page.get_by_role("option", name=re.compile(re.escape(run_id))).click()
    wait_idle(page)


# --- identity --------------------------------------------------------------------------------------
def test_a_header_from_a_peer_that_is_not_a_trusted_proxy_signs_nobody_in(remote, as_user):
    page = as_user(ADMIN)  # sent straight from 127.0.0.1, which is not in trusted_proxies
    open_page(page, remote["url"], "/history", page.get_by_text(SIGN_IN))
    expect(main(page).locator("input, textarea, button")).to_have_count(0)
    assert ADMIN not in page.inner_text("body")


def test_one_person_whatever_the_case_and_a_look_alike_is_refused(local, as_user):
    page = as_user("ALICE@Example.COM")
    open_page(page, local["url"], "/history", signed_in(page, f"{ADMIN} (admin)"))
    fake = as_user("\u0430lice@example.com")  # a Cyrillic "а" in front of "lice@example.com"
    open_page(fake, local["url"], "/history", fake.get_by_text(SIGN_IN))
    expect(fake.get_by_text(re.compile("mixes letters of several scripts"))).to_be_visible()
    expect(fake.get_by_text(re.compile("Signed in as"))).to_have_count(0)


# --- one authorisation check at every write --------------------------------------------------------
def test_a_viewer_sees_no_review_save_and_no_sample_run(local, as_user):
    seed_run(local["history"], OTHER)
    page = as_user(VIEWER)
    open_page(page, local["url"], "/review", signed_in(page, f"{VIEWER} (viewer)"))
    expect(main(page).get_by_text("Your role lets you read reviews, not save them")).to_be_visible()
    for absent in ("Save and next", "Agree with all and next"):
        expect(button(page, absent)).to_have_count(0)
    open_page(page, local["url"], "/report", main(page).get_by_text(re.compile("No report yet")))
    expect(button(page, "Run the sample data offline")).to_have_count(0)


def test_resume_and_rescore_belong_to_the_runs_owner_and_admins(local, as_user):
    others = seed_run(local["history"], OTHER, stopped=True)
    mine = seed_run(local["history"], EVALUATOR, stopped=True)
    page = as_user(EVALUATOR)
    open_page(page, local["url"], "/history", signed_in(page, f"{EVALUATOR} (evaluator)"))
    pick_run(page, others)
    expect(button(page, "Open in report")).to_be_visible()
    expect(button(page, "Resume run")).to_have_count(0)
    expect(page.get_by_text("Re-score with another judge")).to_have_count(0)
    pick_run(page, mine)
    expect(button(page, "Resume run")).to_be_visible()
    expect(page.get_by_text("Re-score with another judge")).to_be_visible()
    admin = as_user(ADMIN)
    open_page(admin, local["url"], "/history", signed_in(admin, f"{ADMIN} (admin)"))
    pick_run(admin, others)
    expect(button(admin, "Resume run")).to_be_visible()


# --- uploads need a signed-in evaluator ------------------------------------------------------------
UPLOAD_JS = """async () => {
  const cookie = document.cookie.split('; ').find(c => c.startsWith('_streamlit_xsrf='));
  const xsrf = cookie ? decodeURIComponent(cookie.split('=').slice(1).join('=')) : '';
  const form = new FormData();
  form.append('file', new Blob(['question,answer\\nq?,a.\\n'], {type: 'text/csv'}), 'probe.csv');
  const r = await fetch('/_stcore/upload_file/' + window.__ragmeterSession + '/probe-file',
                        {method: 'PUT', body: form, headers: {'X-Xsrftoken': xsrf}, credentials: 'same-origin'});
  return r.status;
}"""
SESSION_ID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def upload_status(page: Page, url: str, expected: Any) -> int:
    """Open the app, learn this tab's session id from the server's first websocket message, then PUT
    a file to the upload route the way Streamlit's own uploader does."""
    seen: list[bytes] = []
    page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: seen.append(
        payload if isinstance(payload, bytes) else payload.encode())))
    open_page(page, url, "/", expected)
    ids = [m.group(0).decode() for frame in seen for m in SESSION_ID.finditer(frame)]
    assert ids, "the server's new-session message names the session"
    page.evaluate(f"window.__ragmeterSession = {ids[0]!r}")
    return int(page.evaluate(UPLOAD_JS))


def test_an_upload_from_a_session_nobody_signed_into_is_refused(local, as_user):
    stranger = as_user(None)
    assert upload_status(stranger, local["url"], stranger.get_by_text(SIGN_IN)) == 400
    viewer = as_user(VIEWER)
    assert upload_status(viewer, local["url"], signed_in(viewer, f"{VIEWER} (viewer)")) == 400
    evaluator = as_user(EVALUATOR)  # the same request from an evaluator's session is stored
    assert upload_status(evaluator, local["url"], button(evaluator, "Run evaluation")) in (200, 204)
